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
import type {
  ApplicationStore,
  ClusterStore,
  DeploymentStore,
  PlacementGrantInput,
  ReleaseStore,
  RevisionStore,
} from '../database/types';
import type { ManifestApplier } from './ManifestApplier';
import type { ManifestRemover } from './ManifestRemover';
import type { Manifests } from './manifests';

export interface DeployRequest {
  entityRef: string;
  cluster: string;
  image?: string;
  replicas?: number;
  /** Set over the application's default env for this revision. */
  env?: EnvMap;
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
    | 'startRevision'
    | 'deleteDeployment'
  >;
  revisions: Pick<RevisionStore, 'getRevision' | 'listRevisions'>;
  /** Running releases: a deploy or rollback by hand on one of their clusters is a 409. */
  releases?: Pick<ReleaseStore, 'listReleases'>;
};

/** What a deployment should have on its cluster, and where. */
export interface DesiredState {
  manifests: Manifests;
  namespace: string;
}

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

export interface DeploymentServiceOptions {
  stores: DeploymentServiceStores;
  applier: ManifestApplier;
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
}
