/**
 * Secrets (core v1) and Ingresses (networking.k8s.io/v1), with the API server's rules for the
 * fields a client gets wrong: a Secret's `stringData` is merged into `data` (base64) and never
 * stored, `data` must be base64 (a body that is not fails its decoding, 400), keys are
 * `[-._a-zA-Z0-9]+`, `type` cannot change and an `immutable` Secret keeps its data; an Ingress
 * needs rules or a default backend, each path a `pathType` and a backend, and its hosts are DNS
 * subdomains (a leading `*.` allowed).
 */
import {
  configKeyProblems,
  ingressHostProblems,
  ingressPathProblems,
} from '@cnp/plugin-fleet-common';
import { cause, StatusCause } from './errors';
import type { ResourceDef } from './resourceDef';
import {
  asArray,
  asObject,
  deepEqual,
  isPlainObject,
  JsonObject,
} from './util';

export const SECRET_AND_INGRESS_RESOURCES: ResourceDef[] = [
  {
    group: '',
    version: 'v1',
    plural: 'secrets',
    singular: 'secret',
    kind: 'Secret',
    namespaced: true,
    shortNames: [],
    categories: [],
    builtin: true,
    hasGeneration: false,
    allowCreateOnUpdate: false,
    nameFormat: 'dns1123-subdomain',
  },
  {
    group: 'networking.k8s.io',
    version: 'v1',
    plural: 'ingresses',
    singular: 'ingress',
    kind: 'Ingress',
    namespaced: true,
    shortNames: ['ing'],
    categories: ['all'],
    builtin: true,
    hasGeneration: true,
    allowCreateOnUpdate: false,
    nameFormat: 'dns1123-subdomain',
  },
];

const BASE64 =
  /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** The API server's limit on a Secret's data (1 MiB, decoded). */
const MAX_SECRET_BYTES = 1024 * 1024;
const DNS1123_SUBDOMAIN =
  /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const PATH_TYPES = ['Exact', 'Prefix', 'ImplementationSpecific'];

/**
 * What decoding a Secret body finds wrong (the API server decodes `data` as []byte): the message
 * of a 400, never quoting the data.
 */
export function secretDecodeProblem(
  def: ResourceDef,
  obj: JsonObject,
): string | undefined {
  if (def.kind !== 'Secret') return undefined;
  const data = obj.data;
  if (data === undefined || data === null) return undefined;
  if (!isPlainObject(data))
    return 'json: cannot unmarshal data into Go struct field Secret.data of type map[string][]uint8';
  for (const [key, value] of Object.entries(data)) {
    if (value === null) continue;
    if (typeof value !== 'string' || !BASE64.test(value)) {
      return `illegal base64 data in Secret.data["${key}"]`;
    }
  }
  for (const [key, value] of Object.entries(asObject(obj.stringData) ?? {})) {
    if (typeof value !== 'string')
      return `json: cannot unmarshal into Go struct field Secret.stringData["${key}"] of type string`;
  }
  return undefined;
}

/** `stringData` is written into `data` (it wins over the same key) and never stored. */
export function defaultSecret(obj: JsonObject): void {
  const stringData = asObject(obj.stringData);
  if (stringData) {
    const data: JsonObject = asObject(obj.data) ?? {};
    for (const [key, value] of Object.entries(stringData)) {
      data[key] = Buffer.from(String(value), 'utf8').toString('base64');
    }
    obj.data = data;
  }
  delete obj.stringData;
  if (isPlainObject(obj.data)) {
    for (const [key, value] of Object.entries(obj.data)) {
      if (value === null) delete obj.data[key];
    }
    if (Object.keys(obj.data).length === 0) delete obj.data;
  }
  if (obj.type === undefined || obj.type === '') obj.type = 'Opaque';
}

export function validateSecret(
  obj: JsonObject,
  old: JsonObject | undefined,
): StatusCause[] {
  const out: StatusCause[] = [];
  let size = 0;
  for (const [key, value] of Object.entries(asObject(obj.data) ?? {})) {
    for (const problem of configKeyProblems(key))
      out.push(cause.invalid('data', key, problem));
    size += Buffer.from(String(value), 'base64').length;
  }
  if (size > MAX_SECRET_BYTES) {
    out.push(
      cause.invalid(
        'data',
        '<secret contents redacted>',
        `may not be more than ${MAX_SECRET_BYTES} bytes`,
      ),
    );
  }
  if (old) {
    if (obj.type !== old.type)
      out.push(cause.invalid('type', obj.type, 'field is immutable'));
    if (old.immutable === true) {
      if (!deepEqual(obj.data ?? {}, old.data ?? {})) {
        out.push(
          cause.forbidden('data', 'field is immutable when `immutable` is set'),
        );
      }
      if (obj.immutable !== true) {
        out.push(
          cause.forbidden(
            'immutable',
            'field is immutable when `immutable` is set',
          ),
        );
      }
    }
  }
  return out;
}

