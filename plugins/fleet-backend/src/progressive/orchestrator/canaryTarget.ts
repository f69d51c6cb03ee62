import { steeredWorkload } from '../../deploy/repositoryObjects';
import type { CanaryClusterProgress } from '@cnp/plugin-fleet-common';
import type {
  FleetTrafficProvider,
  FleetTrafficStepOutcome,
} from '@cnp/plugin-fleet-node';
import { imageVersion } from '@cnp/plugin-fleet-common';
import type { AnalysisContext } from '../analysis';
import { resolveIntOrPercent } from '../strategy';
import type { CanaryTarget } from '../traffic/canaryObjects';
import type { Tick } from './tick';

/** The canary's description for the workloads: stable and new revisions' objects, sizes. */
export function targetFor(
  tick: Tick,
  c: CanaryClusterProgress,
): Promise<CanaryTarget | undefined> {
  const key = `${c.cluster}@${c.deploymentId}@${c.previousRevision}`;
  let target = tick.canaries.get(key);
  if (!target) {
    target = readTarget(tick, c);
    tick.canaries.set(key, target);
  }
  return target;
}

/**
 * One step of taking the canary down (traffic back on stable, the canary removed), by the
 * cluster's traffic provider: true once reached; false while it waits or when it failed, to be
 * asked again at the next tick.
 */
export async function trafficReached(
  tick: Tick,
  c: CanaryClusterProgress,
  step: (provider: FleetTrafficProvider) => Promise<FleetTrafficStepOutcome>,
): Promise<boolean> {
  const outcome = await step(tick.deps.traffic.byId(c.mode));
  return outcome.kind === 'reached';
}

async function readTarget(
  tick: Tick,
  c: CanaryClusterProgress,
): Promise<CanaryTarget | undefined> {
  const { stores, deployments } = tick.deps;
  const { application, strategy, record } = tick;
  const cluster = tick.clusters.get(c.cluster);
  if (!cluster || !c.deploymentId || !c.previousRevision) return undefined;
  const previous = await stores.revisions.getRevision(
    c.deploymentId,
    c.previousRevision,
  );
  if (!previous) return undefined;
  const next = await deployments.revisionFor({
    application,
    request: record.request,
    current: previous,
    cluster,
  });
  const stable = await deployments.desiredFor({
    application,
    revision: previous,
    cluster,
  });
  const canary = await deployments.desiredFor({
    application,
    revision: next,
    cluster,
  });
  const replicas =
    next.replicas ??
    previous.replicas ??
    application.spec.replicas ??
    tick.deps.defaultReplicas;
  const weights = strategy.canary.steps.flatMap(s =>
    'setWeight' in s ? [s.setWeight] : [],
  );
  const version = imageVersion(next.image) ?? next.image;
  const maxSurge = resolveIntOrPercent(
    strategy.canary.maxSurge ?? '25%',
    replicas,
    'up',
  );
  const maxUnavailable = resolveIntOrPercent(
    strategy.canary.maxUnavailable ?? 0,
    replicas,
    'down',
  );
  const context: AnalysisContext = {
    cluster: c.cluster,
    app: application.name,
    namespace: stable.namespace,
    revision: c.previousRevision + 1,
    version,
  };
  return {
    cluster: tick.deps.traffic.cluster(cluster),
    namespace: stable.namespace,
    name: application.name,
    stable:
      stable.manifests ?? steeredWorkload(stable.objects, application.name),
    canary:
      canary.manifests ?? steeredWorkload(canary.objects, application.name),
    stableRevision: c.previousRevision,
    canaryRevision: c.previousRevision + 1,
    replicas,
    maxSurge,
    // Both 0 once resolved (25 % of 3 rounds down to 0): one may go, as Kubernetes decides.
    maxUnavailable: maxSurge === 0 && maxUnavailable === 0 ? 1 : maxUnavailable,
    weights,
    istio: strategy.canary.trafficRouting?.istio
      ? {
          virtualService:
            strategy.canary.trafficRouting.istio.virtualService.name,
          routes: strategy.canary.trafficRouting.istio.virtualService.routes,
        }
      : undefined,
    gatewayAPI: strategy.canary.trafficRouting?.gatewayAPI,
    analysis: strategy.analysis
      ? { templates: strategy.analysis.templates, context }
      : undefined,
  };
}
