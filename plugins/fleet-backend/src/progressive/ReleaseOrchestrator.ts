import type {
  LoggerService,
  SchedulerService,
} from '@backstage/backend-plugin-api';
import type {
  Application,
  AnalysisMeasurement,
  AnalysisTemplate,
  CanaryClusterProgress,
  ReleaseStrategy,
} from '@cnp/plugin-fleet-common';
import { imageVersion } from '@cnp/plugin-fleet-common';
import type { FleetTrafficProvider } from '@cnp/plugin-fleet-node';
import pLimit from 'p-limit';
import type {
  ApplicationStore,
  ClusterRecord,
  ClusterStore,
  DeploymentStore,
  ReleaseRecord,
  ReleaseStore,
  RevisionStore,
} from '../database/types';
import type { DeploymentService } from '../deploy/DeploymentService';
import { asError } from '../util/errors';
import { measure as measurePrometheus, type AnalysisContext } from './analysis';
import type { CanaryTarget } from './traffic/canaryObjects';
import type { TrafficProviders } from './traffic/TrafficProviders';
import {
  abortRelease,
  freezePauses,
  HELD_STATES,
  measurementDue,
  nextStep,
  pauseMs,
  recordMeasurement,
  rollbackTimeoutMs,
  Transition,
} from './releaseMachine';
import { resolveIntOrPercent } from './strategy';

export const RELEASE_TASK_ID = 'fleet-releases';
/** How long a rollback whose revision failed waits before it is tried again. */
const ROLLBACK_RETRY_MS = 30_000;
const ACTOR = 'fleet-release';

export interface ReleaseOrchestratorOptions {
  stores: {
    releases: Pick<
      ReleaseStore,
      'listActiveReleases' | 'updateProgress' | 'getRelease'
    >;
    applications: Pick<ApplicationStore, 'getApplication'>;
    clusters: Pick<ClusterStore, 'getCluster' | 'listClusters'>;
    deployments: Pick<DeploymentStore, 'getDeployment' | 'getDeploymentFor'>;
    revisions: Pick<RevisionStore, 'getRevision'>;
  };
  deployments: Pick<
    DeploymentService,
    'deploy' | 'rollback' | 'desiredFor' | 'revisionFor' | 'checkRollout'
  >;
  /** The traffic providers, asked in order for each cluster whose canary starts. */
  traffic: Pick<TrafficProviders, 'cluster' | 'detect' | 'byId'>;
  logger: LoggerService;
  scheduler?: SchedulerService;
  /** The namespace of revisions that name none (`fleet.deploy.namespace`). */
  namespace: string;
  /** How often the releases advance (default 500 ms). */
  tickMs?: number;
  defaultReplicas: number;
  /** One measurement's Prometheus timeout (default 5 s). */
  analysisTimeoutMs?: number;
  measure?: typeof measurePrometheus;
  concurrency?: number;
}

