/**
 * Label selectors (the `labelSelector` query string and LabelSelector objects)
 * and the small field-selector subset the API server supports for every kind.
 */
import { errors } from './errors';
import { asArray, isPlainObject, JsonObject } from './util';

export type Operator = '=' | '!=' | 'in' | 'notin' | 'exists' | '!';

export interface Requirement {
  key: string;
  op: Operator;
  values: string[];
}

const KEY = /^([a-z0-9A-Z._/-]+)$/;

/** Parses `a=b,c!=d,e in (x,y),!f,g` into requirements; 400 on bad syntax. */
export function parseLabelSelector(selector: string): Requirement[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  parts.push(current);
  const reqs: Requirement[] = [];
  for (const raw of parts) {
    const part = raw.trim();
    if (!part) {
      if (parts.length === 1) return [];
      throw bad(selector);
    }
    const not = part.match(/^!\s*(\S+)$/);
    const set = part.match(/^(\S+?)\s+(in|notin)\s+\(([^)]*)\)$/);
    const eq = part.match(/^([^=!\s]+)\s*(==|=|!=)\s*([^=!\s]*)$/);
    const exists = part.match(/^([^=!\s()]+)$/);
    if (not) {
      reqs.push({ key: checkKey(not[1], selector), op: '!', values: [] });
    } else if (set) {
      const values = set[3].split(',').map(v => v.trim());
      reqs.push({
        key: checkKey(set[1], selector),
        op: set[2] as Operator,
        values: values.filter(v => v !== ''),
      });
    } else if (eq) {
      reqs.push({
        key: checkKey(eq[1], selector),
        op: eq[2] === '!=' ? '!=' : '=',
        values: [eq[3]],
      });
    } else if (exists) {
      reqs.push({
        key: checkKey(exists[1], selector),
        op: 'exists',
        values: [],
      });
    } else {
      throw bad(selector);
    }
  }
  return reqs;
}

function checkKey(key: string, selector: string): string {
  if (!KEY.test(key)) throw bad(selector);
  return key;
}

function bad(selector: string) {
  return errors.badRequest(
    `unable to parse requirement: found '${selector}', expected: valid label selector`,
  );
}

export function matches(
  reqs: Requirement[],
  labels: Record<string, string> | undefined,
): boolean {
  const l = labels ?? {};
  return reqs.every(r => {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    switch (r.op) {
      case '=':
        return has && l[r.key] === r.values[0];
      case '!=':
        return !has || l[r.key] !== r.values[0];
      case 'in':
        return has && r.values.includes(l[r.key]);
      case 'notin':
        return !has || !r.values.includes(l[r.key]);
      case 'exists':
        return has;
      case '!':
        return !has;
      default:
        return false;
    }
  });
}

/** Converts a metav1.LabelSelector object into requirements. */
export function requirementsOf(selector: unknown): Requirement[] {
  if (!isPlainObject(selector)) return [];
  const reqs: Requirement[] = [];
  const ml = selector.matchLabels;
  if (isPlainObject(ml)) {
    for (const [key, value] of Object.entries(ml)) {
      reqs.push({ key, op: '=', values: [String(value)] });
    }
  }
  for (const expr of asArray(selector.matchExpressions)) {
    if (!isPlainObject(expr)) continue;
    const key = String(expr.key ?? '');
    const values = asArray(expr.values).map(String);
    const op = String(expr.operator ?? '');
    if (op === 'In') reqs.push({ key, op: 'in', values });
    else if (op === 'NotIn') reqs.push({ key, op: 'notin', values });
    else if (op === 'Exists') reqs.push({ key, op: 'exists', values });
    else if (op === 'DoesNotExist') reqs.push({ key, op: '!', values });
  }
  return reqs;
}

/** `a=b,c=d` for a LabelSelector object, as status.selector shows it. */
export function selectorString(selector: unknown): string {
  return requirementsOf(selector)
    .map(r => {
      switch (r.op) {
        case '=':
          return `${r.key}=${r.values[0]}`;
        case '!=':
          return `${r.key}!=${r.values[0]}`;
        case 'in':
        case 'notin':
          return `${r.key} ${r.op} (${r.values.join(',')})`;
        case 'exists':
          return r.key;
        default:
          return `!${r.key}`;
      }
    })
    .join(',');
}

export interface FieldRequirement {
  /** A dotted path: `metadata.name`, `involvedObject.name`, `status.phase`... */
  field: string;
  negate: boolean;
  value: string;
}

const COMMON_FIELDS = ['metadata.name', 'metadata.namespace'];

/**
 * Parses `a=b,c!=d`; a field the kind does not support (every kind supports `metadata.name` and
 * `metadata.namespace`, `extraFields` adds the kind's own) is a 400, as on the API server.
 */
export function parseFieldSelector(
  selector: string,
  extraFields: readonly string[] = [],
): FieldRequirement[] {
  const out: FieldRequirement[] = [];
  for (const raw of selector.split(',')) {
    const part = raw.trim();
    if (!part) continue;
    const m = part.match(/^([^=!]+)(==|=|!=)(.*)$/);
    if (!m) {
      throw errors.badRequest(
        `invalid selector: '${selector}'; can't understand '${part}'`,
      );
    }
    const field = m[1].trim();
    if (!COMMON_FIELDS.includes(field) && !extraFields.includes(field)) {
      throw errors.badRequest(`field label not supported: ${field}`);
    }
    out.push({ field, negate: m[2] === '!=', value: m[3].trim() });
  }
  return out;
}

/** The value a field selector compares: the field as a string, `` when absent. */
export function fieldValue(obj: JsonObject, field: string): string {
  if (field === 'source') {
    // Events: `source` selects on source.component.
    const source = isPlainObject(obj.source) ? obj.source : {};
    return String(source.component ?? '');
  }
  let value: unknown = obj;
  for (const key of field.split('.')) {
    value = isPlainObject(value) ? value[key] : undefined;
  }
  return value === undefined || value === null ? '' : String(value);
}

export function matchesFields(
  reqs: FieldRequirement[],
  obj: JsonObject,
): boolean {
  return reqs.every(r => {
    const actual = fieldValue(obj, r.field);
    return r.negate ? actual !== r.value : actual === r.value;
  });
}
