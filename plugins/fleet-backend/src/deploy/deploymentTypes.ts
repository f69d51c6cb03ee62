import type { LoggerService } from '@backstage/backend-plugin-api';
import type {
  ApplicationOrigin,
  ApplicationPlacement,
  ApplicationSpec,
  EnvMap,
  RevisionCause,
} from '@cnp/plugin-fleet-common';
import type { FleetManifestSource } from '@cnp/plugin-fleet-node';
import type { EntityAnnotationReader } from '../catalog/entityAnnotations';
import type { FleetConfig } from '../config/FleetConfig';
import type { FleetListener } from '../events/FleetListener';
import type {
  ApplicationStore,
  ClusterStore,
  DeploymentStore,
  PlacementGrantInput,
  ReleaseStore,
  RevisionStore,
} from '../database/types';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ManifestReader } from '../repository/ManifestReader';
import type { ManifestApplier } from './ManifestApplier';
import type { ManifestRemover } from './ManifestRemover';
import type { Manifests } from './manifests';
import type { ObjectSetApplier } from './ObjectSetApplier';

export interface DeployRequest {
  entityRef: string;
  cluster: string;
  image?: string;
  replicas?: number;
  /** Set over the application's default env for this revision. */
  env?: EnvMap;
  /**
   * For a component that brings its own manifests: the branch, tag or commit to read them at
   * (default: the ref its source location names).
   */
  version?: string;
  /** Why this revision is made (default `deploy`). */
  cause?: RevisionCause;
  /**
   * The caller's `fleet.cluster.deploy` decision, kept with the application when this deploy
   * creates it (from the component's annotations): the reconcile places it with that decision.
   */
  placementGrant?: PlacementGrantInput;
}

export interface RegisterApplicationRequest {
  entityRef: string;
  origin?: ApplicationOrigin;
  spec: ApplicationSpec;
  placement?: ApplicationPlacement;
  /** The author's `fleet.cluster.deploy` decision, written with the application. */
  placementGrant?: PlacementGrantInput;
}

/** What deploys read and write: applications, the target cluster and deployments. */
export type DeploymentServiceStores = {
  applications: Omit<ApplicationStore, 'listApplications'>;
  clusters: Pick<ClusterStore, 'getCluster'>;
  deployments: Pick<
    DeploymentStore,
    | 'listDeployments'
    | 'getDeployment'
    | 'getDeploymentFor'
    | 'insertDeployment'
    | 'updateDeploymentStatus'
    | 'completeRollout'
    | 'noteRolloutProgress'
    | 'startRevision'
    | 'deleteDeployment'
  >;
  revisions: Pick<
    RevisionStore,
    'getRevision' | 'listRevisions' | 'getRevisionObjects'
  >;
  /** Running releases: a deploy or rollback by hand on one of their clusters is a 409. */
  releases?: Pick<ReleaseStore, 'listReleases'>;
};

/**
 * What a deployment should have on its cluster, and where: Fleet's generated workload
 * (`manifests`), or the objects a component's own manifests rendered for the cluster (`objects`,
 * as its revision recorded them).
 */
export type DesiredState =
  | { namespace: string; manifests: Manifests; objects?: undefined }
  | { namespace: string; objects: KubernetesObject[]; manifests?: undefined };

/** The deploy settings of `fleet.deploy`, with the defaults of the ones a test may leave out. */
export type DeploySettings = Omit<
  FleetConfig['deploy'],
  'pollIntervalMs' | 'rollbackWindowMs' | 'forbiddenNamespaces'
> & {
  pollIntervalMs?: number;
  /** Default 10 minutes. */
  rollbackWindowMs?: number;
  /** Default kube-system, kube-public, kube-node-lease. */
  forbiddenNamespaces?: string[];
};

/**
 * Why the component's project refuses an earlier revision a rollback would apply again (its
 * namespace and env references); undefined when it may. Throws when it cannot be decided.
 */
export type RevisionRefusal = (request: {
  entityRef: string;
  appName: string;
  namespace?: string;
  env?: EnvMap;
}) => Promise<string | undefined>;

/**
 * Why the component's project refuses the objects of its own manifests rendered for a cluster,
 * or the place they were read from (`sourceUrl`, when they are read now); undefined when it
 * may. Throws when it cannot be decided.
 */
export type ObjectsRefusal = (request: {
  entityRef: string;
  appName: string;
  objects: readonly KubernetesObject[];
  sourceUrl?: string;
}) => Promise<string | undefined>;

export interface DeploymentServiceOptions {
  stores: DeploymentServiceStores;
  applier: ManifestApplier;
  /** Applies, reads and removes the objects of components that bring their own manifests. */
  objectApplier?: ObjectSetApplier;
  /** Reads components' own manifests (`cnp.io/manifests-ref`) through the URL readers. */
  manifestReader?: ManifestReader;
  objectsRefusal?: ObjectsRefusal;
  /**
   * Why the component's project refuses to read its manifests from `url` (its `sources`), asked
   * before anything is read; undefined when it may.
   */
  sourceRefusal?: (request: {
    entityRef: string;
    appName: string;
    url: string;
  }) => Promise<string | undefined>;
  remover: Pick<ManifestRemover, 'remove'>;
  logger: LoggerService;
  deploy: DeploySettings;
  /**
   * The entity's annotations: its `cnp.io/image` is the image of a deploy that names none, for an
   * application that has none yet.
   */
  annotationsOf?: EntityAnnotationReader;
  revisionRefusal?: RevisionRefusal;
  /**
   * Manifest sources added by modules (`fleetManifestSourcesExtensionPoint`), in the order they
   * were added: an application's objects come from the first that applies to it, else from
   * Fleet's generated workload.
   */
  manifestSources?: FleetManifestSource[];
  /** Told when a rollout's progress (what it still waits for) is noted on its deployment. */
  listener?: Pick<Required<FleetListener>, 'deploymentProgressed'>;
}
