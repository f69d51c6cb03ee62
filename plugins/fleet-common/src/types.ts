import type {
  ProgressivePhase,
  ReleaseProgress,
  ReleaseStrategy,
} from './progressive';
import type {
  ApplicationOrigin,
  ClusterSource,
  ClusterStatus,
  DeploymentStatus,
  RevisionCause,
  SyncStatus,
} from './constants';

/**
 * A Kubernetes cluster as the Fleet API returns it. Never carries kubeconfig contents,
 * tokens, certificates or keys: `kubeconfigRef` is a path or an opaque reference.
 *
 * @public
 */
export interface Cluster {
  name: string;
  endpoint: string;
  /**
   * Where its kubeconfig is: shown to cluster admins only (those allowed `fleet.cluster.update`),
   * null for everyone else, who also see a generic `statusReason` instead of file and system
   * error details.
   */
  kubeconfigRef: string | null;
  context?: string | null;
  source: ClusterSource;
  labels: Record<string, string>;
  status: ClusterStatus;
  statusReason?: string | null;
  consecutiveFailures: number;
  consecutiveSuccesses: number;
  failureThreshold?: number | null;
  lastProbeAt?: string | null;
  lastSuccessAt?: string | null;
  lastTransitionAt?: string | null;
  probeLatencyMs?: number | null;
  serverVersion?: string | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * An environment variable taken from an object on the target cluster: a key of a Secret or of a
 * ConfigMap there. Fleet stores and applies the reference, never the value.
 *
 * @public
 */
export interface EnvVarSource {
  valueFrom:
    | { secretKeyRef: { name: string; key: string; optional?: boolean } }
    | { configMapKeyRef: { name: string; key: string; optional?: boolean } };
}

/**
 * An environment variable's value: plain text, or a reference to a Secret or ConfigMap key on
 * the cluster. In answers, a value (plain or a reference) is `null` for a caller who may not
 * deploy the component: they see the variable's name only.
 *
 * @public
 */
export type EnvValue = string | EnvVarSource | null;

/** Environment variables by name. @public */
export type EnvMap = Record<string, EnvValue>;

/** Environment variables as a request gives them: text or a reference, never null. @public */
export type EnvMapInput = Record<string, Exclude<EnvValue, null>>;

/** @public */
export interface ApplicationSpec {
  image?: string;
  replicas?: number;
  port?: number;
  env?: EnvMap;
  resources?: {
    requests?: Record<string, string>;
    limits?: Record<string, string>;
  };
  ignoreDifferences?: string[];
  selfHeal?: boolean;
  /**
   * Roll a revision that fails soon after its apply back to the last DEPLOYED one (default
   * true); a rollback is never rolled back in turn.
   */
  autoRollback?: boolean;
  /**
   * The namespace the application's objects go to (default: the configured one). System
   * namespaces are refused; it cannot change while the application has deployments.
   */
  namespace?: string;
  /**
   * Kubernetes scheduling constraints, applied to the pods as given: e.g. node affinity that keeps
   * the workload off hosts that cannot be power-cycled (`NotIn` a list of hostnames).
   */
  affinity?: ApplicationAffinity;
  /** Taints the pods tolerate, as Kubernetes tolerations. */
  tolerations?: ApplicationToleration[];
  /** Exposes the Service through an Ingress controller (the Service stays ClusterIP). */
  ingress?: ApplicationIngress;
}

/** An application's spec as a request gives it: no environment value is null. @public */
export type ApplicationSpecInput = Omit<ApplicationSpec, 'env'> & {
  env?: EnvMapInput;
};

/**
 * A label selector requirement as Kubernetes writes it (`In`, `NotIn`, `Exists`,
 * `DoesNotExist`; node selectors also `Gt` and `Lt`).
 *
 * @public
 */
export interface ApplicationSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

/** @public */
export interface ApplicationNodeSelectorTerm {
  matchExpressions?: ApplicationSelectorRequirement[];
  matchFields?: ApplicationSelectorRequirement[];
}

/** @public */
export interface ApplicationPodAffinityTerm {
  labelSelector?: {
    matchLabels?: Record<string, string>;
    matchExpressions?: ApplicationSelectorRequirement[];
  };
  namespaces?: string[];
  topologyKey: string;
}

/** @public */
export interface ApplicationPodAffinity {
  requiredDuringSchedulingIgnoredDuringExecution?: ApplicationPodAffinityTerm[];
  preferredDuringSchedulingIgnoredDuringExecution?: Array<{
    weight: number;
    podAffinityTerm: ApplicationPodAffinityTerm;
  }>;
}

/**
 * The pods' affinity, the Kubernetes `affinity` field.
 *
 * @public
 */
export interface ApplicationAffinity {
  nodeAffinity?: {
    requiredDuringSchedulingIgnoredDuringExecution?: {
      nodeSelectorTerms: ApplicationNodeSelectorTerm[];
    };
    preferredDuringSchedulingIgnoredDuringExecution?: Array<{
      weight: number;
      preference: ApplicationNodeSelectorTerm;
    }>;
  };
  podAffinity?: ApplicationPodAffinity;
  podAntiAffinity?: ApplicationPodAffinity;
}

/**
 * A Kubernetes toleration.
 *
 * @public
 */
export interface ApplicationToleration {
  key?: string;
  operator?: 'Equal' | 'Exists';
  value?: string;
  effect?: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
  tolerationSeconds?: number;
}

/**
 * An Ingress in front of the application's Service: `host` routed to it under `path` (default
 * `/`), through the controller of `className` (e.g. `nginx`, `alb`), with TLS from a Secret
 * (`tls: true` names it `<application>-tls`).
 *
 * @public
 */
export interface ApplicationIngress {
  host: string;
  className?: string;
  path?: string;
  tls?: boolean | { secretName: string };
}

/**
 * A label selector with set-based requirements, as in Kubernetes.
 *
 * @public
 */
export interface ClusterLabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{
    key: string;
    operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
    values?: string[];
  }>;
}

