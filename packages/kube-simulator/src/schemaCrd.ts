/**
 * The schema of the custom resources (Argo Rollouts' Rollout, AnalysisTemplate, AnalysisRun;
 * Istio's VirtualService, DestinationRule; Gateway API's HTTPRoute): the official CRD documents under `crds/` (see its
 * README for their source and version), read once on first use. As the API server does with a
 * structural schema: fields the schema does not declare are unknown (dropped, unless the schema
 * preserves unknown fields there), `null` is dropped where the schema is not `nullable`,
 * `metadata` is checked as an ObjectMeta, and the rest (types, enums, bounds, patterns,
 * required fields) is checked by ajv against the version's `openAPIV3Schema`.
 *
 * Translated for ajv: `nullable` allows null; `x-kubernetes-int-or-string` takes an integer or
 * a string. Not checked: `x-kubernetes-validations` (CEL rules), `x-kubernetes-list-type` and
 * `x-kubernetes-list-map-keys` (uniqueness of list items and map keys), and `format` (ajv's
 * formats differ from the API server's). The Rollout CRD describes `spec.template` in full (it
 * does not preserve unknown fields there), so a Rollout's pod template is checked by it too.
 */
import fs from 'node:fs';
import path from 'node:path';
import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import { parseAllDocuments } from 'yaml';
import { cause, StatusCause } from './errors';
import { checkCoreValue, SchemaFindings } from './schemaCore';
import { isPlainObject, JsonObject } from './util';

type Schema = JsonObject;

/** The file each kind's CRD is in. */
const CRD_FILES: Record<string, string> = {
  Rollout: 'rollout-crd.yaml',
  AnalysisTemplate: 'analysis-template-crd.yaml',
  AnalysisRun: 'analysis-run-crd.yaml',
  VirtualService: 'istio-networking-crds.yaml',
  DestinationRule: 'istio-networking-crds.yaml',
  HTTPRoute: 'gateway-api-httproutes-crd.yaml',
};

interface CrdVersion {
  schema: Schema;
  validate?: ValidateFunction;
}

/** `<group>/<version>/<Kind>` -> that version's schema, each file read once, on first use. */
const versions = new Map<string, CrdVersion>();
const filesRead = new Set<string>();

function crdVersion(
  group: string,
  version: string,
  kind: string,
): CrdVersion | undefined {
  const file = CRD_FILES[kind];
  if (file && !filesRead.has(file)) {
    filesRead.add(file);
    // The package's own folder (`crds` ships with it), wherever it is installed or built to.
    const dir = path.join(
      path.dirname(require.resolve('@cnp/kube-simulator/package.json')),
      'crds',
    );
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    for (const doc of parseAllDocuments(text)) {
      const spec = (doc.toJS() as JsonObject).spec as JsonObject;
      const names = spec.names as JsonObject;
      for (const v of spec.versions as JsonObject[]) {
        const schema = (v.schema as JsonObject).openAPIV3Schema as Schema;
        versions.set(`${spec.group}/${v.name}/${names.kind}`, { schema });
      }
    }
  }
  return versions.get(`${group}/${version}/${kind}`);
}

/** The CRD schema in ajv's dialect: nullable and int-or-string spelled out. */
function forAjv(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(forAjv);
  if (!isPlainObject(schema)) return schema;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'enum' || key === 'default' || key === 'example')
      out[key] = value;
    else if (key === 'properties' && isPlainObject(value))
      out[key] = Object.fromEntries(
        Object.entries(value).map(([k, v]) => [k, forAjv(v)]),
      );
    else if (!key.startsWith('x-kubernetes-') && key !== 'nullable')
      out[key] = forAjv(value);
  }
  if (schema['x-kubernetes-int-or-string']) {
    delete out.type;
    delete out.anyOf;
    out.anyOf = [{ type: 'integer' }, { type: 'string' }];
  }
  if (schema.nullable === true) {
    if (typeof out.type === 'string') out.type = [out.type, 'null'];
    if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
  }
  return out;
}

const ajv = new Ajv({
  strict: false,
  allErrors: true,
  validateFormats: false,
  unicodeRegExp: false,
});

function validatorOf(entry: CrdVersion): ValidateFunction {
  if (!entry.validate) {
    const spec = (entry.schema.properties as JsonObject | undefined)?.spec;
    entry.validate = ajv.compile((forAjv(spec ?? {}) as object) ?? {});
  }
  return entry.validate;
}

