import { InputError } from '@backstage/errors';
import Ajv2020, {
  type ErrorObject,
  type ValidateFunction,
} from 'ajv/dist/2020';
import { spec } from '../schema/openapi';

/**
 * Request validation by the OpenAPI spec (src/schema/openapi.yaml), the one hand-written
 * contract: each operation's request body schema and query parameters, compiled once with ajv
 * (the validator the openapi router's own middleware, express-openapi-validator, uses).
 *
 * Why not the openapi router's middleware itself: it runs in front of every route, before the
 * route knows the caller's permission, so a caller who may not write would learn the schema from
 * a 400 where they must get a 403 (authorization comes before validation: a write's permission
 * often depends on the component the body names, or on the stored resource the path names). Its
 * error handler also turns every error passing it, a 401 or a 413 included, into a 400. So the
 * routes validate here, right after their permission check; a change to a request schema in the
 * spec is still all it takes to change what the API accepts.
 *
 * Messages: `Invalid <what>: <field>: <what is wrong>`, the field a dotted path
 * (`spec.tolerations.0.key`). A schema's `x-message` says what its value must be in the caller's
 * words, and replaces ajv's text for every failure of that schema but a missing or unknown
 * property (which are the enclosing object's).
 */

type Method = 'get' | 'post' | 'patch' | 'delete';

type ParameterObject = {
  name: string;
  in: string;
  required?: boolean;
  schema?: unknown;
};
type OperationObject = {
  parameters?: Array<ParameterObject | { $ref: string }>;
  requestBody?: { content: Record<string, { schema: unknown }> };
  /** Unknown query parameters are refused (rather than ignored) by this operation. */
  'x-strict-query'?: boolean;
};
type Doc = {
  paths: Record<string, Partial<Record<Method, OperationObject>>>;
  components: { parameters: Record<string, ParameterObject> };
};

const doc = spec as unknown as Doc;
const SPEC_ID = 'fleet';

/** A JSON pointer into the spec, of these parts. */
const pointer = (...parts: string[]) =>
  `${SPEC_ID}#/${parts
    .map(p => p.replace(/~/g, '~0').replace(/\//g, '~1'))
    .join('/')}`;

const ajv = new Ajv2020({
  // The spec's own keywords (description, example, x-…) are not JSON Schema's.
  strict: false,
  // Every problem at once, as the caller would otherwise fix them one request at a time.
  allErrors: true,
  // parentSchema on each error: the x-message of the schema that failed.
  verbose: true,
  // Lengths in UTF-16 units, as JavaScript's (and zod's) .length counts them: a limit means the
  // same whichever characters the text holds.
  unicode: false,
});
ajv.addSchema({ ...(doc as object), $id: SPEC_ID });

/** The spec's schemas of one operation's request, compiled on first use. */
type OperationValidators = {
  query: ValidateFunction;
  body?: ValidateFunction;
};

const compiled = new Map<string, OperationValidators>();

function resolveParameter(parameter: ParameterObject | { $ref: string }): {
  parameter: ParameterObject;
  at: string;
} {
  if ('$ref' in parameter) {
    const name = parameter.$ref.replace('#/components/parameters/', '');
    return {
      parameter: doc.components.parameters[name],
      at: pointer('components', 'parameters', name),
    };
  }
  return { parameter, at: '' };
}

function validatorsOf(method: Method, path: string): OperationValidators {
  const key = `${method} ${path}`;
  const known = compiled.get(key);
  if (known) return known;
  const operation = doc.paths[path]?.[method];
  if (!operation) throw new Error(`The spec has no operation ${key}`);

  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  (operation.parameters ?? []).forEach((raw, index) => {
    const { parameter, at } = resolveParameter(raw);
    if (parameter.in !== 'query') return;
    properties[parameter.name] = {
      $ref: at
        ? `${at}/schema`
        : pointer('paths', path, method, 'parameters', String(index), 'schema'),
    };
    if (parameter.required) required.push(parameter.name);
  });
  const validators: OperationValidators = {
    query: ajv.compile({
      type: 'object',
      properties,
      required,
      ...(operation['x-strict-query'] ? { additionalProperties: false } : {}),
    }),
    body: operation.requestBody
      ? ajv.compile({
          $ref: pointer(
            'paths',
            path,
            method,
            'requestBody',
            'content',
            'application/json',
            'schema',
          ),
        })
      : undefined,
  };
  compiled.set(key, validators);
  return validators;
}