/**
 * Clusters by their labels: a label map (`{ env: 'prod' }`), or set-based requirements.
 *
 * @public
 */
export type ClusterSelector = Record<string, string> | ClusterLabelSelector;

/** @public */
export interface ApplicationPlacement {
  clusters?: string[];
  clusterSelector?: ClusterSelector;
  /**
   * Undeploy (event `PRUNED`) a deployment whose cluster the placement no longer selects;
   * otherwise it is kept with `placed: false` and never healed again.
   */
  prune?: boolean;
  /**
   * Per-cluster settings, merged in order into every revision made for a cluster they match (by
   * name or labels): `replicas` replaces, `env` is merged over the defaults.
   */
  overrides?: Array<{
    clusters?: string[];
    clusterSelector?: ClusterSelector;
    replicas?: number;
    env?: EnvMap;
  }>;
}

/** @public */
export interface Application {
  id: string;
  entityRef: string;
  name: string;
  origin?: ApplicationOrigin | null;
  spec: ApplicationSpec;
  placement: ApplicationPlacement;
  /** True from `DELETE /applications/:id` until its last deployment is undeployed. */
  removing: boolean;
  /**
   * Bumped on every change of spec or placement. The application's `ETag` is this number in
   * quotes: `PATCH /applications/:id` with `If-Match` writes only over that version.
   */
  version: number;
  /**
   * Clusters the placement selects (by selector, or by the component's annotations) that the
   * reconcile did not deploy to, because the user whose decision it acts on (the last to
   * register, change or deploy the application) may not deploy there (`fleet.cluster.deploy`).
   * Empty when none.
   */
  placementRefused?: PlacementRefusal[];
  createdAt: string;
  updatedAt: string;
}

/**
 * A cluster an application's placement selects but was not deployed to, and why.
 *
 * @public
 */
export interface PlacementRefusal {
  cluster: string;
  reason: string;
}

/**
 * A field Fleet owns that the live object does not match: a JSON pointer into the object, or `/`
 * when the object is missing.
 *
 * @public
 */
export interface SyncDifference {
  kind: string;
  name: string;
  path: string;
}

