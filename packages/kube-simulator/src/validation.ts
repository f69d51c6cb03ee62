/**
 * Validation with the rules and messages of the real API server for the
 * fields a deployment tool gets wrong most often: metadata (metaValidation.ts),
 * Deployment selectors and containers (resource requests and limits
 * included), Service ports, PDB and HPA bounds, and the immutable fields
 * (Deployment selector, Service clusterIP).
 */
import { cause, StatusCause } from './errors';
import { requestsAboveLimits } from '@cnp/plugin-fleet-common';
import { formatQuantity, parseQuantity, Quantity } from './quantity';
import { ResourceDef } from './resourceDef';
import { matches, requirementsOf } from './selectors';
import { validateIngress, validateSecret } from './secretsAndIngresses';
import {
  asArray,
  asObject,
  deepEqual,
  isPlainObject,
  JsonObject,
} from './util';

import { checkFormat, validateLabels, validateMeta } from './metaValidation';

function isPort(value: unknown): boolean {
  return (
    typeof value === 'number' &&
    Number.isInteger(value) &&
    value >= 1 &&
    value <= 65535
  );
}

const PORT_RANGE = 'must be between 1 and 65535, inclusive';

/** A canonical quantity as stored, or undefined if it is not one. */
function quantityOf(value: unknown): Quantity | undefined {
  try {
    return typeof value === 'string' ? parseQuantity(value) : undefined;
  } catch {
    return undefined;
  }
}

/** The parseable quantities of one ResourceList (requests or limits). */
function resourceList(resources: unknown, key: string): Map<string, Quantity> {
  const list = new Map<string, Quantity>();
  const raw = asObject(asObject(resources)?.[key]) ?? {};
  for (const [name, value] of Object.entries(raw)) {
    const q = quantityOf(value);
    if (q) list.set(name, q);
  }
  return list;
}

/** ValidateResourceRequirements: no negative quantity, no request above its limit. */
function validateResources(resources: unknown, f: string): StatusCause[] {
  const out: StatusCause[] = [];
  const limits = resourceList(resources, 'limits');
  const requests = resourceList(resources, 'requests');
  for (const [key, list] of [
    ['limits', limits],
    ['requests', requests],
  ] as const) {
    for (const [name, q] of list) {
      if (q.n < 0n)
        out.push(
          cause.invalid(
            `${f}.${key}[${name}]`,
            formatQuantity(q),
            'must be greater than or equal to 0',
          ),
        );
    }
  }
  for (const problem of requestsAboveLimits({
    requests: asObject(asObject(resources)?.requests),
    limits: asObject(asObject(resources)?.limits),
  }))
    out.push(cause.invalid(`${f}.requests`, problem.request, problem.message));
  return out;
}

/** The containers of a pod spec (`base`: its path): names, images, ports, env and resources. */
export function validateContainers(
  spec: JsonObject,
  base: string,
): StatusCause[] {
  const out: StatusCause[] = [];
  const containers = asArray(spec.containers);
  if (containers.length === 0) out.push(cause.required(`${base}.containers`));
  const names = new Set<string>();
  containers.forEach((raw, i) => {
    const c = asObject(raw) ?? {};
    const f = `${base}.containers[${i}]`;
    const name = c.name;
    if (typeof name !== 'string' || !name)
      out.push(cause.required(`${f}.name`));
    else {
      out.push(...checkFormat(`${f}.name`, name, 'dns1123-label'));
      if (names.has(name)) out.push(cause.duplicate(`${f}.name`, name));
      names.add(name);
    }
    if (typeof c.image !== 'string' || !c.image.trim())
      out.push(cause.required(`${f}.image`));
    const portNames = new Set<string>();
    asArray(c.ports).forEach((rawPort, j) => {
      const p = asObject(rawPort) ?? {};
      const pf = `${f}.ports[${j}]`;
      if (p.containerPort === undefined)
        out.push(cause.required(`${pf}.containerPort`));
      else if (!isPort(p.containerPort))
        out.push(
          cause.invalid(`${pf}.containerPort`, p.containerPort, PORT_RANGE),
        );
      if (typeof p.name === 'string' && p.name) {
        if (portNames.has(p.name))
          out.push(cause.duplicate(`${pf}.name`, p.name));
        portNames.add(p.name);
        if (p.name.length > 15)
          out.push(
            cause.invalid(
              `${pf}.name`,
              p.name,
              'must be no more than 15 characters',
            ),
          );
      }
      if (
        p.protocol !== undefined &&
        !['TCP', 'UDP', 'SCTP'].includes(String(p.protocol))
      ) {
        out.push(
          cause.notSupported(`${pf}.protocol`, p.protocol, [
            'SCTP',
            'TCP',
            'UDP',
          ]),
        );
      }
    });
    asArray(c.env).forEach((rawEnv, j) => {
      const e = asObject(rawEnv) ?? {};
      if (typeof e.name !== 'string' || !e.name)
        out.push(cause.required(`${f}.env[${j}].name`));
    });
    out.push(...validateResources(c.resources, `${f}.resources`));
  });
  return out;
}

