import {
  configKeyProblems,
  ingressHostProblems,
  ingressPathProblems,
  nodeFieldSelectorProblems,
  requestsAboveLimits,
} from '@cnp/plugin-fleet-common';
import { z } from 'zod';

/**
 * What the Kubernetes API server refuses of the values an application, a placement or a release
 * carries into the objects Fleet applies, and no request schema can say: an Ingress host that is
 * an IP address, an Ingress path with `//`, `/./` or `/../`, a Secret or ConfigMap key such as
 * `..`, a request above its limit, a node field selector without exactly one value. The rules
 * are the API server's own (shared with the simulated one), so such input is a 400 naming the
 * field before anything is applied, not a failed deploy after part of it was.
 */

type Path = Array<string | number>;
type Issue = { path: Path; message: string };

const asRecord = (value: unknown): Record<string, unknown> | undefined =>
  value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;

const asList = (value: unknown): unknown[] =>
  Array.isArray(value) ? value : [];

/** An env map's key references (`valueFrom.secretKeyRef.key`, `configMapKeyRef.key`). */
export function envIssues(env: unknown, path: Path): Issue[] {
  const out: Issue[] = [];
  for (const [name, value] of Object.entries(asRecord(env) ?? {})) {
    const from = asRecord(asRecord(value)?.valueFrom) ?? {};
    for (const ref of ['secretKeyRef', 'configMapKeyRef']) {
      const key = asRecord(from[ref])?.key;
      if (typeof key !== 'string') continue;
      for (const message of configKeyProblems(key))
        out.push({ path: [...path, name, 'valueFrom', ref, 'key'], message });
    }
  }
  return out;
}

function nodeSelectorTermIssues(term: unknown, path: Path): Issue[] {
  return asList(asRecord(term)?.matchFields).flatMap((requirement, i) =>
    nodeFieldSelectorProblems(asRecord(requirement) ?? {}).map(problem => ({
      path: [...path, 'matchFields', i, problem.field],
      message: problem.message,
    })),
  );
}

function affinityIssues(affinity: unknown, path: Path): Issue[] {
  const node = asRecord(asRecord(affinity)?.nodeAffinity);
  if (!node) return [];
  const base = [...path, 'nodeAffinity'];
  const required = 'requiredDuringSchedulingIgnoredDuringExecution';
  const preferred = 'preferredDuringSchedulingIgnoredDuringExecution';
  return [
    ...asList(asRecord(node[required])?.nodeSelectorTerms).flatMap((term, i) =>
      nodeSelectorTermIssues(term, [...base, required, 'nodeSelectorTerms', i]),
    ),
    ...asList(node[preferred]).flatMap((item, i) =>
      nodeSelectorTermIssues(asRecord(item)?.preference, [
        ...base,
        preferred,
        i,
        'preference',
      ]),
    ),
  ];
}

/** An application spec's values, each issue under `path` (`['spec']`). */
export function applicationSpecIssues(spec: unknown, path: Path): Issue[] {
  const s = asRecord(spec);
  if (!s) return [];
  const out: Issue[] = [];
  const ingress = asRecord(s.ingress);
  if (typeof ingress?.host === 'string') {
    for (const message of ingressHostProblems(ingress.host))
      out.push({ path: [...path, 'ingress', 'host'], message });
  }
  if (typeof ingress?.path === 'string') {
    // Fleet's Ingress matches the path as a Prefix.
    for (const message of ingressPathProblems(ingress.path, 'Prefix'))
      out.push({ path: [...path, 'ingress', 'path'], message });
  }
  const resources = asRecord(s.resources);
  if (resources) {
    const above = requestsAboveLimits({
      requests: asRecord(resources.requests),
      limits: asRecord(resources.limits),
    });
    for (const { name, message } of above)
      out.push({ path: [...path, 'resources', 'requests', name], message });
  }
  out.push(...envIssues(s.env, [...path, 'env']));
  out.push(...affinityIssues(s.affinity, [...path, 'affinity']));
  return out;
}

/** A placement's overrides' env values. */
export function placementIssues(placement: unknown, path: Path): Issue[] {
  return asList(asRecord(placement)?.overrides).flatMap((override, i) =>
    envIssues(asRecord(override)?.env, [...path, 'overrides', i, 'env']),
  );
}

/** Adds the issues to a zod refinement, each at its own path. */
export function addIssues(ctx: z.RefinementCtx, issues: Issue[]): void {
  for (const { path, message } of issues)
    ctx.addIssue({ code: z.ZodIssueCode.custom, path, message });
}