/** @public */
export interface Deployment {
  id: string;
  applicationId: string;
  entityRef: string;
  cluster: string;
  clusterStatus?: ClusterStatus | null;
  status: DeploymentStatus;
  statusReason?: string | null;
  message?: string | null;
  syncStatus: SyncStatus;
  /** With OUT_OF_SYNC: what differs. */
  syncDifferences?: SyncDifference[];
  image?: string | null;
  revision: number;
  /**
   * False once the application's placement no longer selects the cluster (and `prune` is off):
   * the deployment stays, is never healed again, and shows as "no longer placed".
   */
  placed: boolean;
  lastAppliedAt?: string | null;
  lastSyncedAt?: string | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * What one deployment should run, as it was decided: an immutable snapshot. A deployment's
 * current revision is its desired state; reconcile and self-heal compare and re-apply it, never
 * the application's newer defaults.
 *
 * @public
 */
export interface Revision {
  deploymentId: string;
  applicationId: string;
  cluster: string;
  /** 1, 2, … per deployment. */
  revision: number;
  image: string;
  /** Unset: the default replica count. */
  replicas?: number | null;
  env?: EnvMap | null;
  resources?: ApplicationSpec['resources'] | null;
  /** Unset: the configured default namespace. */
  namespace?: string | null;
  /** The container port; unset only on revisions recorded before ports were. */
  port?: number | null;
  cause: RevisionCause;
  createdBy: string;
  createdAt: string;
  /** `DEPLOYED` or `FAILED` once the rollout ended; unset while it runs. */
  outcome?: 'DEPLOYED' | 'FAILED' | null;
  outcomeReason?: string | null;
  outcomeAt?: string | null;
}

/**
 * Where one cluster of a release stands: its deployment on the release's revision, or on a later
 * one when something (a deploy, a rollback) came after it.
 *
 * @public
 */
export interface ReleaseTarget {
  cluster: string;
  deploymentId: string;
  /** The revision the release made on this cluster. */
  revision: number;
  /** The deployment's status while it is on that revision; `SUPERSEDED` once it moved on. */
  status: DeploymentStatus | 'SUPERSEDED' | 'REMOVED';
  syncStatus?: SyncStatus | null;
  outcome?: 'DEPLOYED' | 'FAILED' | null;
}

/**
 * A fleet release: one new revision (cause `release`) on every cluster the application is placed
 * on, or on the named ones; OFFLINE clusters are skipped and listed.
 *
 * @public
 */
export interface Release {
  id: string;
  applicationId: string;
  entityRef: string;
  createdBy: string;
  createdAt: string;
  image?: string | null;
  replicas?: number | null;
  env?: EnvMap | null;
  /**
   * `PROGRESSING` until every target ended; then `COMPLETED`, or `FAILED` when one failed. A
   * release with a strategy is also `PAUSED`, `ABORTING` while it rolls back, and ends
   * `ROLLED_BACK` when it aborted.
   */
  status: 'PROGRESSING' | 'COMPLETED' | 'FAILED' | ProgressivePhase;
  targets: ReleaseTarget[];
  skipped: Array<{ cluster: string; reason: string }>;
  /** The strategy, for a progressive release. */
  strategy?: ReleaseStrategy | null;
  /** Waves, steps and analysis of a progressive release. */
  progress?: ReleaseProgress | null;
}

/**
 * One application across the fleet (`GET /applications/:id/status`): per cluster its revision,
 * image, status and sync status, and the totals.
 *
 * @public
 */
export interface ApplicationFleetStatus {
  applicationId: string;
  entityRef: string;
  clusters: Array<{
    cluster: string;
    deploymentId: string;
    revision: number;
    image?: string | null;
    status: DeploymentStatus;
    syncStatus: SyncStatus;
    placed: boolean;
  }>;
  totals: {
    deployments: number;
    bySyncStatus: Record<SyncStatus, number>;
    /** Clusters per image, most common first. */
    byImage: Array<{ image: string; clusters: number }>;
  };
  /** e.g. "3 of 4 SYNCED; 1.4.2 on 3 clusters, 1.4.1 on 1". */
  summary: string;
}

/**
 * One change of a cluster's or a deployment's status.
 *
 * @public
 */
export interface FleetEvent {
  id: string;
  subjectKind: 'cluster' | 'deployment' | 'release';
  subject: string;
  actor: string;
  from?: string | null;
  to: string;
  reason?: string | null;
  message?: string | null;
  createdAt: string;
  /**
   * What the subject concerns, for people (given by `GET /events`): the component a deployment
   * or release belongs to, `null` when it is no longer known (its application was removed).
   */
  entityRef?: string | null;
  /** The cluster a deployment is on, or the cluster itself (given by `GET /events`). */
  cluster?: string | null;
}

/** @public */
export interface MassOutageWarning {
  active: boolean;
  raisedAt?: string;
  clusters: string[];
  message?: string;
}

/** @public */
export interface FleetSummary {
  clusters: { total: number } & Record<ClusterStatus, number>;
  deployments: {
    total: number;
    byStatus: Record<DeploymentStatus, number>;
    bySyncStatus: Record<SyncStatus, number>;
  };
  massOutage: MassOutageWarning;
  lastCycleAt?: string | null;
}

/**
 * What one health cycle did.
 *
 * @public
 */
export interface HealthCycleSummary {
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  probed: number;
  online: number;
  offline: number;
  unknown: number;
  transitions: Array<{
    cluster: string;
    from: ClusterStatus;
    to: ClusterStatus;
  }>;
  degradedDeployments: number;
  restoredDeployments: number;
  errors: Array<{ cluster: string; message: string }>;
  massOutage: MassOutageWarning;
  /**
   * Set on the answer to a manual run (`POST /health/run`) that probed nothing because the last
   * cycle had finished less than `fleet.health.manualMinInterval` before: this is that cycle's
   * summary, and a manual run probes again from `nextRunAt`.
   */
  reused?: { nextRunAt: string; message: string };
}

/** @public */
export interface ListResponse<T> {
  items: T[];
  /**
   * Set when more items remain (`GET /clusters`, `/applications` and `/deployments` answer one
   * page at a time): ask again with `cursor=<nextCursor>` for the next page. The cursor is
   * opaque; absent on the last page.
   */
  nextCursor?: string;
}
