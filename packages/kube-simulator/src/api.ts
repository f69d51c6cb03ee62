/**
 * The Kubernetes REST API of one simulated cluster: maps a request (method,
 * path below the cluster prefix, query, content type, body) to discovery
 * documents or store operations, and errors to `Status` bodies.
 */
import { parse as parseYaml } from 'yaml';
import { ApiError, errors } from './errors';
import { applyObject, forceOf } from './applyEndpoint';
import { fieldManagerOf } from './managedFields';
import { PATCH_TYPES, PatchType } from './patch';
import { APPLY_PATCH_TYPE } from './serverSideApply';
import { apiVersionOf, ResourceDef } from './resourceDef';
import {
  apiGroupDoc,
  apiGroupListDoc,
  apiResourceListDoc,
  apiVersionsDoc,
  findResource,
  isServed,
  storageDef,
} from './resources';
import { podLog } from './podLogs';
import { isPlainObject, rfc3339 } from './util';
import { parseBool } from './watch';
import { ClusterStore, WriteOptions } from './store';
import { FIELD_VALIDATIONS, FieldValidation } from './validateStored';

export interface ApiRequest {
  method: string;
  /** Path below `/clusters/<name>`, e.g. `/apis/apps/v1/namespaces/default/deployments`. */
  path: string;
  query: URLSearchParams;
  contentType: string;
  body: Buffer;
  serverAddress: string;
  /** The User-Agent header: its first word names the field manager of a write without one. */
  userAgent?: string;
}

export interface ApiResponse {
  status: number;
  /** JSON body, or plain text when `text` is set. */
  body?: unknown;
  text?: string;
  /** Sent as `Warning: 299 - "<warning>"` headers. */
  warnings?: string[];
}

const WRITE_TYPES = ['application/json', 'application/yaml'];

function json(status: number, body: unknown): ApiResponse {
  return { status, body };
}

function mediaType(contentType: string): string {
  return contentType.split(';')[0].trim().toLowerCase();
}

function parseBody(req: ApiRequest, allowed: string[]): unknown {
  const type = mediaType(req.contentType) || 'application/json';
  if (!allowed.includes(type)) {
    throw errors.unsupportedMediaType(
      allowed === WRITE_TYPES
        ? [
            'application/json',
            'application/yaml',
            'application/vnd.kubernetes.protobuf',
          ]
        : allowed,
    );
  }
  const text = req.body.toString('utf8');
  if (!text.trim()) throw errors.badRequest('the request body is empty');
  try {
    return type === 'application/yaml' || type === APPLY_PATCH_TYPE
      ? parseYaml(text)
      : JSON.parse(text);
  } catch (e) {
    throw errors.badRequest(
      `couldn't get version/kind; json parse error: ${(e as Error).message}`,
    );
  }
}

/** The options of a write: `dryRun`, and who manages the fields it writes. */
function writeOptions(
  query: URLSearchParams,
  req?: ApiRequest,
  apply = false,
): WriteOptions {
  const dryRun = query.getAll('dryRun');
  for (const value of dryRun) {
    if (value !== 'All') {
      throw errors.badRequest(
        `dryRun: Unsupported value: "${value}": supported values: "All"`,
      );
    }
  }
  const fieldValidation = query.get('fieldValidation') ?? 'Warn';
  const allowed: string[] = FIELD_VALIDATIONS;
  if (!allowed.includes(fieldValidation)) {
    throw errors.badRequest(
      `fieldValidation: Unsupported value: "${fieldValidation}": supported values: "Ignore", "Strict", "Warn"`,
    );
  }
  const fieldManagement = req && {
    manager: fieldManagerOf(query, req.userAgent, apply),
    operation: 'Update' as const,
    time: '',
  };
  return {
    dryRun: dryRun.length > 0,
    fieldValidation: fieldValidation as FieldValidation,
    warnings: [],
    fieldManagement,
  };
}

/** The answer, with the write's warnings (unknown fields dropped under `Warn`). */
function warned(answer: ApiResponse, opts: WriteOptions): ApiResponse {
  return opts.warnings?.length
    ? { ...answer, warnings: opts.warnings }
    : answer;
}

interface ResourcePath {
  def: ResourceDef;
  namespace?: string;
  name?: string;
  subresource?: string;
}

/** Splits `/api/v1/...` or `/apis/<g>/<v>/...` into a resource reference. */
function parseResourcePath(
  segments: string[],
  store: ClusterStore,
): ResourcePath | undefined {
  let group: string;
  let version: string;
  let rest: string[];
  if (segments[0] === 'api') {
    group = '';
    version = segments[1];
    rest = segments.slice(2);
  } else {
    group = segments[1];
    version = segments[2];
    rest = segments.slice(3);
  }
  let namespace: string | undefined;
  if (
    rest[0] === 'namespaces' &&
    rest.length >= 3 &&
    !(group === '' && rest.length === 3 && rest[2] === 'status')
  ) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [plural, name, subresource, ...extra] = rest;
  if (!plural || extra.length) return undefined;
  const def = findResource(group, version, plural);
  if (!def || !isServed(def, store.crds)) return undefined;
  if (def.namespaced !== (namespace !== undefined) && name !== undefined)
    return undefined;
  if (!def.namespaced && namespace !== undefined) return undefined;
  return { def, namespace, name, subresource };
}

