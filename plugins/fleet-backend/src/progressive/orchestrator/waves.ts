import type { CanaryClusterProgress } from '@cnp/plugin-fleet-common';
import pLimit from 'p-limit';
import { asError } from '../../util/errors';
import {
  abortRelease,
  pauseForAnalysis,
  rollbackTimeoutMs,
} from '../releaseMachine';
import { targetFor } from './canaryTarget';
import { complete } from './completion';
import { startCluster } from './startCluster';
import { analyse, runStep } from './steps';
import {
  applyFailure,
  deploymentOn,
  fail,
  isOnline,
  noteError,
  type Tick,
} from './tick';

export async function progressWave(tick: Tick) {
  const { t } = tick;
  const p = t.progress;
  if (
    p.currentWave === 0 &&
    p.clusters.every(c => c.state === 'WAITING') &&
    !(await preflight(tick))
  )
    return;
  const wave = p.clusters.filter(c => c.wave === p.currentWave);
  const limit = pLimit(tick.deps.concurrency ?? 16);
  await Promise.all(
    wave.map(c =>
      limit(() =>
        advanceCluster(tick, c).catch(error => noteError(tick, c, error)),
      ),
    ),
  );
  if (tick.failure) {
    // The abort sends every cluster the release changed back, or marks it pending.
    await tick.loadClusters(p.clusters.map(x => x.cluster));
    applyFailure(tick);
    return;
  }
  if (tick.pause) {
    pauseForAnalysis(t, tick.pause, tick.pauseReason);
    return;
  }
  if (p.phase !== 'PROGRESSING') return;
  if (wave.every(c => c.state === 'DONE')) {
    p.currentWave += 1;
    if (p.currentWave >= p.waves.length) {
      p.phase = 'COMPLETED';
      t.event(
        'COMPLETED',
        `Every cluster runs the new revision (${p.clusters.length} clusters in ${p.waves.length} waves)`,
        { from: 'PROGRESSING' },
      );
    } else {
      t.event(
        'WAVE_STARTED',
        `Wave ${p.currentWave + 1} of ${p.waves.length} started: ${p.waves[
          p.currentWave
        ].join(', ')}`,
      );
      // The next wave starts in this same tick: no interval lost between waves.
      await tick.loadClusters(p.waves[p.currentWave]);
      await progressWave(tick);
    }
  }
}

/**
 * Before the first step on any cluster: on every target that is ONLINE, each object the canary
 * would change must be Fleet's for this component, and the VirtualService it would steer must
 * carry the component's entity-ref. A foreign one ends the release with OWNERSHIP_CONFLICT,
 * nothing changed on any cluster. A cluster that cannot be read now is checked as it starts.
 */
export async function preflight(tick: Tick): Promise<boolean> {
  const { t, strategy } = tick;
  const limit = pLimit(tick.deps.concurrency ?? 16);
  const conflicts = await Promise.all(
    t.progress.clusters.map(c =>
      limit(async () => {
        const cluster = tick.clusters.get(c.cluster);
        if (cluster?.status !== 'ONLINE') return undefined;
        try {
          const deployment = await deploymentOn(tick, c.cluster);
          if (!deployment) return undefined;
          const { traffic } = tick.deps;
          const provider = await traffic.detect(
            traffic.cluster(cluster),
            strategy,
          );
          const target = await targetFor(tick, {
            ...c,
            deploymentId: deployment.id,
            previousRevision: deployment.revision,
          });
          if (!target) return undefined;
          const conflict = await provider.ownershipConflict(target);
          return conflict ? { cluster: c.cluster, conflict } : undefined;
        } catch (error) {
          tick.deps.logger.warn(
            `Release ${tick.record.id}: could not check ${
              c.cluster
            } before the first step: ${asError(error).message}`,
          );
          return undefined;
        }
      }),
    ),
  );
  const found = conflicts.find(x => x !== undefined);
  if (!found) return true;
  // Nothing was changed anywhere: the release ends, whether rollback is enabled or not.
  abortRelease(
    t,
    {
      reason: 'OWNERSHIP_CONFLICT',
      message: `${found.cluster}: ${found.conflict}`,
      cluster: found.cluster,
    },
    isOnline(tick),
  );
  const c = t.progress.clusters.find(x => x.cluster === found.cluster)!;
  c.message = found.conflict;
  return false;
}

export async function advanceCluster(
  tick: Tick,
  c: CanaryClusterProgress,
): Promise<void> {
  const { t, strategy } = tick;
  // Nothing more on a cluster once this tick has a failure (or a pause) to apply.
  const going = () =>
    t.progress.phase === 'PROGRESSING' && !tick.failure && !tick.pause;
  if (!going()) return;
  const cluster = tick.clusters.get(c.cluster);
  if (c.state === 'WAITING') {
    await startCluster(tick, c, cluster);
    if ((c.state as CanaryClusterProgress['state']) !== 'RUNNING') {
      // A cluster that cannot start (OFFLINE, a deploy in flight) holds its wave: in time,
      // that is a step past its timeout too.
      if (
        going() &&
        c.stepStartedAt &&
        t.now - Date.parse(c.stepStartedAt) > rollbackTimeoutMs(strategy)
      ) {
        fail(tick, {
          reason: 'STEP_TIMEOUT',
          message: `${c.cluster} could not start its canary within ${
            strategy.rollback?.timeout ?? '15m'
          }: ${c.message ?? ''}`,
          cluster: c.cluster,
        });
      }
      return;
    }
  }
  tick.touched.add(c.cluster);
  if (c.state === 'RUNNING' && going()) {
    await runStep(tick, c);
    if (going() && c.state === 'RUNNING' && c.weight > 0) {
      await analyse(tick, c);
    }
  }
  if (c.state === 'COMPLETING' && going()) {
    await complete(tick, c);
  }
  // A step that waits too long (a canary that never becomes available) aborts the release.
  if (
    going() &&
    (c.state === 'RUNNING' || c.state === 'COMPLETING') &&
    !c.awaitingPromote &&
    !c.pauseUntil &&
    c.stepStartedAt &&
    t.now - Date.parse(c.stepStartedAt) > rollbackTimeoutMs(strategy)
  ) {
    fail(tick, {
      reason: 'STEP_TIMEOUT',
      message: `Step ${c.stepIndex + 1} on ${c.cluster} did not finish within ${
        strategy.rollback?.timeout ?? '15m'
      }: ${c.message ?? ''}`,
      cluster: c.cluster,
    });
  }
}
