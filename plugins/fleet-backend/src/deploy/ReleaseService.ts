import { ConflictError, InputError, NotFoundError } from '@backstage/errors';
import type {
  Application,
  Release,
  ReleaseTarget,
} from '@cnp/plugin-fleet-common';
import { randomUUID } from 'node:crypto';
import type {
  ApplicationStore,
  ClusterStore,
  DeploymentStore,
  ReleaseRecord,
  ReleaseStore,
  RevisionStore,
} from '../database/types';
import { asError } from '../util/errors';
import type { DeploymentService } from './DeploymentService';

export interface ReleaseRequest {
  image?: string;
  replicas?: number;
  env?: Record<string, string>;
  /** Only these clusters (each must be known); default: every cluster the application is placed on. */
  clusters?: string[];
  strategy?: unknown;
}

export interface ReleaseServiceOptions {
  stores: {
    applications: Pick<ApplicationStore, 'getApplication'>;
    clusters: Pick<ClusterStore, 'getCluster'>;
    deployments: Pick<DeploymentStore, 'listDeployments' | 'getDeployment'>;
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
    if (request.strategy !== undefined) {
      throw new InputError(
        "Invalid release: 'strategy' (progressive delivery) is not supported yet; a release without one reaches every target at once",
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

  async getRelease(id: string): Promise<Release> {
    const record = await this.options.stores.releases.getRelease(id);
    if (!record) throw new NotFoundError(`Release '${id}' not found`);
    return this.view(record);
  }

  async listReleases(applicationId: string): Promise<Release[]> {
    const { stores } = this.options;
    const application = await stores.applications.getApplication(applicationId);
    if (!application)
      throw new NotFoundError(`Application '${applicationId}' not found`);
    const records = await stores.releases.listReleases(applicationId);
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
    if (targets.some(t => t.outcome === 'FAILED')) status = 'FAILED';
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
    };
  }
}
