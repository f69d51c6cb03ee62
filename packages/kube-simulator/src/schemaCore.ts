/**
 * The schema of the built-in kinds, as the API server decodes a body into its Go types: read
 * from `@kubernetes/client-node`'s models, which are generated from Kubernetes' published
 * OpenAPI document (each model's `attributeTypeMap` lists its fields, their JSON names and
 * types). A field no model has is unknown (reported, and dropped from the object as decoding
 * drops it); a value of the wrong JSON type fails the decoding with encoding/json's message.
 */
import * as k8s from '@kubernetes/client-node';
import { isPlainObject, JsonObject } from './util';

interface Attribute {
  name: string;
  baseName: string;
  type: string;
  format: string;
}

const MODELS = k8s as unknown as Record<
  string,
  { attributeTypeMap?: Attribute[] } | undefined
>;

/** What walking an object against its schema found. */
export interface SchemaFindings {
  /** Unknown fields, as paths (`spec.template.spec.containers[0].bogus`), already dropped. */
  unknown: string[];
  /** The first value of the wrong type, as the decoder words it. */
  typeError?: string;
}

function attributesOf(model: string): Attribute[] | undefined {
  return MODELS[model]?.attributeTypeMap;
}

/** The model of a built-in kind (`V1Deployment`, `V2HorizontalPodAutoscaler`, `CoreV1Event`). */
export function coreModelOf(kind: string, version: string): string | undefined {
  const v = `V${version.slice(1)}`;
  return [`${v}${kind}`, `Core${v}${kind}`].find(m => attributesOf(m));
}

/** `V1DeploymentSpec` -> `DeploymentSpec`: the Go struct's name. */
function structName(model: string): string {
  return model.replace(/^(Core|Events)?V\d+((alpha|beta)\d+)?/, '');
}

const MAP = /^\{ \[key: string\]: (.+); \}$/;
const ARRAY = /^Array<(.+)>$/;

function goType(type: string, format: string): string {
  const array = ARRAY.exec(type);
  if (array) return `[]${goType(array[1], '')}`;
  const map = MAP.exec(type);
  if (map) return `map[string]${goType(map[1], '')}`;
  switch (type) {
    case 'string':
      return format === 'byte' ? '[]uint8' : 'string';
    case 'number':
      return format === 'int32' || format === 'int64' ? format : 'float64';
    case 'boolean':
      return 'bool';
    case 'Date':
      return 'v1.Time';
    case 'IntOrString':
      return 'intstr.IntOrString';
    default:
      return `v1.${structName(type)}`;
  }
}

function jsonType(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'bool';
  return typeof value === 'object' ? 'object' : typeof value;
}

function acceptsScalar(type: string, format: string, value: unknown): boolean {
  switch (type) {
    case 'string':
    case 'Date':
      return typeof value === 'string';
    case 'number':
      if (typeof value !== 'number') return false;
      return format.startsWith('int') ? Number.isInteger(value) : true;
    case 'boolean':
      return typeof value === 'boolean';
    case 'IntOrString':
      return (
        typeof value === 'string' ||
        (typeof value === 'number' && Number.isInteger(value))
      );
    default:
      return true; // any, object
  }
}

interface Walk {
  findings: SchemaFindings;
  /** Go's path of the field: JSON names joined by dots, no indices. */
  goPath: string;
  /** The Go struct holding the field being walked. */
  owner: string;
}

function typeError(walk: Walk, value: unknown, type: string, format: string) {
  if (walk.findings.typeError) return;
  const number = typeof value === 'number' && !Number.isInteger(value);
  walk.findings.typeError = `json: cannot unmarshal ${
    number ? `number ${value}` : jsonType(value)
  } into Go struct field ${walk.owner}.${walk.goPath} of type ${goType(
    type,
    format,
  )}`;
}

function walkValue(
  value: unknown,
  type: string,
  format: string,
  path: string,
  walk: Walk,
): void {
  if (value === null) return; // null decodes to the zero value
  const array = ARRAY.exec(type);
  const map = MAP.exec(type);
  if (array) {
    if (!Array.isArray(value)) typeError(walk, value, type, format);
    else
      value.forEach((item, i) =>
        walkValue(item, array[1], '', `${path}[${i}]`, walk),
      );
    return;
  }
  if (map) {
    if (!isPlainObject(value)) typeError(walk, value, type, format);
    else
      for (const [key, item] of Object.entries(value))
        walkValue(item, map[1], '', `${path}[${key}]`, walk);
    return;
  }
  const attributes = attributesOf(type);
  if (!attributes) {
    if (!acceptsScalar(type, format, value))
      typeError(walk, value, type, format);
    return;
  }
  if (!isPlainObject(value)) typeError(walk, value, type, format);
  else walkModel(value, type, attributes, path, walk);
}

function walkModel(
  obj: JsonObject,
  model: string,
  attributes: Attribute[],
  path: string,
  walk: Walk,
): void {
  for (const [key, value] of Object.entries(obj)) {
    const field = path ? `${path}.${key}` : key;
    const attribute = attributes.find(a => a.baseName === key);
    if (!attribute) {
      walk.findings.unknown.push(field);
      delete obj[key];
      continue;
    }
    if (value === null) {
      delete obj[key]; // decoded as the zero value, which is not written back
      continue;
    }
    const goPath = walk.goPath ? `${walk.goPath}.${key}` : key;
    walkValue(value, attribute.type, attribute.format, field, {
      ...walk,
      goPath,
      owner: structName(model),
    });
  }
}

/**
 * Walks a built-in kind's object against its model (the status left out: the simulator's own
 * controllers write it): unknown fields are dropped and listed, the first type error kept.
 */
export function checkCoreSchema(
  model: string,
  obj: JsonObject,
  findings: SchemaFindings = { unknown: [] },
): SchemaFindings {
  const attributes = (attributesOf(model) ?? []).filter(
    a => a.baseName !== 'status',
  );
  const { status } = obj;
  delete obj.status;
  walkModel(obj, model, attributes, '', { findings, goPath: '', owner: '' });
  if (status !== undefined) obj.status = status;
  return findings;
}

/** Walks one field's value (`metadata` of a custom resource) against a model. */
export function checkCoreValue(
  model: string,
  value: unknown,
  path: string,
  findings: SchemaFindings,
): void {
  walkValue(value, model, '', path, {
    findings,
    goPath: path,
    owner: structName(model),
  });
}
