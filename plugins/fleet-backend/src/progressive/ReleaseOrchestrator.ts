import type { ReleaseRecord } from '../database/types';
import { asError } from '../util/errors';
import { abortRelease, HELD_STATES, Transition } from './releaseMachine';
import { rollBack } from './orchestrator/rollback';
import type { ReleaseOrchestratorOptions, Tick } from './orchestrator/tick';
import { clustersToRead, TickClusters } from './orchestrator/tickClusters';
import { progressWave } from './orchestrator/waves';

export type { ReleaseOrchestratorOptions } from './orchestrator/tick';

export const RELEASE_TASK_ID = 'fleet-releases';

/**
 * Drives releases with a strategy: a scheduled task, on one replica at a time, reads every
 * running release from the database and moves each cluster of its current wave one step on
 * (weights, pauses, analysis, completion, rollback), then writes the new state and its events
 * in one transaction, only if nobody (a promote or abort through the API) wrote it meanwhile.
 * Everything it does to a cluster is idempotent, so a restart resumes at the step it was on.
 */
export class ReleaseOrchestrator {
  private constructor(private readonly options: ReleaseOrchestratorOptions) {}

  static create(options: ReleaseOrchestratorOptions): ReleaseOrchestrator {
    return new ReleaseOrchestrator(options);
  }

  async start(): Promise<void> {
    const { scheduler } = this.options;
    if (!scheduler)
      throw new Error('ReleaseOrchestrator.start needs a scheduler');
    await scheduler.scheduleTask({
      id: RELEASE_TASK_ID,
      scope: 'global',
      frequency: { milliseconds: this.options.tickMs ?? 500 },
      timeout: { minutes: 5 },
      initialDelay: { seconds: 1 },
      fn: async () => {
        await this.tick();
      },
    });
  }

  /** The deployments whose live objects a running release holds. */
  async heldDeployments(): Promise<Set<string>> {
    const active = await this.options.stores.releases.listActiveReleases();
    const held = new Set<string>();
    for (const release of active) {
      for (const c of release.progress?.clusters ?? []) {
        if (c.deploymentId && HELD_STATES.has(c.state))
          held.add(c.deploymentId);
      }
    }
    return held;
  }

  /** Starts the releases whose freeze window closed, then advances every running release once. */
  async tick(): Promise<void> {
    const { stores, logger, openGates } = this.options;
    try {
      await openGates?.();
    } catch (error) {
      logger.warn('Waiting releases could not be started', asError(error));
    }
    const active = await stores.releases.listActiveReleases();
    if (active.length === 0) return;
    // Only the clusters the releases' current work names: not the whole fleet, twice a second.
    const clusters = new TickClusters(stores.clusters);
    await Promise.all(
      active.map(async record => {
        try {
          await this.advance(record, clusters);
        } catch (error) {
          logger.warn(`Release ${record.id} could not advance`, asError(error));
        }
      }),
    );
  }

  private async advance(record: ReleaseRecord, clusters: TickClusters) {
    const { stores } = this.options;
    if (!record.progress || !record.strategy) return;
    const application = await stores.applications.getApplication(
      record.applicationId,
    );
    const t = new Transition(
      record.id,
      structuredClone(record.progress),
      Date.now(),
    );
    const tick: Tick = {
      deps: this.options,
      record,
      strategy: record.strategy,
      application: application!,
      clusters: clusters.byName,
      loadClusters: names => clusters.load(names),
      t,
      targets: [...record.targets],
      touched: new Set(),
      canaries: new Map(),
    };
    await tick.loadClusters(clustersToRead(t.progress));
    if (!application) {
      abortRelease(
        t,
        { reason: 'ABORTED', message: 'the application is gone' },
        () => false,
      );
      t.progress.phase = 'ROLLED_BACK';
    } else if (t.progress.phase === 'PROGRESSING') {
      await progressWave(tick);
    }
    if (t.progress.phase === 'ABORTING') await rollBack(tick);
    if (!t.changed) return;
    t.progress.updatedAt = t.iso;
    const written = await stores.releases.updateProgress(
      record.id,
      record.version,
      t.progress,
      {
        targets: tick.targets,
        events: t.events,
      },
    );
    if (!written) await this.afterConflict(tick);
    else if (t.events.length === 0 && application) {
      // No status event carries this write to the component's release panel: say it changed.
      this.options.listener?.releaseProgressed({
        releaseId: record.id,
        entityRef: application.entityRef,
        phase: t.progress.phase,
      });
    }
  }

  /**
   * Someone (an abort or a pause through the API) wrote the release while this tick changed
   * clusters; this tick's state is dropped, and the next one redoes its steps idempotently. But
   * an abort that saw a cluster still WAITING would leave the canary this tick started there:
   * such clusters are handed to the rollback.
   */
  private async afterConflict(tick: Tick) {
    const { stores, logger } = this.options;
    for (let attempt = 0; attempt < 3; attempt++) {
      const fresh = await stores.releases.getRelease(tick.record.id);
      if (!fresh?.progress) return;
      const p = structuredClone(fresh.progress);
      if (p.phase !== 'ABORTING' && p.phase !== 'ROLLED_BACK') return;
      const t = new Transition(fresh.id, p, Date.now());
      for (const c of p.clusters) {
        const ours = tick.t.progress.clusters.find(
          x => x.cluster === c.cluster,
        );
        if (!ours || !tick.touched.has(c.cluster)) continue;
        if (c.state !== 'SKIPPED' && c.state !== 'WAITING') continue;
        Object.assign(c, {
          state: 'ROLLING_BACK',
          stage: 'traffic',
          mode: ours.mode,
          deploymentId: ours.deploymentId,
          previousRevision: ours.previousRevision,
          message: 'its canary had started as the release aborted: going back',
        });
        t.event(
          'CLUSTER_ROLLING_BACK',
          `${c.cluster}: its canary had started as the release aborted; it goes back to revision ${ours.previousRevision}`,
        );
      }
      if (!t.changed) return;
      p.phase = 'ABORTING';
      p.updatedAt = t.iso;
      if (
        await stores.releases.updateProgress(fresh.id, fresh.version, p, {
          events: t.events,
        })
      )
        return;
    }
    logger.warn(
      `Release ${tick.record.id}: could not hand this tick's clusters to the rollback; the next tick retries`,
    );
  }
}
