import type { LoggerService } from '@backstage/backend-plugin-api';
import { ConflictError, InputError, NotFoundError } from '@backstage/errors';
import type {
  EnvMap,
  Application,
  Release,
  ReleaseStrategy,
  ReleaseTarget,
} from '@cnp/plugin-fleet-common';
import { applySteering } from './steering';
import { Transition } from './releaseMachine';
import type {
  ApplicationStore,
  ClusterRecord,
  ClusterStore,
  DeploymentStore,
  PageRequest,
  ReleaseRecord,
  ReleaseStore,
  RevisionStore,
} from '../database/types';
import { StageService, type StageStatus } from '../stages/StageService';
import {
  decided,
  isWaiting,
  type Decider,
  type FreezeWindowLookup,
  type ReleaseGateNotices,
} from '../stages/gates';
import type { DeploymentService } from '../deploy/DeploymentService';
import {
  assertProgressiveCanStart,
  startImmediate,
  startProgressive,
  type OpenedRelease,
  type StartDeps,
} from './releaseStart';
import { ReleaseGates, type DecisionInput } from './ReleaseGates';

export interface ReleaseRequest {
  image?: string;
  replicas?: number;
  env?: EnvMap;
  /** Only these clusters (each must be known); default: every cluster the application is placed on. */
  clusters?: string[];
  strategy?: ReleaseStrategy;
  /** For a component that brings its own manifests: the branch, tag or commit to release. */
  version?: string;
  /**
   * The application's stage to release to: its clusters unless `clusters` names some of them;
   * when it requires another stage, only a version that stage verified (see ../stages).
   */
  stage?: string;
}

export interface ReleaseServiceOptions {
  stores: {
    applications: Pick<ApplicationStore, 'getApplication'>;
    clusters: Pick<ClusterStore, 'getCluster' | 'listClusters'>;
    deployments: Pick<
      DeploymentStore,
      'listDeployments' | 'getDeployment' | 'getDeploymentFor'
    >;
    revisions: Pick<RevisionStore, 'getRevision' | 'listCurrentRevisions'>;
    releases: ReleaseStore;
  };
  deployments: Pick<DeploymentService, 'deploy' | 'checkManifests'>;
  /** The time soaks and freeze windows are measured against (default: the system clock). */
  clock?: () => Date;
  /** The freeze windows releases wait for (none: nothing is ever frozen). */
  windows?: FreezeWindowLookup;
  /** Who hears of approvals wanted and of decisions. */
  notices?: ReleaseGateNotices;
  logger?: LoggerService;
}

/**
 * Fleet releases: one request, a new revision (cause `release`) on every cluster the application
 * is placed on, or on the named ones, each through the same deploy flow as a deploy to one
 * cluster. OFFLINE clusters (and clusters a deploy refuses) are skipped and listed. A release's
 * progress is read from its targets' deployments.
 */
export class ReleaseService {
  private readonly stages: StageService;
  private readonly gates: ReleaseGates;
  private readonly startDeps: StartDeps;

  private constructor(private readonly options: ReleaseServiceOptions) {
    const clock = options.clock ?? (() => new Date());
    this.stages = StageService.create({ stores: options.stores, clock });
    this.startDeps = {
      stores: options.stores,
      deployments: options.deployments,
    };
    this.gates = ReleaseGates.create({
      stores: options.stores,
      windows: options.windows,
      notices: options.notices,
      logger: options.logger,
      clock,
      start: (application, clusters, request, actor, waited) =>
        this.start(application, clusters, request, actor, waited),
    });
  }

  static create(options: ReleaseServiceOptions): ReleaseService {
    return new ReleaseService(options);
  }

