import { ConflictError, InputError, NotFoundError } from '@backstage/errors';
import type {
  EnvMap,
  Application,
  Release,
  ReleaseStrategy,
  ReleaseTarget,
} from '@cnp/plugin-fleet-common';
import { randomUUID } from 'node:crypto';
import { applySteering } from './steering';
import { assertNoRunningRelease } from '../deploy/runningRelease';
import { initialProgress, Transition } from './releaseMachine';
import { resolveWaves } from './strategy';
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
import { asError } from '../util/errors';
import {
  ignoresReplicas,
  type DeploymentService,
} from '../deploy/DeploymentService';

export interface ReleaseRequest {
  image?: string;
  replicas?: number;
  env?: EnvMap;
  /** Only these clusters (each must be known); default: every cluster the application is placed on. */
  clusters?: string[];
  strategy?: ReleaseStrategy;
}

export interface ReleaseServiceOptions {
  stores: {
    applications: Pick<ApplicationStore, 'getApplication'>;
    clusters: Pick<ClusterStore, 'getCluster' | 'listClusters'>;
    deployments: Pick<
      DeploymentStore,
      'listDeployments' | 'getDeployment' | 'getDeploymentFor'
    >;
    revisions: Pick<RevisionStore, 'getRevision'>;
    releases: ReleaseStore;
  };
  deployments: Pick<DeploymentService, 'deploy'>;
}

/**
 * Fleet releases: one request, a new revision (cause `release`) on every cluster the application
 * is placed on, or on the named ones, each through the same deploy flow as a deploy to one
 * cluster. OFFLINE clusters (and clusters a deploy refuses) are skipped and listed. A release's
 * progress is read from its targets' deployments.
 */
export class ReleaseService {
  private constructor(private readonly options: ReleaseServiceOptions) {}

  static create(options: ReleaseServiceOptions): ReleaseService {
    return new ReleaseService(options);
  }

  async release(
    applicationId: string,
    request: ReleaseRequest,
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
    if (request.strategy) {
      return this.startProgressive(application, clusters, request, actor);
    }
    // An immediate release would overwrite what a running canary is doing on every cluster.
    await assertNoRunningRelease(
      stores.releases,
      application,
      'an immediate release',
    );
    const targets: ReleaseRecord['targets'] = [];
    const skipped: ReleaseRecord['skipped'] = [];
    for (const cluster of clusters) {
      const name = cluster.name;
      if (cluster.status === 'OFFLINE') {
        skipped.push({ cluster: name, reason: 'cluster is OFFLINE' });
        continue;
      }
      try {
        const deployment = await deployments.deploy(
          {
            entityRef: application.entityRef,
            cluster: name,
            image: request.image,
            replicas: request.replicas,
            env: request.env,
            cause: 'release',
          },
          actor,
        );
        targets.push({
          cluster: name,
          deploymentId: deployment.id,
          revision: deployment.revision,
        });
      } catch (error) {
        skipped.push({ cluster: name, reason: asError(error).message });
      }
    }
    const record = await stores.releases.insertRelease({
      id: randomUUID(),
      applicationId,
      createdBy: actor,
      request: {
        image: request.image,
        replicas: request.replicas,
        env: request.env,
      },
      targets,
      skipped,
    });
    return this.view(record, application);
  }

  /**
   * A release with a strategy: nothing is applied now. The targets are split into waves and the
   * release is stored PROGRESSING; the release task runs the waves. Each target needs a running
   * deployment (the canary starts from what it runs); OFFLINE clusters are skipped and listed.
   */
  private async startProgressive(
    application: Application,
    clusters: ClusterRecord[],
    request: ReleaseRequest,
    actor: string,
  ): Promise<Release> {
    const { stores } = this.options;
    const strategy = request.strategy!;
    if (ignoresReplicas(application)) {
      throw new ConflictError(
        `'${application.entityRef}' leaves its replica count to someone else (ignoreDifferences lists /spec/replicas): a canary sized by replicas cannot run; release it without a strategy`,
      );
    }
    const skipped: ReleaseRecord['skipped'] = [];
    const usable: ClusterRecord[] = [];
    for (const cluster of clusters) {
      if (cluster.status === 'OFFLINE') {
        skipped.push({ cluster: cluster.name, reason: 'cluster is OFFLINE' });
        continue;
      }
      const deployment = await stores.deployments.getDeploymentFor(
        application.id,
        cluster.name,
      );
      if (!deployment || deployment.status === 'REMOVING') {
        throw new ConflictError(
          `A release with a strategy starts from what each cluster runs, and '${application.entityRef}' has no deployment on '${cluster.name}': deploy it there first, or leave it out of 'clusters'`,
        );
      }
      usable.push(cluster);
    }
    if (usable.length === 0) {
      throw new ConflictError(
        `No target of this release is reachable: ${skipped
          .map(s => s.cluster)
          .join(', ')} ${skipped.length === 1 ? 'is' : 'are'} OFFLINE`,
      );
    }
    const running = (await stores.releases.listReleases(application.id)).find(
      r => r.phase && ['PROGRESSING', 'PAUSED', 'ABORTING'].includes(r.phase),
    );
    if (running) {
      throw new ConflictError(
        `Release '${running.id}' of '${application.entityRef}' is still ${running.phase}: abort it or wait for it to end`,
      );
    }
    const waves = resolveWaves(
      strategy.waves,
      usable.map(c => ({ name: c.name, labels: c.labels })),
      skipped.map(x => x.cluster),
    );
    const record = await stores.releases.insertRelease({
      id: randomUUID(),
      applicationId: application.id,
      createdBy: actor,
      request: {
        image: request.image,
        replicas: request.replicas,
        env: request.env,
      },
      strategy,
      phase: 'PROGRESSING',
      progress: initialProgress(waves, new Date()),
      targets: [],
      skipped,
    });
    // The release's first events: who started it, and its first wave.
    const t = new Transition(
      record.id,
      structuredClone(record.progress!),
      Date.now(),
    );
    t.event(
      'CREATED',
      `Release of ${
        request.image ?? 'the current image'
      } started by ${actor}: ${waves.length} wave${
        waves.length === 1 ? '' : 's'
      } over ${usable.length} cluster${usable.length === 1 ? '' : 's'}${
        skipped.length
          ? `; skipped ${skipped.map(x => x.cluster).join(', ')}`
          : ''
      }`,
      { actor },
    );
    t.event(
      'WAVE_STARTED',
      `Wave 1 of ${waves.length} started: ${waves[0].join(', ')}`,
      { actor },
    );
    await stores.releases.updateProgress(
      record.id,
      record.version,
      t.progress,
      { events: t.events },
    );
    return this.getRelease(record.id);
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
    if (record.progress) status = record.progress.phase;
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
      replicas: record.request.replicas ?? null,
      env: record.request.env ?? null,
      status,
      targets,
      skipped: record.skipped,
      strategy: record.strategy ?? null,
      progress: record.progress ?? null,
    };
  }
}
