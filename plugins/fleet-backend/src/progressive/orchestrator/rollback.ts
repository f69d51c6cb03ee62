import type { CanaryClusterProgress } from '@cnp/plugin-fleet-common';
import pLimit from 'p-limit';
import type { CanaryTarget } from '../traffic/canaryObjects';
import { targetFor, trafficReached } from './canaryTarget';
import { ACTOR, afterRolloutCheck, noteError, type Tick } from './tick';

/** How long a rollback whose revision failed waits before it is tried again. */
const ROLLBACK_RETRY_MS = 30_000;

/** Aborting: each touched cluster back to its previous revision, in Kubernetes order. */
export async function rollBack(tick: Tick) {
  const { t } = tick;
  const p = t.progress;
  const limit = pLimit(tick.deps.concurrency ?? 16);
  await Promise.all(
    p.clusters
      .filter(c => c.state === 'ROLLING_BACK' || c.state === 'ROLLBACK_PENDING')
      .map(c =>
        limit(() =>
          rollBackCluster(tick, c).catch(error => noteError(tick, c, error)),
        ),
      ),
  );
  if (
    !p.clusters.some(
      c => c.state === 'ROLLING_BACK' || c.state === 'ROLLBACK_PENDING',
    )
  ) {
    p.phase = 'ROLLED_BACK';
    const back = p.clusters
      .filter(c => c.state === 'ROLLED_BACK')
      .map(c => c.cluster);
    t.event(
      'ROLLED_BACK',
      `${p.abort?.message ?? 'Aborted'}; back on the previous revision: ${
        back.join(', ') || 'no cluster had changed'
      }`,
      { reason: p.abort?.reason, from: 'ABORTING' },
    );
  }
}

/** One cluster back on its previous revision, stage by stage; one that is not ONLINE waits. */
async function rollBackCluster(tick: Tick, c: CanaryClusterProgress) {
  const { t } = tick;
  const cluster = tick.clusters.get(c.cluster);
  if (!cluster) {
    // Removed from Fleet meanwhile: there is no cluster left to go back on.
    c.state = 'ROLLED_BACK';
    c.stage = null;
    c.message = 'the cluster was removed from Fleet: nothing to roll back';
    t.event('CLUSTER_ROLLED_BACK', `${c.cluster}: ${c.message}`);
    return;
  }
  const online = cluster.status === 'ONLINE';
  if (c.state === 'ROLLBACK_PENDING') {
    if (!online) return;
    c.state = 'ROLLING_BACK';
    c.stage = 'traffic';
    t.event(
      'ROLLBACK_RESUMED',
      `${c.cluster} is ONLINE again: going back to revision ${c.previousRevision}`,
    );
  }
  if (!online) {
    c.state = 'ROLLBACK_PENDING';
    c.message = 'cluster is not ONLINE: goes back when it returns';
    t.event(
      'ROLLBACK_PENDING',
      `${c.cluster} is ${cluster.status}: it goes back to revision ${c.previousRevision} when it returns`,
    );
    return;
  }
  const target = await targetFor(tick, c);
  if (!target) {
    c.state = 'ROLLED_BACK';
    c.message = 'nothing to roll back';
    t.changed = true;
    return;
  }
  if (c.stage === 'traffic') await trafficBack(tick, c, target);
  if (c.stage === 'rollback') await applyPreviousRevision(tick, c);
  if (c.stage === 'wait') await awaitPreviousRevision(tick, c);
  if (c.stage === 'cleanup') await removeCanaryAfterRollback(tick, c, target);
}

/** The traffic off the canary first (Istio routes back, a Rollout aborted). */
async function trafficBack(
  tick: Tick,
  c: CanaryClusterProgress,
  target: CanaryTarget,
) {
  const back = await trafficReached(tick, c, provider =>
    provider.trafficToStable(target, { cause: 'rollback' }),
  );
  if (!back) return;
  c.stage = 'rollback';
  tick.t.changed = true;
}

/** A revision with the previous revision's spec (or the one this rollback made before a restart). */
async function applyPreviousRevision(tick: Tick, c: CanaryClusterProgress) {
  const { t } = tick;
  const { deployments, stores } = tick.deps;
  if (c.pauseUntil && Date.parse(c.pauseUntil) > t.now) return;
  const current = await stores.deployments.getDeployment(c.deploymentId!);
  if (!current) {
    c.state = 'ROLLED_BACK';
    c.message = 'the deployment is gone';
    t.changed = true;
    return;
  }
  const latest = await stores.revisions.getRevision(
    current.id,
    current.revision,
  );
  if (
    latest?.cause === 'rollback' &&
    latest.createdBy === ACTOR &&
    current.revision > (c.revision ?? c.previousRevision ?? 0) &&
    Date.parse(latest.createdAt) >=
      Date.parse(t.progress.abort?.at ?? latest.createdAt)
  ) {
    // Made by this rollback before a restart: followed, not made twice.
    c.revision = current.revision;
  } else {
    const made = await deployments.rollback({
      deploymentId: c.deploymentId!,
      toRevision: c.previousRevision!,
      actor: ACTOR,
      byRelease: true,
    });
    c.revision = made.revision;
  }
  c.stage = 'wait';
  c.pauseUntil = null;
  t.changed = true;
}

/** Follows the previous revision's rollout; a failed one is tried again later. */
async function awaitPreviousRevision(tick: Tick, c: CanaryClusterProgress) {
  const { t } = tick;
  const current = await afterRolloutCheck(tick, c);
  if (
    current &&
    current.revision === c.revision &&
    (current.status === 'PENDING' || current.status === 'PROGRESSING')
  )
    return;
  if (
    current &&
    current.revision === c.revision &&
    current.status === 'FAILED'
  ) {
    // The canary (or the aborted Rollout) still carries the traffic: it stays until the
    // previous revision runs again. The rollback is tried again at the next tick.
    c.stage = 'rollback';
    c.pauseUntil = new Date(t.now + ROLLBACK_RETRY_MS).toISOString();
    c.message = `the rollback failed, tried again in ${
      ROLLBACK_RETRY_MS / 1000
    } s: ${current.message ?? current.statusReason ?? ''}`;
    t.event('ROLLBACK_RETRIED', `${c.cluster}: ${c.message}`);
    return;
  }
  c.stage = 'cleanup';
  t.changed = true;
}

/** The canary removed: the cluster is back. */
async function removeCanaryAfterRollback(
  tick: Tick,
  c: CanaryClusterProgress,
  target: CanaryTarget,
) {
  const { t } = tick;
  if (!(await trafficReached(tick, c, p => p.removeCanary(target)))) return;
  c.state = 'ROLLED_BACK';
  c.stage = null;
  c.weight = 0;
  c.message = `back on revision ${c.previousRevision} (as revision ${c.revision})`;
  t.event(
    'CLUSTER_ROLLED_BACK',
    `${c.cluster}: back on revision ${c.previousRevision}'s spec as revision ${c.revision}`,
  );
}