  /**
   * A release to a stage as it will run: the stage's clusters (or the named ones, each of the
   * stage) and, when the stage requires another and the request names no version, the version
   * that stage verified. 409 when the required stage has not verified the version (see
   * ../stages); a request without a stage is answered as given.
   */
  async planStage(
    applicationId: string,
    request: ReleaseRequest,
  ): Promise<ReleaseRequest> {
    if (request.stage === undefined) return request;
    const application = await this.options.stores.applications.getApplication(
      applicationId,
    );
    if (!application)
      throw new NotFoundError(`Application '${applicationId}' not found`);
    return this.plannedFor(application, request);
  }

  /**
   * The release as it will run: a release that names no stage is its clusters' stage when one
   * of them is in a stage that requires another (see StageService.stageOf), so that naming no
   * stage never skips a stage's requirements.
   */
  private async plannedFor(
    application: Application,
    request: ReleaseRequest,
  ): Promise<ReleaseRequest> {
    let { stage, clusters } = request;
    if (stage === undefined) {
      clusters = clusters ?? (await this.placedClusters(application));
      stage = await this.stages.stageOf(application, clusters);
      if (stage === undefined) return request;
    }
    const plan = await this.stages.planRelease(application, {
      stage,
      clusters,
      image: request.image,
      version: request.version,
    });
    return { ...request, ...plan, stage };
  }

  /**
   * Refuses (409) a deploy by hand to a cluster of a stage that requires another: such a stage
   * takes a version only by a release, once the stage it requires verified it (and, when it
   * requires approvals, once they are given), so a deploy must not go around it. A rollback is
   * not a deploy: it stays the owners' way back.
   */
  async assertDirectDeploy(
    application: Application,
    cluster: string,
  ): Promise<void> {
    const stage = await this.stages.stageOf(application, [cluster]);
    if (stage === undefined) return;
    throw new ConflictError(
      `Cluster '${cluster}' is in stage '${stage}' of '${application.entityRef}', which takes a version only by a release to the stage: release to stage ${stage} instead of deploying`,
    );
  }

  /**
   * Why the placement may not deploy the application to `cluster` by itself; undefined when it
   * may. A cluster of a stage that requires another takes a version only by a release to the
   * stage: placed there, the application would bring whatever its spec or its manifests name
   * now, which the stage it requires may never have verified.
   */
  async placementRefusal(
    application: Application,
    cluster: string,
  ): Promise<string | undefined> {
    try {
      await this.assertDirectDeploy(application, cluster);
      return undefined;
    } catch (error) {
      if (error instanceof ConflictError) return error.message;
      throw error;
    }
  }

  /** The application's stages, each with what it runs and verified (see ../stages). */
  async listStages(applicationId: string): Promise<StageStatus[]> {
    return this.stages.listStages(applicationId);
  }

  async release(
    applicationId: string,
    asked: ReleaseRequest,
    actor: string,
  ): Promise<Release> {
    const { stores, deployments } = this.options;
    const application = await stores.applications.getApplication(applicationId);
    if (!application)
      throw new NotFoundError(`Application '${applicationId}' not found`);
    if (application.removing) {
      throw new ConflictError(
        `Application '${applicationId}' is being removed`,
      );
    }
    const request = await this.plannedFor(application, asked);
    const names = [
      ...new Set(request.clusters ?? (await this.placedClusters(application))),
    ];
    if (names.length === 0) {
      throw new ConflictError(
        `Application '${applicationId}' is placed on no cluster: name 'clusters' to release to`,
      );
    }
    // Every cluster is checked before the first one changes: a bad name changes nothing.
    const clusters = await Promise.all(
      names.map(async name => {
        const cluster = await stores.clusters.getCluster(name);
        if (!cluster) {
          throw new InputError(`Invalid release: unknown cluster '${name}'`);
        }
        return cluster;
      }),
    );
    // The component's own manifests are read, and checked against its project for every
    // cluster, before the first cluster changes.
    await deployments.checkManifests(application, clusters, request.version, {
      progressive: !!request.strategy,
    });
    if (request.strategy) {
      await assertProgressiveCanStart(this.startDeps, application, clusters);
    }
    // A release to a stage that requires approvals, or into an open freeze window, waits.
    const waiting = await this.gates.hold(
      application,
      clusters,
      request,
      actor,
    );
    if (waiting) return this.view(waiting, application);
    const id = await this.start(application, clusters, request, actor);
    return this.getRelease(id);
  }