/** `/spec/tolerations/0` → `spec.tolerations.0`. */
const dotted = (instancePath: string) =>
  instancePath
    .split('/')
    .slice(1)
    .map(part => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');

const join = (...parts: string[]) => parts.filter(Boolean).join('.');

/** One failure in the caller's words, or undefined when another failure says it. */
function describe(error: ErrorObject, what: string): string | undefined {
  const at = dotted(error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${join(at, String(params.missingProperty))}: is required`;
    case 'additionalProperties':
      return `${at || what}: unknown field '${String(
        params.additionalProperty,
      )}'`;
    case 'propertyNames':
      // The failure of the name itself is another error (with the name in its propertyName).
      return undefined;
    default: {
      const custom = (error.parentSchema as { 'x-message'?: string })?.[
        'x-message'
      ];
      const name = (error as { propertyName?: string }).propertyName;
      const field = name === undefined ? at : join(at, name);
      return `${field || what}: ${custom ?? error.message}`;
    }
  }
}

const within = (path: string, base: string) =>
  path === base || path.startsWith(`${base}/`);

/**
 * The failures worth saying. ajv reports an anyOf or oneOf that failed after the failures of
 * its branches (at its value or below): failures at the value itself say only that a branch
 * was of another shape; failures deeper say what is wrong in the branch of the right shape. So
 * the deeper ones are kept, or when there are none, the anyOf's own message.
 */
function worthSaying(errors: ErrorObject[]): ErrorObject[] {
  const out: ErrorObject[] = [];
  for (const error of errors) {
    if (error.keyword !== 'anyOf' && error.keyword !== 'oneOf') {
      out.push(error);
      continue;
    }
    const branches: ErrorObject[] = [];
    while (
      out.length > 0 &&
      within(out[out.length - 1].instancePath, error.instancePath)
    ) {
      branches.unshift(out.pop()!);
    }
    const deeper = branches.filter(
      e => e.instancePath.length > error.instancePath.length,
    );
    out.push(...(deeper.length > 0 ? deeper : [error]));
  }
  return out;
}

function describeAll(errors: ErrorObject[], what: string): string {
  const said = worthSaying(errors)
    .map(e => describe(e, what))
    .filter((m): m is string => m !== undefined);
  return [...new Set(said)].join('; ');
}

function check(validate: ValidateFunction, value: unknown, what: string): void {
  if (validate(value)) return;
  throw new InputError(
    `Invalid ${what}: ${describeAll(validate.errors ?? [], what)}`,
  );
}

/**
 * Checks a request's query parameters against the spec's operation (`'get', '/clusters'`):
 * a 400 naming each parameter that is wrong.
 */
export function checkQuery(method: Method, path: string, query: unknown): void {
  check(validatorsOf(method, path).query, query ?? {}, 'query');
}

/**
 * Checks a request body against the spec's operation (`'post', '/clusters'`), after the
 * caller's permission was checked: a 400 that says, in `what`'s words, each field that is wrong.
 */
export function checkBody(
  method: Method,
  path: string,
  body: unknown,
  what: string,
): void {
  const { body: validate } = validatorsOf(method, path);
  if (!validate)
    throw new Error(`The spec has no request body for ${method} ${path}`);
  check(validate, body, what);
}

const byPointer = new Map<string, ValidateFunction>();

function compiledAt(at: string): ValidateFunction {
  let validate = byPointer.get(at);
  if (!validate) {
    validate = ajv.compile({ $ref: at });
    byPointer.set(at, validate);
  }
  return validate;
}

/** Whether `value` is what the spec's schema of this name (`#/components/schemas/…`) accepts. */
export function isSchema(schemaName: string, value: unknown): boolean {
  return compiledAt(pointer('components', 'schemas', schemaName))(
    value,
  ) as boolean;
}

/** Whether `value` is what the spec's path parameter of this name (`#/components/parameters/…`) accepts. */
export function isPathParameter(parameterName: string, value: string): boolean {
  return compiledAt(
    pointer('components', 'parameters', parameterName, 'schema'),
  )(value) as boolean;
}
