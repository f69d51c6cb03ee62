/**
 * Progressive delivery across the fleet: the strategy a release may carry, and the state of a
 * release that runs one.
 */

/**
 * A wave: the clusters that run the canary together. Waves run in order; a wave starts only
 * once every cluster of the one before it reached 100 % with its analysis passing.
 *
 * @public
 */
export interface ReleaseWave {
  /** Named clusters (each must be a target of the release). */
  clusters?: string[];
  /** Clusters whose labels match (`{ env: staging }`). */
  clusterSelector?: Record<string, string>;
  /** A share of all targets (1–100), counted over every target, rounded up; earlier waves' clusters count. */
  percent?: number;
}

/**
 * One canary step on a cluster: a weight, or a pause (`{}` waits for promote).
 *
 * @public
 */
export type CanaryStep =
  | { setWeight: number }
  | { pause: { duration?: string | number } };

/** @public */
export interface AnalysisTemplate {
  name: string;
  /** How often the query runs (Go-style duration, or seconds; default `1m`). */
  interval?: string | number;
  /** Failed measurements tolerated; one more aborts the release (default 0). */
  failureLimit?: number;
  /** Inconclusive measurements in a row tolerated; one more aborts (default `failureLimit`). */
  inconclusiveLimit?: number;
  /**
   * e.g. `result[0] >= 0.995`; `result` is the measured value (for Prometheus, the query's vector
   * as numbers).
   */
  successCondition: string;
  /**
   * The analysis provider that measures it: exactly one key, the name of a registered provider,
   * whose value is that provider's settings. Fleet's own is `prometheus`; backend modules add
   * others (the `fleet.analysis-providers` extension point).
   */
  provider: AnalysisProviderSettings;
}

/**
 * An analysis template's provider: one key, the provider's name, and its settings.
 *
 * @public
 */
export type AnalysisProviderSettings = {
  /** Fleet's own: a Prometheus query. */
  prometheus?: {
    address: string;
    /** May use `{{cluster}}`, `{{app}}`, `{{namespace}}`, `{{revision}}`, `{{version}}`. */
    query: string;
  };
} & {
  /** A provider a backend module added, by its name: its own settings. */
  [name: string]: Record<string, unknown>;
};

/**
 * A release's strategy, after Argo Rollouts' canary, across clusters.
 *
 * @public
 */
export interface ReleaseStrategy {
  waves?: ReleaseWave[];
  canary: {
    steps: CanaryStep[];
    /** Int or percent (default `25%`). */
    maxSurge?: number | string;
    /** Int or percent (default 0). */
    maxUnavailable?: number | string;
    trafficRouting?: {
      istio?: { virtualService: { name: string; routes?: string[] } };
    };
  };
  analysis?: { templates: AnalysisTemplate[] };
  rollback?: { enabled?: boolean; timeout?: string | number };
}

/**
 * How a cluster runs its canary, with Fleet's own traffic providers: an Argo Rollout where it
 * serves them, Istio route weights where asked and served, else a stable and a `-canary`
 * Deployment sized by replicas. A traffic provider a backend module adds (the
 * `fleet.traffic-providers` extension point) is asked first; its id is then the cluster's mode.
 *
 * @public
 */
export const CANARY_MODES = ['rollout', 'istio', 'replicas'] as const;

/** @public */
export type CanaryMode = (typeof CANARY_MODES)[number];

/**
 * Where one cluster of a progressive release stands.
 *
 * - `WAITING`: its wave has not started.
 * - `RUNNING`: going through the canary steps.
 * - `COMPLETING`: at 100 %, the stable workload taking the new revision.
 * - `DONE`: on the new revision, canary gone.
 * - `ROLLING_BACK` / `ROLLED_BACK`: the release aborted; back (or going back) on its previous revision.
 * - `ROLLBACK_PENDING`: the release aborted while the cluster was OFFLINE; applied when it returns.
 * - `SKIPPED`: never touched (a later wave of an aborted release).
 *
 * @public
 */
export const CANARY_CLUSTER_STATES = [
  'WAITING',
  'RUNNING',
  'COMPLETING',
  'DONE',
  'ROLLING_BACK',
  'ROLLBACK_PENDING',
  'ROLLED_BACK',
  'SKIPPED',
] as const;

/** @public */
export type CanaryClusterState = (typeof CANARY_CLUSTER_STATES)[number];

/**
 * One analysis measurement.
 *
 * @public
 */
export interface AnalysisMeasurement {
  template: string;
  cluster: string;
  phase: 'Successful' | 'Failed' | 'Inconclusive' | 'Error';
  /** The query's first value, when it gave one. */
  value?: number | null;
  condition: string;
  /** Why it was inconclusive or an error. */
  message?: string;
  at: string;
}

/**
 * One cluster's progress in a progressive release.
 *
 * @public
 */
export interface CanaryClusterProgress {
  cluster: string;
  /** 0-based wave index. */
  wave: number;
  /**
   * The traffic provider running its canary: one of {@link CANARY_MODES} for Fleet's own, or the
   * id of one a backend module added. Unset until the cluster's canary starts.
   */
  mode?: CanaryMode | (string & {}) | null;
  state: CanaryClusterState;
  /** The step being run (0-based), or the number of steps once past the last. */
  stepIndex: number;
  /** The traffic weight the canary has (0–100). */
  weight: number;
  /** Set while a timed pause runs: when it ends. */
  pauseUntil?: string | null;
  /** True while an untimed pause waits for promote. */
  awaitingPromote?: boolean;
  deploymentId?: string | null;
  /** The revision the cluster ran before the release. */
  previousRevision?: number | null;
  /** The revision the release made (once at 100 %), or the rollback's. */
  revision?: number | null;
  /** Failed measurements so far. */
  failures: number;
  /** Inconclusive (or erroneous) measurements in a row. */
  inconclusive: number;
  /** The analysis templates that succeeded at least once on this cluster: it completes only once all did. */
  passed?: string[];
  /** A timed pause frozen by a paused release: what was left of it. */
  pauseRemainingMs?: number | null;
  /** Where a completion or a rollback is within its Kubernetes steps. */
  stage?: string | null;
  message?: string | null;
  stepStartedAt?: string | null;
}

/**
 * A progressive release's phase.
 *
 * @public
 */
export const PROGRESSIVE_PHASES = [
  'PROGRESSING',
  'PAUSED',
  'ABORTING',
  'COMPLETED',
  'ROLLED_BACK',
] as const;

/** @public */
export type ProgressivePhase = (typeof PROGRESSIVE_PHASES)[number];

/**
 * Why a progressive release aborted: the metric, its value, the condition and the cluster, or
 * who aborted it.
 *
 * @public
 */
export interface ReleaseAbortReason {
  reason:
    | 'ANALYSIS_FAILED'
    | 'STEP_TIMEOUT'
    | 'ABORTED'
    | 'STEP_FAILED'
    | 'OWNERSHIP_CONFLICT';
  message: string;
  cluster?: string;
  metric?: string;
  value?: number | null;
  condition?: string;
  by?: string;
  at: string;
}

/**
 * The running state of a release with a strategy.
 *
 * @public
 */
export interface ReleaseProgress {
  phase: ProgressivePhase;
  /** The wave running now (0-based); the number of waves once all are done. */
  currentWave: number;
  waves: string[][];
  clusters: CanaryClusterProgress[];
  /** The latest measurement per cluster and template. */
  analysis: AnalysisMeasurement[];
  abort?: ReleaseAbortReason | null;
  pausedBy?: string | null;
  updatedAt: string;
}
