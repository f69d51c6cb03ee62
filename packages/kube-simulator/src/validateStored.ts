/**
 * Everything the API server checks of an object it is about to store, in its order: the
 * schema (the published OpenAPI models of the built-in kinds, the official CRD documents of
 * the custom ones), then the rules a schema cannot say (names per kind, validation.ts,
 * serverRules.ts), then the admission webhooks a cluster with Istio has. Every write path
 * (create, update, each patch type, apply) calls `validateStored` once with the final object.
 */
import { validateConfigOrAccess } from './configAndAccess';
import { errors } from './errors';
import { validateName } from './metaValidation';
import { validatePodWorkload } from './podWorkloads';
import { invalid } from './requestBody';
import { ResourceDef } from './resourceDef';
import { ServerVersion, versionCauses } from './serverVersion';
import { checkCoreSchema, coreModelOf, SchemaFindings } from './schemaCore';
import { checkCrdSchema } from './schemaCrd';
import { istioWebhook, validateTemplateRules } from './serverRules';
import { JsonObject } from './util';
import { validateObject } from './validation';

/**
 * The `fieldValidation` query parameter: `Strict` refuses unknown fields (400), `Warn` (the
 * default) drops them with a warning, `Ignore` drops them silently.
 */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export const FIELD_VALIDATIONS: FieldValidation[] = [
  'Ignore',
  'Warn',
  'Strict',
];

export interface StoreValidationOptions {
  fieldValidation?: FieldValidation;
  /** The version the cluster serves: what it refuses that a newer one takes (default: current). */
  serverVersion?: ServerVersion;
  /** Receives the warnings of the write (HTTP `Warning: 299 - "..."` headers). */
  warnings?: string[];
}

function cannotHandle(def: ResourceDef, detail: string) {
  return errors.badRequest(
    `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: ${detail}`,
  );
}

/**
 * Validates `obj` (the object about to be stored; `old` the stored one on an update): drops
 * the unknown fields (or refuses them under `Strict`), and throws the API server's 400 or
 * 422 for anything else wrong. Changes `obj` only by dropping fields.
 */
export function validateStored(
  def: ResourceDef,
  obj: JsonObject,
  old: JsonObject | undefined,
  opts: StoreValidationOptions = {},
): void {
  const findings: SchemaFindings = { unknown: [] };
  const name = String((obj.metadata as JsonObject | undefined)?.name ?? '');
  const model = def.builtin ? coreModelOf(def.kind, def.version) : undefined;
  const schemaCauses = model
    ? (checkCoreSchema(model, obj, findings), [])
    : checkCrdSchema(def.group, def.version, def.kind, obj, findings);
  if (findings.typeError) throw cannotHandle(def, findings.typeError);
  const mode = opts.fieldValidation ?? 'Warn';
  if (findings.unknown.length && mode === 'Strict') {
    const list = findings.unknown.map(f => `unknown field "${f}"`).join(', ');
    throw cannotHandle(def, `strict decoding error: ${list}`);
  }
  if (mode === 'Warn')
    opts.warnings?.push(...findings.unknown.map(f => `unknown field "${f}"`));
  if (schemaCauses.length) throw invalid(def, name, schemaCauses);
  const causes = [
    ...(old ? [] : validateName(def, name || undefined)),
    ...validateObject(def, obj, old),
    ...validatePodWorkload(def, obj, old),
    ...validateConfigOrAccess(def, obj, old),
    ...validateTemplateRules(def, obj),
    ...(opts.serverVersion ? versionCauses(def, obj, opts.serverVersion) : []),
  ];
  if (causes.length) throw invalid(def, name, causes);
  istioWebhook(def, obj);
}
