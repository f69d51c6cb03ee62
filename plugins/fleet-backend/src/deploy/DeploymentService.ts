import type {
  Application,
  Deployment,
  Preview,
} from '@cnp/plugin-fleet-common';
import type { ClusterRecord, RevisionSpec } from '../database/types';
import { ApplicationWriter, type ApplicationUpdate } from './ApplicationWriter';
import { Deployer } from './Deployer';
import type {
  DeploymentServiceOptions,
  DeployRequest,
  DesiredState,
  RegisterApplicationRequest,
} from './deploymentTypes';
import {
  DesiredStates,
  type DesiredStateRequest,
  type RevisionRequest,
} from './DesiredStates';
import { generatedWorkloadSource } from './generatedWorkload';
import { ManifestSources } from './manifestSources';
import { Previews, type PreviewRequest } from './Previews';
import { steeredWorkload } from './repositoryObjects';
import { Rollbacks, type RollbackRequest } from './Rollbacks';
import { RolloutFollower } from './RolloutFollower';
import { Undeployer, type UndeployOptions } from './Undeployer';

export { applicationNameFor, ignoresReplicas } from './applicationNames';
export type {
  DeploymentServiceOptions,
  DeploymentServiceStores,
  DeployRequest,
  DesiredState,
  RegisterApplicationRequest,
} from './deploymentTypes';
export type { ApplicationUpdate } from './ApplicationWriter';
export type {
  DesiredStateRequest,
  RevisionRequest,
  RevisionSettings,
} from './DesiredStates';
export type { RollbackRequest } from './Rollbacks';
export type { PreviewRequest } from './Previews';
export type { UndeployOptions } from './Undeployer';

/**
 * Fleet's deployments, as the router, the reconcile and releases use them: registering and
 * changing applications (`ApplicationWriter`), deploying (`Deployer`: record PENDING, apply
 * through the cluster's own client, move to PROGRESSING), following rollouts until DEPLOYED or
 * FAILED with PROGRESS_DEADLINE_EXCEEDED (`RolloutFollower`), rolling back (`Rollbacks`) and
 * undeploying (`Undeployer`). The objects of a revision come from the application's manifest
 * source (`DesiredStates`): the first source a module added that applies to it, else Fleet's
 * generated workload. A cluster without a usable kubeconfig gives FAILED /
 * CLUSTER_NOT_CONFIGURED and a Kubernetes API error FAILED / APPLY_FAILED with the API's
 * message: a result, never an HTTP 500.
 */
export class DeploymentService {
  private readonly applications: ApplicationWriter;
  private readonly desired: DesiredStates;
  private readonly follower: RolloutFollower;
  private readonly deployer: Deployer;
  private readonly rollbacks: Rollbacks;
  private readonly undeployer: Undeployer;
  private readonly previews: Previews;

  private constructor(options: DeploymentServiceOptions) {
    this.applications = new ApplicationWriter(options);
    this.desired = new DesiredStates({
      ...options,
      sources: ManifestSources.create({
        added: options.manifestSources,
        builtIn: generatedWorkloadSource(options.deploy),
      }),
    });
    this.follower = new RolloutFollower({
      ...options,
      onRolloutFailed: rollout => this.rollbacks.rollBackAutomatically(rollout),
    });
    this.deployer = new Deployer({
      ...options,
      desired: this.desired,
      follower: this.follower,
    });
    this.rollbacks = new Rollbacks({ ...options, deployer: this.deployer });
    this.undeployer = new Undeployer({ ...options, follower: this.follower });
    this.previews = new Previews({ ...options, desired: this.desired });
  }

  static create(options: DeploymentServiceOptions): DeploymentService {
    return new DeploymentService(options);
  }

  async registerApplication(
    request: RegisterApplicationRequest,
  ): Promise<Application> {
    return this.applications.registerApplication(request);
  }

  /**
   * Merges `update` into the application and writes it over the version it was read at, so that
   * two writers never lose each other's change: without `ifMatch` a write that lost the race
   * merges again over the newer version; with `ifMatch` (the versions the caller accepts, from
   * the ETags of an If-Match header) a write over any other version is refused with
   * `PreconditionFailedError`.
   */
  async updateApplication(
    id: string,
    update: ApplicationUpdate,
    ifMatch?: number[],
  ): Promise<Application> {
    return this.applications.updateApplication(id, update, ifMatch);
  }

  /**
   * What a deployment should run on its cluster: its revision (image, replicas, env, resources,
   * namespace) on the application's own settings (port, probes), as the application's manifest
   * source renders it. Without a revision (a deployment recorded before revisions existed), the
   * application's defaults.
   */
  async desiredFor(request: DesiredStateRequest): Promise<DesiredState> {
    return this.desired.desiredFor(request);
  }

