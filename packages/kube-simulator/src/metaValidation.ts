/**
 * Validation of object metadata with the rules and messages of the real API
 * server: names (per resource's name format), labels and annotations.
 */
import { cause, StatusCause } from './errors';
import { ResourceDef } from './resourceDef';
import { asObject, isPlainObject, JsonObject } from './util';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const MSG = {
  label:
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
  subdomain:
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
  dns1035:
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
  qualifiedName:
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
  labelValue:
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
};

type DnsFormat = Exclude<ResourceDef['nameFormat'], 'path-segment'>;

const FORMATS: Record<DnsFormat, [RegExp, number, string]> = {
  'dns1123-label': [DNS1123_LABEL, 63, MSG.label],
  'dns1035-label': [DNS1035_LABEL, 63, MSG.dns1035],
  'dns1123-subdomain': [DNS1123_SUBDOMAIN, 253, MSG.subdomain],
};

export function isDns1123Label(name: string): boolean {
  return name.length <= 63 && DNS1123_LABEL.test(name);
}

/** ValidatePathSegmentName: what RBAC objects' names may be (`system:aggregate-to-edit`). */
function checkPathSegment(field: string, value: string): StatusCause[] {
  if (value === '.' || value === '..')
    return [cause.invalid(field, value, `may not be '${value}'`)];
  return ['/', '%']
    .filter(c => value.includes(c))
    .map(c => cause.invalid(field, value, `may not contain '${c}'`));
}

export function checkFormat(
  field: string,
  value: string,
  format: ResourceDef['nameFormat'],
): StatusCause[] {
  if (format === 'path-segment') return checkPathSegment(field, value);
  const [re, max, msg] = FORMATS[format];
  const out: StatusCause[] = [];
  if (value.length > max)
    out.push(
      cause.invalid(field, value, `must be no more than ${max} characters`),
    );
  if (!re.test(value)) out.push(cause.invalid(field, value, msg));
  return out;
}

export function validateName(def: ResourceDef, name: unknown): StatusCause[] {
  if (typeof name !== 'string' || name === '') {
    return [
      cause.required('metadata.name', 'name or generateName is required'),
    ];
  }
  const out = checkFormat('metadata.name', name, def.nameFormat);
  if (def.maxNameLength !== undefined && name.length > def.maxNameLength)
    out.push(
      cause.invalid(
        'metadata.name',
        name,
        `must be no more than ${def.maxNameLength} characters`,
      ),
    );
  return out;
}

function validateQualifiedName(field: string, key: string): StatusCause[] {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const out: StatusCause[] = [];
  if (prefix !== undefined) {
    if (prefix === '')
      out.push(cause.invalid(field, key, 'prefix part must be non-empty'));
    else if (prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)) {
      out.push(cause.invalid(field, key, `prefix part ${MSG.subdomain}`));
    }
  }
  if (name === '')
    out.push(cause.invalid(field, key, 'name part must be non-empty'));
  else if (name.length > 63)
    out.push(
      cause.invalid(field, key, 'name part must be no more than 63 characters'),
    );
  else if (!QUALIFIED_NAME.test(name))
    out.push(cause.invalid(field, key, MSG.qualifiedName));
  return out;
}

export function validateLabels(field: string, labels: unknown): StatusCause[] {
  if (labels === undefined || labels === null) return [];
  if (!isPlainObject(labels))
    return [cause.invalid(field, labels, 'must be a map of strings')];
  const out: StatusCause[] = [];
  for (const [key, value] of Object.entries(labels)) {
    out.push(...validateQualifiedName(field, key));
    if (typeof value !== 'string') {
      out.push(cause.invalid(field, value, 'label values must be strings'));
    } else if (value.length > 63) {
      out.push(
        cause.invalid(field, value, 'must be no more than 63 characters'),
      );
    } else if (!LABEL_VALUE.test(value)) {
      out.push(cause.invalid(field, value, MSG.labelValue));
    }
  }
  return out;
}

function validateAnnotations(annotations: unknown): StatusCause[] {
  if (annotations === undefined || annotations === null) return [];
  if (!isPlainObject(annotations)) {
    return [
      cause.invalid(
        'metadata.annotations',
        annotations,
        'must be a map of strings',
      ),
    ];
  }
  const out: StatusCause[] = [];
  let size = 0;
  for (const [key, value] of Object.entries(annotations)) {
    out.push(...validateQualifiedName('metadata.annotations', key));
    if (typeof value !== 'string') {
      out.push(
        cause.invalid(
          'metadata.annotations',
          value,
          'annotation values must be strings',
        ),
      );
    }
    size += key.length + String(value).length;
  }
  if (size > 262144) {
    out.push({
      reason: 'FieldValueTooLong',
      field: 'metadata.annotations',
      message: 'Too long: must have at most 262144 bytes',
    });
  }
  return out;
}

export function validateMeta(obj: JsonObject): StatusCause[] {
  const meta = asObject(obj.metadata) ?? {};
  return [
    ...validateLabels('metadata.labels', meta.labels),
    ...validateAnnotations(meta.annotations),
  ];
}
