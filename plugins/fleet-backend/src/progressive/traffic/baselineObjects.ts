import type { V1Deployment, V1Service } from '@kubernetes/client-node';
import { NAME_LABEL } from '../../deploy/manifests';
import { serverSideApply } from '../../kubernetes/serverSideApply';
import {
  baselineName,
  baselineServiceName,
  canaryName,
  guarded,
  readDeployment,
  readServiceOf,
  scale,
  TRACK_LABEL,
  type CanaryTarget,
  type Session,
  type StepOutcome,
} from './canaryObjects';

/*
 * The baseline of a canary judged against one: the stable revision's pods, as many as the
 * canary has, started beside it so that both are measured over the same window under the same
 * load. A canary compared with the long-running stable pods would also be compared with their
 * warm caches and their age; a fresh baseline is not.
 */

/**
 * The baseline's Deployment: the stable revision's, named `<name>-baseline`, its pods tracked
 * `baseline` (in their labels and in its selector) and never `stable`, so a Service narrowed to
 * the stable track never selects them. It carries the stable Deployment's marks (Fleet's
 * ownership, the entity ref), as the canary's carries the new revision's.
 */
export function baselineDeployment(
  target: CanaryTarget,
  replicas: number,
): V1Deployment {
  const base = structuredClone(target.stable.deployment);
  const track = { [TRACK_LABEL]: 'baseline' };
  base.metadata = {
    ...base.metadata,
    name: baselineName(target.name),
    labels: { ...base.metadata?.labels, ...track },
  };
  base.spec!.replicas = replicas;
  base.spec!.selector = {
    matchLabels: { ...base.spec!.selector.matchLabels, ...track },
  };
  base.spec!.template.metadata = {
    ...base.spec!.template.metadata,
    labels: { ...base.spec!.template.metadata?.labels, ...track },
  };
  return base;
}

/** Whether the canary is judged against a baseline: a template of its analysis has `compare`. */
export function judgedTarget(target: CanaryTarget): boolean {
  return (target.analysis?.templates ?? []).some(tp => tp.compare);
}

/**
 * The baseline Deployment at `replicas`: created when it is missing, scaled when it differs.
 * Answers it as it is live (created: as the API server answered). A Deployment of that name that
 * is not Fleet's for this component is an ownership conflict, never changed.
 */
export async function ensureBaseline(
  s: Session,
  target: CanaryTarget,
  replicas: number,
): Promise<V1Deployment> {
  const name = baselineName(target.name);
  const live = await readDeployment(s, target, name);
  if (!live) {
    return serverSideApply(
      baselineDeployment(target, replicas),
      undefined,
      {
        patch: (params, options) =>
          s.apps.patchNamespacedDeployment(
            { namespace: target.namespace, name, ...params },
            options,
          ),
        create: (params, options) =>
          s.apps.createNamespacedDeployment(
            { namespace: target.namespace, ...params },
            options,
          ),
      },
      s.opts,
    );
  }
  if ((live.spec?.replicas ?? 0) !== replicas) {
    await scale(s, target.namespace, name, replicas);
    return { ...live, spec: { ...live.spec!, replicas } };
  }
  return live;
}

/**
 * The baseline at the canary's live size (the canary grows step by step). Reached once
 * written; an ownership conflict fails.
 */
export function syncBaseline(
  target: CanaryTarget,
  timeoutMs: number,
): Promise<StepOutcome> {
  return guarded(target, timeoutMs, async s => {
    const canary = await readDeployment(s, target, canaryName(target.name));
    const replicas = canary?.spec?.replicas ?? 0;
    await ensureBaseline(s, target, replicas);
    return { kind: 'reached', message: `baseline at ${replicas} replicas` };
  });
}

/** The baseline's Service under Istio: the canary's, selecting the baseline's pods alone. */
export function baselineService(target: CanaryTarget): V1Service {
  const base = structuredClone(target.stable.service);
  base.metadata = { ...base.metadata, name: baselineServiceName(target) };
  base.spec!.selector = {
    [NAME_LABEL]: target.name,
    [TRACK_LABEL]: 'baseline',
  };
  return base;
}

/** Applies the baseline's Service (when the one of that name, if any, is Fleet's). */
export async function applyBaselineService(s: Session, target: CanaryTarget) {
  const name = baselineServiceName(target);
  const live = await readServiceOf(s, target, name);
  await serverSideApply(
    baselineService(target),
    live,
    {
      patch: (params, options) =>
        s.core.patchNamespacedService(
          { namespace: target.namespace, name, ...params },
          options,
        ),
      create: (params, options) =>
        s.core.createNamespacedService(
          { namespace: target.namespace, ...params },
          options,
        ),
    },
    s.opts,
  );
}

/**
 * The baseline's share when the canary is judged against one: the canary's, as long as the
 * stable keeps what is left (at most half each past a weight of 50).
 */
export function baselineWeight(weight: number): number {
  return Math.max(0, Math.min(weight, 100 - weight));
}