/** Drops (and lists) the fields `schema` does not declare, and nulls it does not allow. */
function prune(
  value: unknown,
  schema: Schema | undefined,
  field: string,
  findings: SchemaFindings,
): void {
  if (!schema || schema['x-kubernetes-int-or-string']) return;
  if (Array.isArray(value)) {
    const items = schema.items as Schema | undefined;
    value.forEach((item, i) => prune(item, items, `${field}[${i}]`, findings));
    return;
  }
  if (!isPlainObject(value)) return;
  const properties = schema.properties as Record<string, Schema> | undefined;
  const additional = schema.additionalProperties;
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  for (const [key, item] of Object.entries(value)) {
    const child =
      properties?.[key] ?? (isPlainObject(additional) ? additional : undefined);
    const at = field ? `${field}.${key}` : key;
    if (!child) {
      if (preserve || additional === true) continue;
      findings.unknown.push(at);
      delete value[key];
    } else if (item === null && child.nullable !== true) {
      delete value[key];
    } else {
      prune(item, child, at, findings);
    }
  }
}

function fieldOf(instancePath: string): string {
  let out = 'spec';
  for (const raw of instancePath.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out = /^\d+$/.test(part) ? `${out}[${part}]` : `${out}.${part}`;
  }
  return out;
}

/** One ajv error as the API server words the same finding of its schema validation. */
function causeOf(error: ErrorObject, value: unknown): StatusCause {
  const field = fieldOf(error.instancePath);
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return cause.required(`${field}.${String(p.missingProperty)}`);
    case 'enum':
      return cause.notSupported(
        field,
        value,
        (p.allowedValues as unknown[]).map(String),
      );
    case 'type':
      return {
        reason: 'FieldValueTypeInvalid',
        field,
        message: `Invalid value: "${typeName(
          value,
        )}": ${field} in body must be of type ${String(p.type)}: "${typeName(
          value,
        )}"`,
      };
    case 'minimum':
      return cause.invalid(
        field,
        value,
        `${field} in body should be greater than or equal to ${p.limit}`,
      );
    case 'maximum':
      return cause.invalid(
        field,
        value,
        `${field} in body should be less than or equal to ${p.limit}`,
      );
    case 'pattern':
      return cause.invalid(
        field,
        value,
        `${field} in body should match '${p.pattern}'`,
      );
    case 'maxLength':
      return {
        reason: 'FieldValueTooLong',
        field,
        message: `Too long: may not be more than ${p.limit} bytes`,
      };
    case 'maxItems':
      return {
        reason: 'FieldValueTooMany',
        field,
        message: `Too many: must have at most ${p.limit} items`,
      };
    default:
      return cause.invalid(field, value, `${field} in body ${error.message}`);
  }
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number')
    return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function valueAt(obj: unknown, instancePath: string): unknown {
  let at = obj;
  for (const part of instancePath.split('/').slice(1)) {
    at =
      isPlainObject(at) || Array.isArray(at)
        ? (at as JsonObject)[part]
        : undefined;
  }
  return at;
}

/**
 * Checks a custom resource against its CRD's schema (the status left out: only the
 * `/status` subresource writes it): unknown fields are dropped and listed in `findings`, and
 * the schema's other findings answered as the API server's 422 causes.
 */
export function checkCrdSchema(
  group: string,
  version: string,
  kind: string,
  obj: JsonObject,
  findings: SchemaFindings,
): StatusCause[] {
  const entry = crdVersion(group, version, kind);
  if (!entry) return [];
  for (const key of Object.keys(obj)) {
    if (!['apiVersion', 'kind', 'metadata', 'spec', 'status'].includes(key)) {
      findings.unknown.push(key);
      delete obj[key];
    }
  }
  checkCoreValue('V1ObjectMeta', obj.metadata, 'metadata', findings);
  const specSchema = (entry.schema.properties as JsonObject | undefined)?.spec;
  prune(obj.spec, specSchema as Schema | undefined, 'spec', findings);
  const required = (entry.schema.required as string[] | undefined) ?? [];
  if (required.includes('spec') && obj.spec === undefined)
    return [cause.required('spec')];
  if (obj.spec === undefined) return [];
  const validate = validatorOf(entry);
  if (validate(obj.spec)) return [];
  return (validate.errors ?? [])
    .filter(e => !/\/(anyOf|oneOf|not)\//.test(e.schemaPath))
    .map(e => causeOf(e, valueAt(obj.spec, e.instancePath)));
}