  private async start(
    application: Application,
    clusters: ClusterRecord[],
    request: ReleaseRequest,
    actor: string,
    waited?: OpenedRelease,
  ): Promise<string> {
    if (waited && request.stage !== undefined) {
      // A release that waited starts only with what its stage still takes: the stage it requires
      // may have verified another version, or been rolled back, since it was asked for (409).
      await this.stages.planRelease(application, {
        stage: request.stage,
        clusters: clusters.map(c => c.name),
        image: request.image,
        version: request.version,
      });
    }
    return request.strategy
      ? startProgressive(
          this.startDeps,
          application,
          clusters,
          request,
          actor,
          waited,
        )
      : startImmediate(
          this.startDeps,
          application,
          clusters,
          request,
          actor,
          waited,
        );
  }

  /** Approves a waiting release (see ReleaseGates). */
  async approve(
    id: string,
    decider: Decider,
    input: DecisionInput,
  ): Promise<Release> {
    await this.gates.approve(id, decider, input);
    return this.getRelease(id);
  }

  /** Rejects a waiting release: it ends REJECTED, nothing applied. */
  async reject(
    id: string,
    decider: Decider,
    input: DecisionInput,
  ): Promise<Release> {
    await this.gates.reject(id, decider, input);
    return this.getRelease(id);
  }

  /**
   * Rejects every release of the application still waiting at its gate: once the application
   * is removed nothing may start them (their clusters were undeployed on purpose).
   */
  async withdrawWaiting(applicationId: string, actor: string): Promise<void> {
    const { releases } = this.options.stores;
    const now = (this.options.clock ?? (() => new Date()))();
    const waiting = (await releases.listReleases(applicationId)).filter(
      r => isWaiting(r.phase) && r.gate,
    );
    for (const record of waiting) {
      const comment = 'the application was removed';
      await releases.updateRelease(
        record.id,
        record.version,
        {
          phase: 'REJECTED',
          gate: decided(
            record.gate!,
            { actor, decision: 'REJECTED', comment, overrideFreeze: false },
            now,
          ),
        },
        [
          {
            subjectKind: 'release',
            subject: record.id,
            actor,
            from: record.phase,
            to: 'REJECTED',
            reason: 'REJECTED',
            message: `Rejected: ${comment}; nothing was applied`,
          },
        ],
      );
    }
  }

  /** Starts the releases whose freeze window closed (the release task's turn). */
  async openClosedWindows(): Promise<void> {
    await this.gates.openClosedWindows();
  }

  /**
   * The fleet's releases not ended in the given phases (waiting ones, or under way with a
   * strategy; the waiting ones by default), oldest first.
   */
  async listOpenReleases(phases?: string[]): Promise<Release[]> {
    const records = await this.options.stores.releases.listOpenReleases({
      phases,
    });
    return Promise.all(records.map(r => this.view(r)));
  }

  /**
   * Steers a release with a strategy: `promote` moves every cluster of the current wave that is
   * in a pause on to its next step; `pause` and `resume` stop and restart its clock; `abort`
   * rolls back every cluster it touched. 409 when the action does not apply.
   */
  async steer(
    id: string,
    action: 'promote' | 'pause' | 'resume' | 'abort',
    actor: string,
  ): Promise<Release> {
    const { stores } = this.options;
    for (let attempt = 0; attempt < 5; attempt++) {
      const record = await stores.releases.getRelease(id);
      if (!record) throw new NotFoundError(`Release '${id}' not found`);
      if (!record.progress || !record.strategy) {
        throw new ConflictError(
          `Release '${id}' has no strategy: it reached every cluster at once, there is nothing to ${action}`,
        );
      }
      const t = new Transition(
        id,
        structuredClone(record.progress),
        Date.now(),
      );
      const online = await this.onlineClusters();
      applySteering(t, record.strategy, action, actor, name =>
        online.has(name),
      );
      t.progress.updatedAt = t.iso;
      if (
        await stores.releases.updateProgress(id, record.version, t.progress, {
          events: t.events,
        })
      ) {
        return this.getRelease(id);
      }
    }
    throw new ConflictError(
      `Release '${id}' kept changing while it was steered: try again`,
    );
  }