  /**
   * The revision a deploy to one cluster makes: the request's image, else the deployment's
   * current one, else the application's default, else the component's `cnp.io/image`; the
   * request's replicas, else the current revision's, else the default; env and resources from
   * the application's defaults. Nothing of it changes any other cluster.
   */
  async revisionFor(asked: RevisionRequest): Promise<RevisionSpec> {
    // A component's own manifests are read here when the caller did not read them.
    const manifests =
      asked.manifests ??
      (await this.desired.manifestsOf(
        asked.application.entityRef,
        asked.request.version,
        !!asked.current?.source,
      ));
    return this.desired.revisionFor({ ...asked, manifests });
  }

  /**
   * What a deploy or release of the application would do on each of `clusters`, by a
   * server-side dry run (see `Previews`).
   */
  async preview(request: PreviewRequest): Promise<Preview> {
    return this.previews.preview(request);
  }

  /**
   * Checks, before a release changes any cluster, that the component's own manifests (when it
   * brings them) can be read at `version` and that the project allows what they render for
   * each cluster: an `InputError` or a `NotAllowedError` otherwise; for a progressive release,
   * that they hold the Deployment and Service it steers. Nothing for the generated workload.
   */
  async checkManifests(
    application: Application,
    clusters: ClusterRecord[],
    version: string | undefined,
    options: { progressive?: boolean } = {},
  ): Promise<void> {
    const manifests = await this.desired.manifestsOf(
      application.entityRef,
      version,
    );
    if (!manifests) return;
    for (const cluster of clusters) {
      const spec = await this.desired.revisionFor({
        application,
        request: {},
        current: undefined,
        cluster,
        manifests,
      });
      // A progressive release steers one Deployment and its Service: refused up front without.
      if (options.progressive)
        steeredWorkload(spec.objects ?? [], application.name);
    }
  }

  async deploy(request: DeployRequest, actor: string): Promise<Deployment> {
    return this.deployer.deploy(request, actor);
  }

  /**
   * Rolls a deployment back: a new revision (cause `rollback`) copying `toRevision`, by default
   * the newest earlier revision that reached DEPLOYED. 409 when there is none, or when the
   * cluster is OFFLINE.
   */
  async rollback(request: RollbackRequest): Promise<Deployment> {
    return this.rollbacks.rollback(request);
  }

  /** Follows a rollout until DEPLOYED or FAILED; only while it is still this revision. */
  track(deploymentId: string, revision: number): void {
    this.follower.track(deploymentId, revision);
  }

  /**
   * Checks a rollout now rather than at the next poll (a progressive release waiting on it):
   * the same check, and the deployment is followed on as before when it is not done.
   */
  async checkRollout(deploymentId: string, revision: number): Promise<void> {
    return this.follower.checkRollout(deploymentId, revision);
  }

  /**
   * Undeploys a deployment: it turns `REMOVING`, and Fleet deletes the objects it applied for it
   * (only objects carrying Fleet's label and this entity's annotation) as soon as its cluster is
   * ONLINE — now, or when the cluster returns (the reconcile retries). Once they are gone the
   * deployment is forgotten; its revisions and events stay. `force` forgets it at once, saying in
   * its event that objects may remain.
   */
  async undeploy(
    deploymentId: string,
    options: UndeployOptions,
    actor: string,
  ): Promise<Deployment> {
    return this.undeployer.undeploy(deploymentId, options, actor);
  }

  /**
   * Deletes the objects of a `REMOVING` deployment when its cluster is ONLINE, and forgets the
   * deployment once they are gone. True when it is gone; false while it waits.
   */
  async finishRemoval(deploymentId: string): Promise<boolean> {
    return this.undeployer.finishRemoval(deploymentId);
  }

  /**
   * Removes an application: it is placed nowhere any more, every deployment is undeployed, and
   * the application goes with its last deployment (at once when it has none).
   */
  async removeApplication(
    applicationId: string,
    actor: string,
  ): Promise<Application> {
    return this.undeployer.removeApplication(applicationId, actor);
  }

  /**
   * A revision that turned DEGRADED / WORKLOAD_UNHEALTHY within `fleet.deploy.rollbackWindow`
   * of its apply is rolled back automatically, as one whose rollout failed is (see
   * `Rollbacks.rollBackAutomatically`). The reconcile calls this when it degrades a deployment.
   */
  async rollBackDegraded(deploymentId: string): Promise<void> {
    return this.rollbacks.rollBackDegraded(deploymentId);
  }

  /**
   * Follows the rollouts of deployments left PROGRESSING (by a restart, or by another replica
   * that stopped), and fails those left PENDING for longer than the progress deadline: their
   * apply was interrupted. Runs at startup and on every reconcile (with health shards, on every
   * placement run).
   */
  async adoptUnfinished(): Promise<number> {
    return this.follower.adoptUnfinished();
  }

  /** Stops following rollouts; resolves once no readiness check is still talking to a cluster. */
  async stop(): Promise<void> {
    return this.follower.stop();
  }
}