/** A watch request, resolved: what `WatchStream` serves. */
export interface WatchTarget {
  def: ResourceDef;
  stored: ResourceDef;
  namespace?: string;
  /** `metadata.name=<name>` for the legacy `/watch/.../<name>` path. */
  nameSelector?: string;
}

/**
 * Whether a request is a watch: `GET <collection>?watch=true` (or `1`, as Go's ParseBool
 * reads it), or the legacy `GET /api/v1/watch/...` and `/apis/<g>/<v>/watch/...` paths
 * (a name there watches that one object). Throws 404 for a resource the cluster does not
 * serve and 400 for a bad `watch` value; undefined for anything else (not a watch).
 */
export function watchTarget(
  store: ClusterStore,
  method: string,
  path: string,
  query: URLSearchParams,
): WatchTarget | undefined {
  if (method.toUpperCase() !== 'GET') return undefined;
  const segments = (path.replace(/\/+$/, '') || '/')
    .split('/')
    .filter(Boolean)
    .map(decodeURIComponent);
  // where `watch` would sit: /api/v1/watch/..., /apis/<g>/<v>/watch/...
  let at: number;
  if (segments[0] === 'api') at = 2;
  else if (segments[0] === 'apis') at = 3;
  else return undefined;
  if (segments.length <= at) return undefined;
  const legacy = segments[at] === 'watch';
  if (legacy) segments.splice(at, 1);
  else if (!parseBool('watch', query.get('watch'))) return undefined;
  const target = parseResourcePath(segments, store);
  if (!target) throw errors.notFoundPath();
  if (target.subresource !== undefined) throw errors.notFoundPath();
  if (target.name !== undefined && !legacy) return undefined; // a GET of one object ignores watch
  return {
    def: target.def,
    stored: storageDef(target.def),
    namespace: target.namespace,
    nameSelector:
      target.name !== undefined ? `metadata.name=${target.name}` : undefined,
  };
}

/** Dates a write's field management by the cluster's clock. */
function stamp(store: ClusterStore, opts: WriteOptions): void {
  if (opts.fieldManagement)
    opts.fieldManagement.time = rfc3339(store.currentTime());
}

export function handleApi(store: ClusterStore, req: ApiRequest): ApiResponse {
  try {
    return route(store, req);
  } catch (e) {
    if (e instanceof ApiError) return json(e.code, e.toStatus());
    return json(
      500,
      errors.internal(`kube-simulator: ${(e as Error).message}`).toStatus(),
    );
  }
}

function route(store: ClusterStore, req: ApiRequest): ApiResponse {
  const path = req.path.replace(/\/+$/, '') || '/';
  const segments = path.split('/').filter(Boolean).map(decodeURIComponent);
  const method = req.method.toUpperCase();
  const discovery = { crds: store.crds, serverAddress: req.serverAddress };

  if (['healthz', 'livez', 'readyz'].includes(segments[0])) {
    if (method !== 'GET' && method !== 'HEAD') throw errors.methodNotAllowed();
    return { status: 200, text: 'ok' };
  }
  if (segments[0] === 'version' && segments.length === 1) {
    if (method !== 'GET') throw errors.methodNotAllowed();
    return json(200, store.serverVersion);
  }
  if (segments[0] === 'api' || segments[0] === 'apis') {
    const isCore = segments[0] === 'api';
    const depth = segments.length;
    if (depth <= (isCore ? 2 : 3)) {
      if (method !== 'GET') throw errors.methodNotAllowed();
      let doc: unknown;
      if (isCore) {
        doc =
          depth === 1
            ? apiVersionsDoc(discovery)
            : apiResourceListDoc('', segments[1], discovery);
      } else if (depth === 1) {
        doc = apiGroupListDoc(discovery);
      } else if (depth === 2) {
        doc = apiGroupDoc(segments[1], discovery);
      } else {
        doc = apiResourceListDoc(segments[1], segments[2], discovery);
      }
      if (!doc) throw errors.notFoundPath();
      return json(200, doc);
    }
    const target = parseResourcePath(segments, store);
    if (!target) throw errors.notFoundPath();
    return resource(store, req, method, target);
  }
  throw errors.notFoundPath();
}

/**
 * A custom resource served in several versions without conversion (Istio's
 * VirtualService): objects are stored under the storage version, and each
 * request sees them under the version of its URL.
 */