function validateDeploymentLike(
  obj: JsonObject,
  old: JsonObject | undefined,
): StatusCause[] {
  const out: StatusCause[] = [];
  const spec = asObject(obj.spec) ?? {};
  const selector = spec.selector;
  const template = asObject(spec.template) ?? {};
  const templateMeta = asObject(template.metadata) ?? {};
  const templateLabels = asObject(templateMeta.labels) as
    | Record<string, string>
    | undefined;
  if (
    spec.replicas !== undefined &&
    (typeof spec.replicas !== 'number' || spec.replicas < 0)
  ) {
    out.push(
      cause.invalid(
        'spec.replicas',
        spec.replicas,
        'must be greater than or equal to 0',
      ),
    );
  }
  if (!isPlainObject(selector)) {
    out.push(cause.required('spec.selector'));
  } else if (requirementsOf(selector).length === 0) {
    out.push(
      cause.invalid(
        'spec.selector',
        selector,
        'empty selector is invalid for deployment',
      ),
    );
  } else if (!matches(requirementsOf(selector), templateLabels)) {
    out.push(
      cause.invalid(
        'spec.template.metadata.labels',
        templateLabels ?? {},
        '`selector` does not match template `labels`',
      ),
    );
  }
  out.push(...validateLabels('spec.template.metadata.labels', templateLabels));
  const podSpec = asObject(template.spec);
  if (!podSpec) out.push(cause.required('spec.template.spec.containers'));
  else {
    out.push(...validateContainers(podSpec, 'spec.template.spec'));
    if (
      podSpec.restartPolicy !== undefined &&
      podSpec.restartPolicy !== 'Always'
    ) {
      out.push(
        cause.notSupported(
          'spec.template.spec.restartPolicy',
          podSpec.restartPolicy,
          ['Always'],
        ),
      );
    }
  }
  if (old) {
    const oldSelector = asObject(old.spec)?.selector;
    if (oldSelector !== undefined && !deepEqual(oldSelector, selector)) {
      out.push(cause.invalid('spec.selector', selector, 'field is immutable'));
    }
  }
  return out;
}

