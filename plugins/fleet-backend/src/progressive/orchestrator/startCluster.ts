import type { CanaryClusterProgress } from '@cnp/plugin-fleet-common';
import type { FleetTrafficProvider } from '@cnp/plugin-fleet-node';
import type { ClusterRecord } from '../../database/types';
import { asError } from '../../util/errors';
import { targetFor } from './canaryTarget';
import { baselineRefusal } from './judging';
import { deploymentOn, fail, type Tick } from './tick';

export async function startCluster(
  tick: Tick,
  c: CanaryClusterProgress,
  cluster?: ClusterRecord,
) {
  const { t, application, strategy } = tick;
  if (!cluster || cluster.status !== 'ONLINE') {
    const message = `waiting for ${c.cluster} to be ONLINE (it is ${
      cluster?.status ?? 'gone'
    })`;
    if (c.message !== message) {
      c.message = message;
      t.changed = true;
    }
    c.stepStartedAt ??= t.iso;
    return;
  }
  const deployment = await deploymentOn(tick, c.cluster);
  if (!deployment) {
    fail(tick, {
      reason: 'STEP_FAILED',
      message: `${application.entityRef} has no deployment on ${c.cluster}`,
      cluster: c.cluster,
    });
    return;
  }
  const { traffic } = tick.deps;
  let provider: FleetTrafficProvider;
  try {
    provider = await traffic.detect(traffic.cluster(cluster), strategy);
    c.mode = provider.id;
  } catch (error) {
    waitOn(
      tick,
      c,
      `cannot read what ${c.cluster} serves: ${asError(error).message}`,
    );
    return;
  }
  if (deployment.status === 'PENDING' || deployment.status === 'PROGRESSING') {
    waitOn(tick, c, `waiting for the deploy in flight on ${c.cluster} to end`);
    return;
  }
  const noBaseline = baselineRefusal(strategy, provider);
  if (noBaseline || provider.startRefusal) {
    const revision = await tick.deps.stores.revisions.getRevision(
      deployment.id,
      deployment.revision,
    );
    const refusal =
      noBaseline ??
      (await provider.startRefusal?.({
        cluster: traffic.cluster(cluster),
        namespace: revision?.namespace ?? tick.deps.namespace,
        name: application.name,
      }));
    if (refusal) {
      fail(tick, {
        reason: 'STEP_FAILED',
        message: `${c.cluster}: ${refusal}`,
        cluster: c.cluster,
      });
      return;
    }
  }
  const target = await targetFor(tick, {
    ...c,
    deploymentId: deployment.id,
    previousRevision: deployment.revision,
  });
  const conflict = target && (await provider.ownershipConflict(target));
  if (conflict) {
    c.message = conflict;
    t.changed = true;
    fail(tick, {
      reason: 'OWNERSHIP_CONFLICT',
      message: `${c.cluster}: ${conflict}`,
      cluster: c.cluster,
    });
    return;
  }
  c.deploymentId = deployment.id;
  c.previousRevision = deployment.revision;
  c.state = 'RUNNING';
  c.stepIndex = 0;
  c.stepStartedAt = t.iso;
  c.message = `canary started (${c.mode})`;
  t.event(
    'CLUSTER_STARTED',
    `${c.cluster}: canary started through ${provider.description}, from revision ${deployment.revision}`,
    { reason: 'CLUSTER_STARTED' },
  );
}

/**
 * A cluster whose canary cannot start yet says why; the release is written (and its panel told)
 * only when that changes, not at every tick it waits.
 */
function waitOn(tick: Tick, c: CanaryClusterProgress, message: string) {
  const { t } = tick;
  if (c.message === message && c.stepStartedAt) return;
  c.message = message;
  c.stepStartedAt ??= t.iso;
  t.changed = true;
}
