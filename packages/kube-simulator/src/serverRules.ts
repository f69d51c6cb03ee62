/**
 * Rules a real cluster checks that no schema can say, beyond validation.ts's: a pod template's
 * node affinity (field selectors on `metadata.name` with exactly one value, the operators'
 * rules for values), and Istio's validating webhook (`validation.istio.io`) for a
 * VirtualService's route weights, which istiod refuses below 0 or above 100, before the
 * object is stored (400, as the API server answers a webhook's denial).
 */
import { nodeFieldSelectorProblems } from '@cnp/plugin-fleet-common';
import { ApiError, cause, StatusCause } from './errors';
import { ResourceDef } from './resourceDef';
import { asArray, asObject, JsonObject } from './util';

function validateExpression(raw: unknown, field: string): StatusCause[] {
  const r = asObject(raw) ?? {};
  const values = asArray(r.values);
  switch (r.operator) {
    case 'In':
    case 'NotIn':
      return values.length === 0
        ? [
            cause.required(
              `${field}.values`,
              "must be specified when `operator` is 'In' or 'NotIn'",
            ),
          ]
        : [];
    case 'Exists':
    case 'DoesNotExist':
      return values.length > 0
        ? [
            cause.forbidden(
              `${field}.values`,
              "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            ),
          ]
        : [];
    case 'Gt':
    case 'Lt':
      return values.length !== 1 || !/^-?\d+$/.test(String(values[0]))
        ? [
            cause.required(
              `${field}.values`,
              "must be specified single value when `operator` is 'Lt' or 'Gt'",
            ),
          ]
        : [];
    default:
      return [
        cause.invalid(
          `${field}.operator`,
          r.operator,
          'not a valid selector operator',
        ),
      ];
  }
}

function validateTerm(raw: unknown, field: string): StatusCause[] {
  const term = asObject(raw) ?? {};
  const out: StatusCause[] = [];
  asArray(term.matchExpressions).forEach((e, i) =>
    out.push(...validateExpression(e, `${field}.matchExpressions[${i}]`)),
  );
  asArray(term.matchFields).forEach((r, i) => {
    const f = `${field}.matchFields[${i}]`;
    const requirement = asObject(r) ?? {};
    for (const problem of nodeFieldSelectorProblems(requirement)) {
      out.push(
        problem.field === 'values'
          ? cause.required(`${f}.values`, problem.message)
          : cause.invalid(
              `${f}.${problem.field}`,
              requirement[problem.field],
              problem.message,
            ),
      );
    }
  });
  return out;
}

/** ValidateNodeAffinity: each term's requirements, required and preferred. */
export function validateNodeAffinity(
  podSpec: JsonObject,
  base: string,
): StatusCause[] {
  const field = `${base}.affinity.nodeAffinity`;
  const node = asObject(asObject(podSpec.affinity)?.nodeAffinity);
  if (!node) return [];
  const out: StatusCause[] = [];
  const required = asObject(
    node.requiredDuringSchedulingIgnoredDuringExecution,
  );
  if (required) {
    const terms = asArray(required.nodeSelectorTerms);
    const f = `${field}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`;
    if (terms.length === 0)
      out.push(cause.required(f, 'must have at least one node selector term'));
    terms.forEach((t, i) => out.push(...validateTerm(t, `${f}[${i}]`)));
  }
  asArray(node.preferredDuringSchedulingIgnoredDuringExecution).forEach(
    (p, i) =>
      out.push(
        ...validateTerm(
          asObject(p)?.preference,
          `${field}.preferredDuringSchedulingIgnoredDuringExecution[${i}].preference`,
        ),
      ),
  );
  return out;
}

/** The causes for a pod template's scheduling rules (the workload kinds). */
export function validateTemplateRules(
  def: ResourceDef,
  obj: JsonObject,
): StatusCause[] {
  const kinds = [
    'Deployment',
    'Rollout',
    'ReplicaSet',
    'StatefulSet',
    'DaemonSet',
    'Job',
  ];
  if (!kinds.includes(def.kind)) return [];
  const podSpec = asObject(asObject(asObject(obj.spec)?.template)?.spec);
  return podSpec ? validateNodeAffinity(podSpec, 'spec.template.spec') : [];
}

/**
 * Istio's validating webhook on a VirtualService: each HTTP and TCP route's weights are
 * between 0 and 100. Throws the API server's answer to the webhook's denial.
 */
export function istioWebhook(def: ResourceDef, obj: JsonObject): void {
  if (def.kind !== 'VirtualService') return;
  const problems: string[] = [];
  const spec = asObject(obj.spec) ?? {};
  for (const list of ['http', 'tcp', 'tls']) {
    asArray(spec[list]).forEach(raw => {
      for (const destination of asArray(asObject(raw)?.route)) {
        const weight = asObject(destination)?.weight;
        if (typeof weight !== 'number') continue;
        if (weight < 0) problems.push(`weight ${weight} < 0`);
        if (weight > 100) problems.push(`weight ${weight} > 100`);
      }
    });
  }
  if (problems.length)
    throw new ApiError(
      400,
      'BadRequest',
      `admission webhook "validation.istio.io" denied the request: configuration is invalid: ${problems.join(
        ', ',
      )}`,
    );
}
