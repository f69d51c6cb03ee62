import type { components as FleetApiComponents } from './schema/openapi/generated/types';

/**
 * A schema of the Fleet API's OpenAPI spec, as a type. The types of the API's answers and
 * requests below are the spec's (generated from `plugins/fleet-backend/src/schema/openapi.yaml`):
 * a change of shape is made there.
 *
 * @public
 */
export type FleetApiSchema<Name extends keyof FleetApiComponents['schemas']> =
  FleetApiComponents['schemas'][Name];

/**
 * A Kubernetes cluster as the Fleet API returns it. Never carries kubeconfig contents,
 * tokens, certificates or keys: `kubeconfigRef` is a path or an opaque reference.
 *
 * @public
 */
export interface Cluster extends FleetApiSchema<'Cluster'> {}

/**
 * An environment variable taken from an object on the target cluster: a key of a Secret or of a
 * ConfigMap there. Fleet stores and applies the reference, never the value.
 *
 * @public
 */
export interface EnvVarSource extends FleetApiSchema<'EnvVarSource'> {}

/**
 * An environment variable's value: plain text, or a reference to a Secret or ConfigMap key on
 * the cluster. In answers, a value (plain or a reference) is `null` for a caller who may not
 * deploy the component: they see the variable's name only.
 *
 * @public
 */
export type EnvValue = FleetApiSchema<'EnvValue'>;

/** Environment variables by name. @public */
export type EnvMap = FleetApiSchema<'EnvMap'>;

/** Environment variables as a request gives them: text or a reference, never null. @public */
export type EnvMapInput = FleetApiSchema<'EnvMapInput'>;

/** @public */
export interface ApplicationSpec extends FleetApiSchema<'ApplicationSpec'> {}

/** An application's spec as a request gives it: no environment value is null. @public */
export interface ApplicationSpecInput
  extends FleetApiSchema<'ApplicationSpecInput'> {}

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
export interface ClusterLabelSelector
  extends FleetApiSchema<'ClusterLabelSelector'> {}

/**
 * Clusters by their labels: a label map (`{ env: 'prod' }`), or set-based requirements.
 *
 * @public
 */
export type ClusterSelector = FleetApiSchema<'ClusterSelector'>;

/** @public */
export interface ApplicationPlacement
  extends FleetApiSchema<'ApplicationPlacement'> {}

/** @public */
export interface Application extends FleetApiSchema<'Application'> {}

/**
 * A cluster an application's placement selects but was not deployed to, and why.
 *
 * @public
 */
export interface PlacementRefusal extends FleetApiSchema<'PlacementRefusal'> {}

/**
 * A field Fleet owns that the live object does not match: a JSON pointer into the object, or `/`
 * when the object is missing.
 *
 * @public
 */
export interface SyncDifference extends FleetApiSchema<'SyncDifference'> {}

/** @public */
export interface Deployment extends FleetApiSchema<'Deployment'> {}

/**
 * What one deployment should run, as it was decided: an immutable snapshot. A deployment's
 * current revision is its desired state; reconcile and self-heal compare and re-apply it, never
 * the application's newer defaults.
 *
 * @public
 */
export interface Revision extends FleetApiSchema<'Revision'> {}

/**
 * Where a revision's objects came from, for a component that brings its own manifests
 * (`cnp.io/manifests-ref`): the URL read, the version asked for, the commit it resolved to and a
 * digest of the objects rendered for the cluster.
 *
 * @public
 */
export interface ManifestSource extends FleetApiSchema<'ManifestSource'> {}

/**
 * A JSON merge patch over one object (by kind and name) of a component's own manifests, on the
 * clusters a placement override matches.
 *
 * @public
 */
export interface ManifestPatch extends FleetApiSchema<'ManifestPatch'> {}

/** @public */
export interface PreviewRequest extends FleetApiSchema<'PreviewRequest'> {}

/**
 * What a deploy or release would do to one object of one cluster, by a server-side dry run.
 *
 * @public
 */
export interface PreviewObject extends FleetApiSchema<'PreviewObject'> {}

/** @public */
export interface ClusterPreview extends FleetApiSchema<'ClusterPreview'> {}

/**
 * What a deploy or release would change on each target cluster, as the preview route answers.
 *
 * @public
 */
export interface Preview extends FleetApiSchema<'Preview'> {}

/**
 * Where one cluster of a release stands: its deployment on the release's revision, or on a later
 * one when something (a deploy, a rollback) came after it.
 *
 * @public
 */
export interface ReleaseTarget extends FleetApiSchema<'ReleaseTarget'> {}

/**
 * A fleet release: one new revision (cause `release`) on every cluster the application is placed
 * on, or on the named ones; OFFLINE clusters are skipped and listed.
 *
 * @public
 */
export interface Release extends FleetApiSchema<'Release'> {}

/**
 * What a release waits for before it starts (the approvals its stage requires, a freeze window
 * open on one of its clusters) and every decision taken on it.
 *
 * @public
 */
export interface ReleaseGate extends FleetApiSchema<'ReleaseGate'> {}

/** One approval or rejection of a release: who, when, and their comment. @public */
export interface ReleaseDecision extends FleetApiSchema<'ReleaseDecision'> {}

/** The body of `POST /releases/:id/approve` and `/reject`. @public */
export interface ReleaseDecisionRequest
  extends FleetApiSchema<'ReleaseDecisionRequest'> {}

/**
 * An analysis provider a release's strategy may name (`GET /analysis-providers`), with, for
 * `prometheus`, the servers the configuration allows it to query.
 *
 * @public
 */
export interface AnalysisProvider extends FleetApiSchema<'AnalysisProvider'> {}

/** A freeze window of the configuration, and whether it is open now. @public */
export interface FreezeWindow extends FleetApiSchema<'FreezeWindow'> {}

/**
 * One stage of an application (`GET /applications/:id/stages`): the clusters it holds, the
 * version they run, the version it verified and what keeps it from taking its required stage's.
 *
 * @public
 */
export interface StageStatus extends FleetApiSchema<'StageStatus'> {}

/**
 * One application across the fleet (`GET /applications/:id/status`): per cluster its revision,
 * image, status and sync status, and the totals.
 *
 * @public
 */
export interface ApplicationFleetStatus
  extends FleetApiSchema<'ApplicationFleetStatus'> {}

/**
 * One change of a cluster's or a deployment's status.
 *
 * @public
 */
export interface FleetEvent extends FleetApiSchema<'FleetEvent'> {}

/** @public */
export interface MassOutageWarning
  extends FleetApiSchema<'MassOutageWarning'> {}

/** @public */
export interface FleetSummary extends FleetApiSchema<'FleetSummary'> {}

/** One cluster's deployments per status (`GET /deployment-counts`). @public */
export interface ClusterDeploymentCounts
  extends FleetApiSchema<'ClusterDeploymentCounts'> {}

/**
 * What one health cycle did.
 *
 * @public
 */
export interface HealthCycleSummary
  extends FleetApiSchema<'HealthCycleSummary'> {}

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