  private async onlineClusters(): Promise<Set<string>> {
    const clusters = await this.options.stores.clusters.listClusters({
      status: 'ONLINE',
    });
    return new Set(clusters.map(c => c.name));
  }

  async getRelease(id: string): Promise<Release> {
    const record = await this.options.stores.releases.getRelease(id);
    if (!record) throw new NotFoundError(`Release '${id}' not found`);
    return this.view(record);
  }

  async listReleases(
    applicationId: string,
    page?: PageRequest,
  ): Promise<Release[]> {
    const { stores } = this.options;
    const application = await stores.applications.getApplication(applicationId);
    if (!application)
      throw new NotFoundError(`Application '${applicationId}' not found`);
    const records = await stores.releases.listReleases(applicationId, page);
    return Promise.all(records.map(r => this.view(r, application)));
  }

  /** The clusters the application runs on and is still placed on. */
  private async placedClusters(application: Application): Promise<string[]> {
    const current = await this.options.stores.deployments.listDeployments({
      applicationId: application.id,
    });
    return current
      .filter(d => d.placed && d.status !== 'REMOVING')
      .map(d => d.cluster);
  }

  private async view(
    record: ReleaseRecord,
    known?: Application,
  ): Promise<Release> {
    const { stores } = this.options;
    const application =
      known ?? (await stores.applications.getApplication(record.applicationId));
    const targets: ReleaseTarget[] = await Promise.all(
      record.targets.map(async target => {
        const [deployment, revision] = await Promise.all([
          stores.deployments.getDeployment(target.deploymentId),
          stores.revisions.getRevision(target.deploymentId, target.revision),
        ]);
        let status: ReleaseTarget['status'];
        if (!deployment) status = 'REMOVED';
        else if (deployment.revision !== target.revision) status = 'SUPERSEDED';
        else status = deployment.status;
        return {
          ...target,
          status,
          syncStatus:
            deployment?.revision === target.revision
              ? deployment.syncStatus
              : null,
          outcome: revision?.outcome ?? null,
        };
      }),
    );
    let status: Release['status'] = 'COMPLETED';
    if (
      record.phase === 'WAITING_FOR_APPROVAL' ||
      record.phase === 'WAITING_FOR_WINDOW' ||
      record.phase === 'REJECTED'
    )
      status = record.phase;
    else if (record.phase === 'STARTING') status = 'PROGRESSING';
    else if (record.progress) status = record.progress.phase;
    else if (targets.some(t => t.outcome === 'FAILED')) status = 'FAILED';
    else if (
      targets.some(
        t => !t.outcome && t.status !== 'SUPERSEDED' && t.status !== 'REMOVED',
      )
    )
      status = 'PROGRESSING';
    return {
      id: record.id,
      applicationId: record.applicationId,
      entityRef: application?.entityRef ?? '',
      createdBy: record.createdBy,
      createdAt: record.createdAt,
      image: record.request.image ?? null,
      version: record.request.version ?? null,
      replicas: record.request.replicas ?? null,
      env: record.request.env ?? null,
      status,
      targets,
      skipped: record.skipped,
      strategy: record.strategy ?? null,
      progress: record.progress ?? null,
      stage: record.stage ?? null,
      gate: record.gate ?? null,
    };
  }
}