function resource(
  store: ClusterStore,
  req: ApiRequest,
  method: string,
  target: ResourcePath,
): ApiResponse {
  const stored = storageDef(target.def);
  if (stored === target.def) return resourceIn(store, req, method, target);
  const from = apiVersionOf(target.def);
  const to = apiVersionOf(stored);
  const swap = (value: unknown, a: string, b: string): unknown => {
    if (Array.isArray(value)) {
      return value.map(op =>
        isPlainObject(op) && op.path === '/apiVersion' && op.value === a
          ? { ...op, value: b }
          : op,
      );
    }
    if (!isPlainObject(value)) return value;
    const copy: Record<string, unknown> = { ...value };
    if (copy.apiVersion === a) copy.apiVersion = b;
    if (Array.isArray(copy.items))
      copy.items = copy.items.map(i => swap(i, a, b));
    return copy;
  };
  let body = req.body;
  const text = body.toString('utf8');
  if (text.trim() && mediaType(req.contentType) !== 'application/yaml') {
    try {
      body = Buffer.from(JSON.stringify(swap(JSON.parse(text), from, to)));
    } catch {
      // left as sent: parseBody answers the error
    }
  } else if (text.trim()) {
    body = Buffer.from(
      text.replace(`apiVersion: ${from}`, `apiVersion: ${to}`),
    );
  }
  const answer = resourceIn(store, { ...req, body }, method, {
    ...target,
    def: stored,
  });
  return { ...answer, body: swap(answer.body, to, from) };
}

/** A PATCH: one of the three patch types, or a server-side apply. */
function patchObject(
  store: ClusterStore,
  req: ApiRequest,
  target: ResourcePath & { name: string },
  opts: WriteOptions,
  apply: boolean,
): ApiResponse {
  const { def, namespace, name } = target;
  const allowed: string[] = def.builtin
    ? [PATCH_TYPES.json, PATCH_TYPES.merge, PATCH_TYPES.strategic]
    : [PATCH_TYPES.json, PATCH_TYPES.merge];
  allowed.push(APPLY_PATCH_TYPE);
  const force = forceOf(req.query, apply);
  const body = parseBody(req, allowed);
  if (apply) {
    const manager = opts.fieldManagement!.manager;
    const call = { def, namespace, name, manager, force, opts };
    const result = applyObject(store, call, body);
    return json(result.created ? 201 : 200, result.object);
  }
  const type = mediaType(req.contentType) as PatchType;
  return json(200, store.patch(def, namespace, name, type, body, opts));
}

function resourceIn(
  store: ClusterStore,
  req: ApiRequest,
  method: string,
  target: ResourcePath,
): ApiResponse {
  const { def, namespace, name, subresource } = target;
  const q = req.query;
  if (name === undefined) {
    if (method === 'GET') {
      const limit = q.get('limit');
      const parsedLimit = limit === null ? undefined : Number(limit);
      if (
        parsedLimit !== undefined &&
        (!Number.isInteger(parsedLimit) || parsedLimit < 0)
      ) {
        throw errors.badRequest(
          `limit: Invalid value: "${limit}": must be a non-negative integer`,
        );
      }
      return json(
        200,
        store.list(def, namespace, {
          labelSelector: q.get('labelSelector') ?? undefined,
          fieldSelector: q.get('fieldSelector') ?? undefined,
          limit: parsedLimit,
          continueToken: q.get('continue') ?? undefined,
        }),
      );
    }
    if (method === 'POST') {
      if (def.namespaced && namespace === undefined)
        throw errors.methodNotAllowed();
      const body = parseBody(req, WRITE_TYPES);
      const opts = writeOptions(q, req);
      stamp(store, opts);
      return warned(json(201, store.create(def, namespace, body, opts)), opts);
    }
    throw errors.methodNotAllowed();
  }
  if (subresource === 'log' && def.kind === 'Pod') {
    if (method !== 'GET') throw errors.methodNotAllowed();
    const pod = store.get(def, namespace, name);
    return { status: 200, text: podLog(pod, q, store.currentTime()) };
  }
  if (subresource !== undefined && (subresource !== 'status' || def.noStatus))
    throw errors.notFoundPath();
  const apply =
    method === 'PATCH' && mediaType(req.contentType) === APPLY_PATCH_TYPE;
  const opts: WriteOptions = {
    ...writeOptions(q, method === 'GET' ? undefined : req, apply),
    subresource: subresource ? 'status' : undefined,
  };
  stamp(store, opts);
  switch (method) {
    case 'GET':
      return json(200, store.get(def, namespace, name));
    case 'PUT': {
      const body = parseBody(req, WRITE_TYPES);
      const result = store.replace(def, namespace, name, body, opts);
      return warned(json(result.created ? 201 : 200, result.object), opts);
    }
    case 'PATCH':
      return patchObject(store, req, { ...target, name }, opts, apply);
    case 'DELETE': {
      if (subresource) throw errors.methodNotAllowed();
      const text = req.body.toString('utf8').trim();
      let options: unknown;
      if (text) {
        try {
          options = JSON.parse(text);
        } catch {
          throw errors.badRequest('the DeleteOptions body is not valid JSON');
        }
      }
      const result = store.delete(def, namespace, name, options, opts);
      return json(200, result.object ?? result.status);
    }
    default:
      throw errors.methodNotAllowed();
  }
}
