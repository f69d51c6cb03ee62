import type {
  LoggerService,
  SchedulerService,
} from '@backstage/backend-plugin-api';
import type {
  AnalysisMeasurement,
  AnalysisTemplate,
  Application,
  CanaryClusterProgress,
  ReleaseStrategy,
} from '@cnp/plugin-fleet-common';
import type {
  ApplicationStore,
  ClusterRecord,
  ClusterStore,
  DeploymentStore,
  ReleaseRecord,
  ReleaseStore,
  RevisionStore,
} from '../../database/types';
import type { DeploymentService } from '../../deploy/DeploymentService';
import type { FleetListener } from '../../events/FleetListener';
import { asError } from '../../util/errors';
import type { AnalysisContext } from '../analysis';
import type { QueryRange } from '../judge/rangeQuery';
import { abortRelease, freezePauses, type Transition } from '../releaseMachine';
import type { CanaryTarget } from '../traffic/canaryObjects';
import type { TrafficProviders } from '../traffic/TrafficProviders';

/*
 * What every part of a release's tick shares: the orchestrator's dependencies, what the tick
 * knows about the release, and how a failure found on one cluster is noted and applied.
 */

/** The actor of what the orchestrator does itself (rollbacks, pauses). */
export const ACTOR = 'fleet-release';

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
  /** One measurement's timeout (default 5 s). */
  analysisTimeoutMs?: number;
  /** One measurement, by the template's analysis provider (default: Prometheus, any address). */
  measure?: (
    template: AnalysisTemplate,
    context: AnalysisContext,
    options: { timeoutMs?: number },
  ) => Promise<AnalysisMeasurement>;
  /**
   * One side (canary or baseline) of a template judged against a baseline, over a window
   * (default: Prometheus's query_range, any address).
   */
  queryRange?: QueryRange;
  concurrency?: number;
  /**
   * Runs first at every tick: the releases waiting for a freeze window that closed start
   * (see ReleaseGates.openClosedWindows). None: releases never wait for a window.
   */
  openGates?: () => Promise<void>;
  /** Told of a progress write that committed no event (a measurement, a judgment, a weight). */
  listener?: Pick<Required<FleetListener>, 'releaseProgressed'>;
}

/** What one tick knows about a release. */
export interface Tick {
  /** What the orchestrator works with. */
  deps: ReleaseOrchestratorOptions;
  record: ReleaseRecord;
  strategy: ReleaseStrategy;
  application: Application;
  /** The clusters read for this tick (see `loadClusters`). */
  clusters: Map<string, ClusterRecord>;
  /** Reads these clusters into `clusters`, if this run of the task has not read them yet. */
  loadClusters(names: Iterable<string>): Promise<void>;
  t: Transition;
  targets: ReleaseRecord['targets'];
  /**
   * The first failure of this tick. It is applied once every cluster of the wave has settled:
   * an abort decided while other clusters are mid-step would have them write over it.
   */
  failure?: Parameters<typeof abortRelease>[1];
  /**
   * Why this tick's analysis pauses the release (an inconclusive one past its limit): applied,
   * like a failure, once every cluster of the wave has settled, and only if none failed.
   */
  pause?: string;
  /** The pause's reason (`INCONCLUSIVE` unless said, `JUDGMENT_MARGINAL`). */
  pauseReason?: string;
  /** The clusters whose Kubernetes objects this tick may have changed. */
  touched: Set<string>;
  /** Each cluster's canary description, read once per tick (step, analysis and cleanup share it). */
  canaries: Map<string, Promise<CanaryTarget | undefined>>;
}

export function isOnline(tick: Tick) {
  return (name: string) => tick.clusters.get(name)?.status === 'ONLINE';
}

/** An error on one cluster is noted on it and retried at the next tick; the others go on. */
export function noteError(
  tick: Tick,
  c: CanaryClusterProgress,
  error: unknown,
) {
  const message = asError(error).message;
  if (c.message !== message) {
    c.message = message;
    tick.t.changed = true;
  }
  tick.deps.logger.warn(
    `Release ${tick.record.id} on ${c.cluster}: ${message}`,
  );
}

/** A failure: noted now, applied once the wave's clusters have settled (see `Tick.failure`). */
export function fail(tick: Tick, reason: Parameters<typeof abortRelease>[1]) {
  tick.failure ??= reason;
}

/** The release aborts, or pauses when rollback is turned off. */
export function applyFailure(tick: Tick) {
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
  abortRelease(t, reason, isOnline(tick));
}

export function deploymentOn(tick: Tick, cluster: string) {
  return tick.deps.stores.deployments.getDeploymentFor(
    tick.application.id,
    cluster,
  );
}

/**
 * The cluster's deployment once its rollout of the cluster's revision was checked: at the
 * tick's pace, not at the deploy poll's.
 */
export async function afterRolloutCheck(tick: Tick, c: CanaryClusterProgress) {
  const { deployments, stores } = tick.deps;
  await deployments.checkRollout(c.deploymentId!, c.revision!);
  return stores.deployments.getDeployment(c.deploymentId!);
}