function validateService(
  obj: JsonObject,
  old: JsonObject | undefined,
): StatusCause[] {
  const out: StatusCause[] = [];
  const spec = asObject(obj.spec) ?? {};
  const type = spec.type ?? 'ClusterIP';
  const types = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
  if (!types.includes(String(type)))
    out.push(cause.notSupported('spec.type', type, types));
  const ports = asArray(spec.ports);
  if (
    ports.length === 0 &&
    type !== 'ExternalName' &&
    spec.clusterIP !== 'None'
  ) {
    out.push(cause.required('spec.ports'));
  }
  const names = new Set<string>();
  ports.forEach((raw, i) => {
    const p = asObject(raw) ?? {};
    const f = `spec.ports[${i}]`;
    if (ports.length > 1 && (typeof p.name !== 'string' || !p.name))
      out.push(cause.required(`${f}.name`));
    if (typeof p.name === 'string' && p.name) {
      out.push(...checkFormat(`${f}.name`, p.name, 'dns1123-label'));
      if (names.has(p.name)) out.push(cause.duplicate(`${f}.name`, p.name));
      names.add(p.name);
    }
    if (!isPort(p.port))
      out.push(cause.invalid(`${f}.port`, p.port, PORT_RANGE));
    const tp = p.targetPort;
    if (tp !== undefined && typeof tp === 'number' && !isPort(tp)) {
      out.push(cause.invalid(`${f}.targetPort`, tp, PORT_RANGE));
    }
    if (p.nodePort !== undefined && type === 'ClusterIP') {
      out.push(
        cause.forbidden(
          `${f}.nodePort`,
          "may not be used when `type` is 'ClusterIP'",
        ),
      );
    }
  });
  if (old) {
    const oldIp = asObject(old.spec)?.clusterIP;
    if (oldIp && spec.clusterIP !== oldIp && type !== 'ExternalName') {
      out.push(
        cause.invalid(
          'spec.clusterIP',
          spec.clusterIP ?? '',
          'field is immutable',
        ),
      );
    }
  }
  return out;
}

function isIntOrPercent(v: unknown): boolean {
  return (
    (typeof v === 'number' && Number.isInteger(v) && v >= 0) ||
    (typeof v === 'string' && /^\d+%$/.test(v))
  );
}

function validatePdb(obj: JsonObject): StatusCause[] {
  const out: StatusCause[] = [];
  const spec = asObject(obj.spec) ?? {};
  if (spec.minAvailable !== undefined && spec.maxUnavailable !== undefined) {
    out.push(
      cause.invalid(
        'spec',
        spec,
        'minAvailable and maxUnavailable cannot be both set',
      ),
    );
  }
  for (const f of ['minAvailable', 'maxUnavailable']) {
    const v = spec[f];
    if (v !== undefined && !isIntOrPercent(v)) {
      out.push(
        cause.invalid(
          `spec.${f}`,
          v,
          'must be an integer or percentage (e.g 5%)',
        ),
      );
    }
  }
  return out;
}

function validateHpa(obj: JsonObject): StatusCause[] {
  const out: StatusCause[] = [];
  const spec = asObject(obj.spec) ?? {};
  const ref = asObject(spec.scaleTargetRef) ?? {};
  if (!ref.kind) out.push(cause.required('spec.scaleTargetRef.kind'));
  if (!ref.name) out.push(cause.required('spec.scaleTargetRef.name'));
  const max = spec.maxReplicas;
  const min = spec.minReplicas ?? 1;
  if (typeof max !== 'number' || max < 1) {
    out.push(
      cause.invalid('spec.maxReplicas', max ?? 0, 'must be greater than 0'),
    );
  } else if (typeof min === 'number' && min > max) {
    out.push(
      cause.invalid(
        'spec.minReplicas',
        min,
        'must be less than or equal to maxReplicas',
      ),
    );
  }
  if (typeof min !== 'number' || min < 1) {
    out.push(
      cause.invalid(
        'spec.minReplicas',
        min,
        'must be greater than or equal to 1',
      ),
    );
  }
  return out;
}

/** Kind-specific validation of a create (old undefined) or an update. */
export function validateObject(
  def: ResourceDef,
  obj: JsonObject,
  old: JsonObject | undefined,
): StatusCause[] {
  const out = validateMeta(obj);
  switch (def.kind) {
    case 'Deployment':
      out.push(...validateDeploymentLike(obj, old));
      break;
    case 'Service':
      out.push(...validateService(obj, old));
      break;
    case 'PodDisruptionBudget':
      out.push(...validatePdb(obj));
      break;
    case 'HorizontalPodAutoscaler':
      out.push(...validateHpa(obj));
      break;
    case 'Secret':
      out.push(...validateSecret(obj, old));
      break;
    case 'Ingress':
      out.push(...validateIngress(obj));
      break;
    default:
      break;
  }
  return out;
}