/** What one tick knows about a release. */
interface Tick {
  record: ReleaseRecord;
  strategy: ReleaseStrategy;
  application: Application;
  clusters: Map<string, ClusterRecord>;
  t: Transition;
  targets: ReleaseRecord['targets'];
  /**
   * The first failure of this tick. It is applied once every cluster of the wave has settled:
   * an abort decided while other clusters are mid-step would have them write over it.
   */
  failure?: Parameters<typeof abortRelease>[1];
  /** The clusters whose Kubernetes objects this tick may have changed. */
  touched: Set<string>;
  /** Each cluster's canary description, read once per tick (step, analysis and cleanup share it). */
  canaries: Map<string, Promise<CanaryTarget | undefined>>;
}

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

  /** Advances every running release once. */
  async tick(): Promise<void> {
    const { stores, logger } = this.options;
    const active = await stores.releases.listActiveReleases();
    if (active.length === 0) return;
    const clusters = new Map(
      (await stores.clusters.listClusters()).map(c => [c.name, c]),
    );
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

  private async advance(
    record: ReleaseRecord,
    clusters: Map<string, ClusterRecord>,
  ) {
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
      record,
      strategy: record.strategy,
      application: application!,
      clusters,
      t,
      targets: [...record.targets],
      touched: new Set(),
      canaries: new Map(),
    };
    if (!application) {
      abortRelease(
        t,
        { reason: 'ABORTED', message: 'the application is gone' },
        () => false,
      );
      t.progress.phase = 'ROLLED_BACK';
    } else if (t.progress.phase === 'PROGRESSING') {
      await this.progressWave(tick);
    }
    if (t.progress.phase === 'ABORTING') await this.rollBack(tick);
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

  private isOnline(tick: Tick) {
    return (name: string) => tick.clusters.get(name)?.status === 'ONLINE';
  }

  private async progressWave(tick: Tick) {
    const { t } = tick;
    const p = t.progress;
    if (
      p.currentWave === 0 &&
      p.clusters.every(c => c.state === 'WAITING') &&
      !(await this.preflight(tick))
    )
      return;
    const wave = p.clusters.filter(c => c.wave === p.currentWave);
    const limit = pLimit(this.options.concurrency ?? 16);
    await Promise.all(
      wave.map(c =>
        limit(() =>
          this.advanceCluster(tick, c).catch(error =>
            this.noteError(tick, c, error),
          ),
        ),
      ),
    );
    if (tick.failure) {
      this.applyFailure(tick);
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
        await this.progressWave(tick);
      }
    }
  }

  /**
   * Before the first step on any cluster: on every target that is ONLINE, each object the canary
   * would change must be Fleet's for this component, and the VirtualService it would steer must
   * carry the component's entity-ref. A foreign one ends the release with OWNERSHIP_CONFLICT,
   * nothing changed on any cluster. A cluster that cannot be read now is checked as it starts.
   */
  private async preflight(tick: Tick): Promise<boolean> {
    const { t, application, strategy } = tick;
    const limit = pLimit(this.options.concurrency ?? 16);
    const conflicts = await Promise.all(
      t.progress.clusters.map(c =>
        limit(async () => {
          const cluster = tick.clusters.get(c.cluster);
          if (cluster?.status !== 'ONLINE') return undefined;
          try {
            const deployment = await this.deploymentOn(application, c.cluster);
            if (!deployment) return undefined;
            const { traffic } = this.options;
            const provider = await traffic.detect(
              traffic.cluster(cluster),
              strategy,
            );
            const target = await this.targetFor(tick, {
              ...c,
              deploymentId: deployment.id,
              previousRevision: deployment.revision,
            });
            if (!target) return undefined;
            const conflict = await provider.ownershipConflict(target);
            return conflict ? { cluster: c.cluster, conflict } : undefined;
          } catch (error) {
            this.options.logger.warn(
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
      this.isOnline(tick),
    );
    const c = t.progress.clusters.find(x => x.cluster === found.cluster)!;
    c.message = found.conflict;
    return false;
  }

  private async advanceCluster(
    tick: Tick,
    c: CanaryClusterProgress,
  ): Promise<void> {
    const { t, strategy } = tick;
    // Nothing more on a cluster once this tick has a failure to apply.
    const going = () => t.progress.phase === 'PROGRESSING' && !tick.failure;
    if (!going()) return;
    const cluster = tick.clusters.get(c.cluster);
    if (c.state === 'WAITING') {
      await this.startCluster(tick, c, cluster);
      if ((c.state as CanaryClusterProgress['state']) !== 'RUNNING') {
        // A cluster that cannot start (OFFLINE, a deploy in flight) holds its wave: in time,
        // that is a step past its timeout too.
        if (
          going() &&
          c.stepStartedAt &&
          t.now - Date.parse(c.stepStartedAt) > rollbackTimeoutMs(strategy)
        ) {
          this.fail(tick, {
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
      await this.runStep(tick, c);
      if (going() && c.state === 'RUNNING' && c.weight > 0) {
        await this.analyse(tick, c);
      }
    }
    if (c.state === 'COMPLETING' && going()) {
      await this.complete(tick, c);
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
      this.fail(tick, {
        reason: 'STEP_TIMEOUT',
        message: `Step ${c.stepIndex + 1} on ${
          c.cluster
        } did not finish within ${strategy.rollback?.timeout ?? '15m'}: ${
          c.message ?? ''
        }`,
        cluster: c.cluster,
      });
    }
  }

  /** An error on one cluster is noted on it and retried at the next tick; the others go on. */
  private noteError(tick: Tick, c: CanaryClusterProgress, error: unknown) {
    const message = asError(error).message;
    if (c.message !== message) {
      c.message = message;
      tick.t.changed = true;
    }
    this.options.logger.warn(
      `Release ${tick.record.id} on ${c.cluster}: ${message}`,
    );
  }

  /** A failure: noted now, applied once the wave's clusters have settled (see `Tick.failure`). */
  private fail(tick: Tick, reason: Parameters<typeof abortRelease>[1]) {
    tick.failure ??= reason;
  }

  /** The release aborts, or pauses when rollback is turned off. */
  private applyFailure(tick: Tick) {
    const { t, strategy } = tick;
    const reason = tick.failure!;
    if (strategy.rollback?.enabled === false) {
      t.progress.phase = 'PAUSED';
      t.progress.pausedBy = ACTOR;
      t.progress.abort = { ...reason, at: t.iso };
      freezePauses(t);
      t.event(
        'PAUSED',
        `${reason.message} (rollback is disabled: the release is paused)`,
        { reason: reason.reason, from: 'PROGRESSING' },
      );
      return;
    }
    abortRelease(t, reason, this.isOnline(tick));
  }

  private async startCluster(
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
    const deployment = await this.deploymentOn(application, c.cluster);
    if (!deployment) {
      this.fail(tick, {
        reason: 'STEP_FAILED',
        message: `${application.entityRef} has no deployment on ${c.cluster}`,
        cluster: c.cluster,
      });
      return;
    }
    const { traffic } = this.options;
    let provider: FleetTrafficProvider;
    try {
      provider = await traffic.detect(traffic.cluster(cluster), strategy);
      c.mode = provider.id;
    } catch (error) {
      c.message = `cannot read what ${c.cluster} serves: ${
        asError(error).message
      }`;
      c.stepStartedAt ??= t.iso;
      t.changed = true;
      return;
    }
    if (
      deployment.status === 'PENDING' ||
      deployment.status === 'PROGRESSING'
    ) {
      c.message = `waiting for the deploy in flight on ${c.cluster} to end`;
      c.stepStartedAt ??= t.iso;
      t.changed = true;
      return;
    }
    if (provider.startRefusal) {
      const revision = await this.options.stores.revisions.getRevision(
        deployment.id,
        deployment.revision,
      );
      const refusal = await provider.startRefusal({
        cluster: traffic.cluster(cluster),
        namespace: revision?.namespace ?? this.options.namespace,
        name: application.name,
      });
      if (refusal) {
        this.fail(tick, {
          reason: 'STEP_FAILED',
          message: `${c.cluster}: ${refusal}`,
          cluster: c.cluster,
        });
        return;
      }
    }
    const target = await this.targetFor(tick, {
      ...c,
      deploymentId: deployment.id,
      previousRevision: deployment.revision,
    });
    const conflict = target && (await provider.ownershipConflict(target));
    if (conflict) {
      c.message = conflict;
      t.changed = true;
      this.fail(tick, {
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

  private deploymentOn(application: Application, cluster: string) {
    return this.options.stores.deployments.getDeploymentFor(
      application.id,
      cluster,
    );
  }

  /** The canary's description for the workloads: stable and new revisions' objects, sizes. */
  private targetFor(
    tick: Tick,
    c: CanaryClusterProgress,
  ): Promise<CanaryTarget | undefined> {
    const key = `${c.cluster}@${c.deploymentId}@${c.previousRevision}`;
    let target = tick.canaries.get(key);
    if (!target) {
      target = this.readTarget(tick, c);
      tick.canaries.set(key, target);
    }
    return target;
  }

  private async readTarget(
    tick: Tick,
    c: CanaryClusterProgress,
  ): Promise<CanaryTarget | undefined> {
    const { stores, deployments } = this.options;
    const { application, strategy, record } = tick;
    const cluster = tick.clusters.get(c.cluster);
    if (!cluster || !c.deploymentId || !c.previousRevision) return undefined;
    const previous = await stores.revisions.getRevision(
      c.deploymentId,
      c.previousRevision,
    );
    if (!previous) return undefined;
    const next = await deployments.revisionFor(
      application,
      record.request,
      previous,
      cluster,
    );
    const stable = deployments.desiredFor(application, previous);
    const canary = deployments.desiredFor(application, next);
    const replicas =
      next.replicas ??
      previous.replicas ??
      application.spec.replicas ??
      this.options.defaultReplicas;
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
      cluster: this.options.traffic.cluster(cluster),
      namespace: stable.namespace,
      name: application.name,
      stable: stable.manifests,
      canary: canary.manifests,
      stableRevision: c.previousRevision,
      canaryRevision: c.previousRevision + 1,
      replicas,
      maxSurge,
      // Both 0 once resolved (25 % of 3 rounds down to 0): one may go, as Kubernetes decides.
      maxUnavailable:
        maxSurge === 0 && maxUnavailable === 0 ? 1 : maxUnavailable,
      weights,
      istio: strategy.canary.trafficRouting?.istio
        ? {
            virtualService:
              strategy.canary.trafficRouting.istio.virtualService.name,
            routes: strategy.canary.trafficRouting.istio.virtualService.routes,
          }
        : undefined,
      analysis: strategy.analysis
        ? { templates: strategy.analysis.templates, context }
        : undefined,
    };
  }

  private async runStep(tick: Tick, c: CanaryClusterProgress) {
    const { t, strategy } = tick;
    const steps = strategy.canary.steps;
    if (c.stepIndex >= steps.length) {
      await this.toCompletion(tick, c);
      return;
    }
    const step = steps[c.stepIndex];
    if ('pause' in step) {
      const duration = pauseMs(step);
      if (duration === undefined) {
        if (!c.awaitingPromote) {
          c.awaitingPromote = true;
          c.message = 'paused: waiting for promote';
          t.event(
            'PAUSE_STARTED',
            `${c.cluster}: step ${c.stepIndex + 1} waits for promote at ${
              c.weight
            }%`,
            { reason: 'PAUSE_STARTED' },
          );
        }
        return;
      }
      if (
        !c.pauseUntil &&
        (c.pauseRemainingMs === undefined || c.pauseRemainingMs === null)
      ) {
        c.pauseUntil = new Date(
          Date.parse(c.stepStartedAt ?? t.iso) + duration,
        ).toISOString();
        c.message = `paused until ${c.pauseUntil}`;
        t.event(
          'PAUSE_STARTED',
          `${c.cluster}: step ${c.stepIndex + 1} pauses ${
            step.pause.duration
          } at ${c.weight}%`,
          { reason: 'PAUSE_STARTED' },
        );
      }
      if (c.pauseUntil && Date.parse(c.pauseUntil) <= t.now) {
        nextStep(t, c, 'pause over');
        t.event(
          'STEP_DONE',
          `${c.cluster}: pause of step ${c.stepIndex} over`,
          { reason: 'STEP_DONE' },
        );
        await this.runStep(tick, c);
      }
      return;
    }
    const weight = step.setWeight;
    const provider = this.options.traffic.byId(c.mode);
    if (weight >= 100 && !provider.stepsToFull) {
      await this.toCompletion(tick, c);
      return;
    }
    const target = await this.targetFor(tick, c);
    if (!target) return;
    const weightIndex = target.weights.indexOf(weight);
    const outcome = await provider.step(target, { weight, weightIndex });
    if (outcome.kind === 'failed') {
      this.fail(tick, {
        reason: outcome.reason ?? 'STEP_FAILED',
        message: `${c.cluster}: ${outcome.message}`,
        cluster: c.cluster,
      });
      return;
    }
    if (outcome.kind === 'waiting') {
      if (c.message !== outcome.message) {
        c.message = outcome.message;
        t.changed = true;
      }
      return;
    }
    c.weight = weight;
    nextStep(t, c, outcome.message);
    t.event(
      'WEIGHT_SET',
      `${c.cluster}: step ${c.stepIndex} set weight ${weight}% (${outcome.message})`,
      { reason: 'WEIGHT_SET' },
    );
    if (weight >= 100) {
      await this.toCompletion(tick, c);
      return;
    }
    await this.runStep(tick, c);
  }

  /** Past the last step: analysis must have passed; then the stable workload takes the revision. */
  private async toCompletion(tick: Tick, c: CanaryClusterProgress) {
    const { t, strategy } = tick;
    const templates = strategy.analysis?.templates ?? [];
    const missing = templates
      .filter(tp => !c.passed?.includes(tp.name))
      .map(tp => tp.name);
    if (missing.length) {
      const message = `at 100%: waiting for a successful analysis (${missing.join(
        ', ',
      )})`;
      if (c.message !== message) {
        c.message = message;
        t.changed = true;
      }
      if (c.weight > 0) await this.analyse(tick, c);
      return;
    }
    const provider = this.options.traffic.byId(c.mode);
    if (provider.stepsToFull && c.stepIndex >= strategy.canary.steps.length) {
      // A provider that carries the traffic to 100 % itself (a Rollout, once promoted past its
      // last pause) finishes its last steps.
      const target = await this.targetFor(tick, c);
      if (!target) return;
      const weights = target.weights;
      if (weights[weights.length - 1] < 100) {
        const outcome = await provider.step(target, {
          weight: 100,
          weightIndex: weights.length,
        });
        if (outcome.kind !== 'reached') {
          if (outcome.kind === 'failed')
            this.fail(tick, {
              reason: outcome.reason ?? 'STEP_FAILED',
              message: `${c.cluster}: ${outcome.message}`,
              cluster: c.cluster,
            });
          return;
        }
      }
    }
    c.state = 'COMPLETING';
    c.stage = 'deploy';
    c.weight = 100;
    c.stepIndex = strategy.canary.steps.length;
    c.stepStartedAt = t.iso;
    c.message = 'at 100%: the stable workload takes the new revision';
    t.event(
      'CLUSTER_PROMOTED',
      `${c.cluster}: promoted to 100%; the stable workload takes the new revision`,
      { reason: 'CLUSTER_PROMOTED' },
    );
  }

  private async complete(tick: Tick, c: CanaryClusterProgress) {
    const { t, application, record } = tick;
    const { deployments, stores } = this.options;
    if (c.stage === 'deploy') {
      const current = await stores.deployments.getDeployment(c.deploymentId!);
      if (current && current.revision > (c.previousRevision ?? 0)) {
        // Made by this release before a restart: adopted, not made twice. Anything else (a
        // deploy or a rollback by hand during the canary) is not the release's to finish.
        const newer = await stores.revisions.getRevision(
          current.id,
          current.revision,
        );
        const ours =
          newer?.cause === 'release' &&
          newer.createdBy === record.createdBy &&
          Date.parse(newer.createdAt) >= Date.parse(record.createdAt);
        if (!ours) {
          this.fail(tick, {
            reason: 'STEP_FAILED',
            message: `${c.cluster}: revision ${current.revision} (${
              newer?.cause ?? 'unknown'
            } by ${newer?.createdBy ?? 'someone'}) came in during the release`,
            cluster: c.cluster,
          });
          return;
        }
        c.revision = current.revision;
      } else {
        const made = await deployments.deploy(
          {
            entityRef: application.entityRef,
            cluster: c.cluster,
            image: record.request.image,
            replicas: record.request.replicas,
            env: record.request.env,
            cause: 'release',
          },
          record.createdBy,
        );
        c.revision = made.revision;
      }
      tick.targets = [
        ...tick.targets.filter(x => x.cluster !== c.cluster),
        {
          cluster: c.cluster,
          deploymentId: c.deploymentId!,
          revision: c.revision!,
        },
      ];
      c.stage = 'wait';
      t.changed = true;
    }
    if (c.stage === 'wait') {
      // The rollout is checked at the tick's pace, not at the deploy poll's.
      await deployments.checkRollout(c.deploymentId!, c.revision!);
      const current = await stores.deployments.getDeployment(c.deploymentId!);
      if (!current || current.revision !== c.revision) {
        this.fail(tick, {
          reason: 'STEP_FAILED',
          message: `${c.cluster}: the deployment moved on to another revision during the release`,
          cluster: c.cluster,
        });
        return;
      }
      if (current.status === 'FAILED') {
        this.fail(tick, {
          reason: 'STEP_FAILED',
          message: `${c.cluster}: the new revision failed: ${
            current.message ?? current.statusReason ?? ''
          }`,
          cluster: c.cluster,
        });
        return;
      }
      if (current.status !== 'DEPLOYED') return;
      c.stage = 'cleanup';
      t.changed = true;
    }
    if (c.stage === 'cleanup') {
      const target = await this.targetFor(tick, c);
      if (!target) return;
      const provider = this.options.traffic.byId(c.mode);
      const traffic = await provider.trafficToStable(target, {
        cause: 'completion',
      });
      if (traffic.kind !== 'reached') return;
      const removed = await provider.removeCanary(target);
      if (removed.kind !== 'reached') return;
      c.state = 'DONE';
      c.stage = null;
      c.message = `on revision ${c.revision}`;
      t.event(
        'CLUSTER_DONE',
        `${c.cluster}: on revision ${c.revision}, canary removed`,
        { reason: 'CLUSTER_DONE' },
      );
    }
  }

  private async analyse(tick: Tick, c: CanaryClusterProgress) {
    const { t, strategy } = tick;
    const templates = strategy.analysis?.templates ?? [];
    const due = templates.filter(tp =>
      measurementDue(t.progress, c.cluster, tp, t.now),
    );
    if (!due.length) return;
    const target = await this.targetFor(tick, c);
    if (!target?.analysis) return;
    const measure = this.options.measure ?? measurePrometheus;
    const results: Array<[AnalysisTemplate, AnalysisMeasurement]> =
      await Promise.all(
        due.map(
          async tp =>
            [
              tp,
              await measure(tp, target.analysis!.context, {
                timeoutMs: this.options.analysisTimeoutMs ?? 5_000,
              }),
            ] as [AnalysisTemplate, AnalysisMeasurement],
        ),
      );
    for (const [tp, m] of results) {
      const failureLimit = tp.failureLimit ?? 0;
      const abort = recordMeasurement(t, c, m, {
        failureLimit,
        inconclusiveLimit: tp.inconclusiveLimit ?? failureLimit,
      });
      if (abort && t.progress.phase === 'PROGRESSING') {
        this.fail(tick, abort);
        return;
      }
    }
  }

  /** Aborting: each touched cluster back to its previous revision, in Kubernetes order. */
  private async rollBack(tick: Tick) {
    const { t } = tick;
    const p = t.progress;
    const limit = pLimit(this.options.concurrency ?? 16);
    await Promise.all(
      p.clusters
        .filter(
          c => c.state === 'ROLLING_BACK' || c.state === 'ROLLBACK_PENDING',
        )
        .map(c =>
          limit(() =>
            this.rollBackCluster(tick, c).catch(error =>
              this.noteError(tick, c, error),
            ),
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

  private async rollBackCluster(tick: Tick, c: CanaryClusterProgress) {
    const { t } = tick;
    const { deployments, stores, traffic } = this.options;
    const provider = traffic.byId(c.mode);
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
    const target = await this.targetFor(tick, c);
    if (!target) {
      c.state = 'ROLLED_BACK';
      c.message = 'nothing to roll back';
      t.changed = true;
      return;
    }
    if (c.stage === 'traffic') {
      const outcome = await provider.trafficToStable(target, {
        cause: 'rollback',
      });
      if (outcome.kind !== 'reached') return;
      c.stage = 'rollback';
      t.changed = true;
    }
    if (c.stage === 'rollback') {
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
        const made = await deployments.rollback(
          c.deploymentId!,
          c.previousRevision!,
          ACTOR,
          { byRelease: true },
        );
        c.revision = made.revision;
      }
      c.stage = 'wait';
      c.pauseUntil = null;
      t.changed = true;
    }
    if (c.stage === 'wait') {
      await deployments.checkRollout(c.deploymentId!, c.revision!);
      const current = await stores.deployments.getDeployment(c.deploymentId!);
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
    if (c.stage === 'cleanup') {
      const removed = await provider.removeCanary(target);
      if (removed.kind !== 'reached') return;
      c.state = 'ROLLED_BACK';
      c.stage = null;
      c.weight = 0;
      c.message = `back on revision ${c.previousRevision} (as revision ${c.revision})`;
      t.event(
        'CLUSTER_ROLLED_BACK',
        `${c.cluster}: back on revision ${c.previousRevision}'s spec as revision ${c.revision}`,
      );
    }
  }
}