function validateBackend(field: string, backend: unknown): StatusCause[] {
  const b = asObject(backend);
  if (!b) return [cause.required(field, '')];
  const service = asObject(b.service);
  const resource = asObject(b.resource);
  if (service && resource)
    return [
      cause.invalid(field, '', 'cannot set both service and resource backends'),
    ];
  if (resource) return [];
  if (!service)
    return [cause.required(field, 'service or resource is required')];
  const out: StatusCause[] = [];
  if (typeof service.name !== 'string' || service.name === '')
    out.push(cause.required(`${field}.service.name`));
  const port = asObject(service.port);
  if (!port) {
    out.push(cause.required(`${field}.service.port`));
  } else if (port.name !== undefined && port.number !== undefined) {
    out.push(
      cause.invalid(
        `${field}.service.port`,
        port,
        'cannot set both port name & port number',
      ),
    );
  } else if (port.number !== undefined) {
    const n = port.number;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 65535)
      out.push(
        cause.invalid(
          `${field}.service.port.number`,
          n,
          'must be between 1 and 65535, inclusive',
        ),
      );
  } else if (typeof port.name !== 'string' || port.name === '') {
    out.push(
      cause.required(
        `${field}.service.port`,
        'port name or number is required',
      ),
    );
  }
  return out;
}

function validateHost(field: string, host: unknown): StatusCause[] {
  if (typeof host !== 'string') return [];
  return ingressHostProblems(host).map(m => cause.invalid(field, host, m));
}

export function validateIngress(obj: JsonObject): StatusCause[] {
  const out: StatusCause[] = [];
  const spec = asObject(obj.spec) ?? {};
  const rules = asArray(spec.rules);
  if (spec.defaultBackend === undefined && rules.length === 0) {
    out.push(
      cause.invalid(
        'spec',
        '',
        'either `defaultBackend` or `rules` must be specified',
      ),
    );
  }
  if (spec.defaultBackend !== undefined)
    out.push(...validateBackend('spec.defaultBackend', spec.defaultBackend));
  if (
    spec.ingressClassName !== undefined &&
    (typeof spec.ingressClassName !== 'string' ||
      !DNS1123_SUBDOMAIN.test(spec.ingressClassName))
  ) {
    out.push(
      cause.invalid(
        'spec.ingressClassName',
        spec.ingressClassName,
        'must be a lowercase RFC 1123 subdomain',
      ),
    );
  }
  rules.forEach((raw, i) => {
    const rule = asObject(raw) ?? {};
    if (rule.host !== undefined && rule.host !== '')
      out.push(...validateHost(`spec.rules[${i}].host`, rule.host));
    const http = asObject(rule.http);
    if (!http) return;
    const paths = asArray(http.paths);
    if (paths.length === 0)
      out.push(cause.required(`spec.rules[${i}].http.paths`));
    paths.forEach((p, j) => {
      const field = `spec.rules[${i}].http.paths[${j}]`;
      const path = asObject(p) ?? {};
      if (path.pathType === undefined) {
        out.push(
          cause.required(`${field}.pathType`, 'pathType must be specified'),
        );
      } else if (!PATH_TYPES.includes(String(path.pathType))) {
        out.push(
          cause.notSupported(`${field}.pathType`, path.pathType, PATH_TYPES),
        );
      }
      const value = typeof path.path === 'string' ? path.path : undefined;
      for (const problem of ingressPathProblems(value, String(path.pathType)))
        out.push(cause.invalid(`${field}.path`, value ?? '', problem));
      out.push(...validateBackend(`${field}.backend`, path.backend));
    });
  });
  asArray(spec.tls).forEach((raw, i) => {
    const tls = asObject(raw) ?? {};
    asArray(tls.hosts).forEach((host, j) =>
      out.push(...validateHost(`spec.tls[${i}].hosts[${j}]`, host)),
    );
    if (
      tls.secretName !== undefined &&
      (typeof tls.secretName !== 'string' ||
        !DNS1123_SUBDOMAIN.test(tls.secretName))
    ) {
      out.push(
        cause.invalid(
          `spec.tls[${i}].secretName`,
          tls.secretName,
          'must be a lowercase RFC 1123 subdomain',
        ),
      );
    }
  });
  return out;
}

/** The status an object of these kinds starts with: a Secret has none. */
export function initialStatusOf(def: ResourceDef, obj: JsonObject): boolean {
  if (def.kind === 'Secret') {
    delete obj.status;
    return true;
  }
  if (def.kind === 'Ingress') {
    obj.status = { loadBalancer: {} };
    return true;
  }
  return false;
}
