import { ConflictError, InputError, NotFoundError } from '@backstage/errors';
import type { Application, FleetApiComponents } from '@cnp/plugin-fleet-common';
import type {
  ApplicationStore,
  ClusterStore,
  DeploymentStore,
  ReleaseRecord,
  ReleaseStore,
  RevisionStore,
} from '../database/types';
import type { Stage } from './stageRules';
import {
  promotion,
  sharedClusters,
  soakedUntil,
  stageClusters,
  verifyStage,
  versionOf,
  type ClusterRun,
  type StageRelease,
  type Verification,
} from './verification';

/** One stage as `GET /applications/:id/stages` answers it. */
export type StageStatus = FleetApiComponents['schemas']['StageStatus'];

/** What a release to a stage asks for. */
export interface StageReleaseRequest {
  stage: string;
  clusters?: string[];
  image?: string;
  version?: string;
}

/** A release to a stage, once the stage allowed it: its clusters and the version to release. */
export interface StageReleasePlan {
  clusters: string[];
  image?: string;
  version?: string;
}

export interface StageServiceOptions {
  stores: {
    applications: Pick<ApplicationStore, 'getApplication'>;
    clusters: Pick<ClusterStore, 'listClusters'>;
    deployments: Pick<DeploymentStore, 'listDeployments'>;
    revisions: Pick<RevisionStore, 'listCurrentRevisions' | 'getRevision'>;
    releases: Pick<ReleaseStore, 'listReleases'>;
  };
  /** The time soaks are measured against (default: the system clock). */
  clock?: () => Date;
}

/** What the rules of ./verification read of one application, from the stores. */
interface Evidence {
  stages: Stage[];
  clusters: Map<string, string[]>;
  runs: Map<string, ClusterRun>;
  releases: StageRelease[];
}

/**
 * An application's stages over the stores: the clusters each holds, the version each verified,
 * and whether a release to a stage may go (a stage that requires another takes only a version
 * that stage verified, soaked). The approvals a stage requires are the release's gate (./gates).
 */
export class StageService {
  private readonly clock: () => Date;

  private constructor(private readonly options: StageServiceOptions) {
    this.clock = options.clock ?? (() => new Date());
  }

  static create(options: StageServiceOptions): StageService {
    return new StageService(options);
  }

  /** The application's stages in order (none when its spec names none). */
  async listStages(applicationId: string): Promise<StageStatus[]> {
    const application = await this.options.stores.applications.getApplication(
      applicationId,
    );
    if (!application)
      throw new NotFoundError(`Application '${applicationId}' not found`);
    const evidence = await this.evidence(application);
    const now = this.clock();
    const verifications = new Map<string, Verification>();
    const verificationOf = (name: string) => {
      let known = verifications.get(name);
      if (!known) {
        known = this.verify(evidence, name);
        verifications.set(name, known);
      }
      return known;
    };
    return evidence.stages.map(stage => {
      const clusters = evidence.clusters.get(stage.name) ?? [];
      const versions = new Set(
        clusters.map(c => versionOf(evidence.runs.get(c)?.revision)),
      );
      const [only] = [...versions];
      const { verified } = verificationOf(stage.name);
      const next = evidence.stages.find(s => s.requires?.stage === stage.name);
      const missing = stage.requires
        ? this.promotionMissing(
            stage,
            verificationOf(stage.requires.stage),
            now,
          )
        : [];
      return {
        name: stage.name,
        clusters,
        version: versions.size === 1 && only !== undefined ? only : null,
        verified: verified
          ? {
              version: verified.version,
              since: verified.since.toISOString(),
              soakedUntil: next
                ? soakedUntil(verified, next.requires?.soak)?.toISOString() ??
                  null
                : null,
            }
          : null,
        requires: stage.requires?.stage ?? null,
        missing,
      };
    });
  }

  /**
   * A release to one of the application's stages: its clusters (the stage's, or those of
   * `clusters`, each of which must be the stage's: 400 otherwise) and, when the stage requires
   * another, the version that stage verified (409 naming what is missing when it verified none,
   * another, or has not soaked it yet).
   */
  async planRelease(
    application: Application,
    request: StageReleaseRequest,
  ): Promise<StageReleasePlan> {
    const stages = application.spec.stages ?? [];
    const stage = stages.find(s => s.name === request.stage);
    if (!stage) {
      throw new InputError(
        `Invalid release: stage '${request.stage}' is not one of ${
          stages.length
            ? `the application's stages (${stages.map(s => s.name).join(', ')})`
            : "the application's stages: it names none"
        }`,
      );
    }
    const evidence = await this.evidence(application);
    const held = evidence.clusters.get(stage.name) ?? [];
    const outside = (request.clusters ?? []).filter(c => !held.includes(c));
    if (outside.length > 0) {
      throw new InputError(
        `Invalid release: ${outside.map(c => `'${c}'`).join(', ')} ${
          outside.length === 1 ? 'is' : 'are'
        } not in stage '${stage.name}' (${
          held.join(', ') || 'which holds no cluster'
        })`,
      );
    }
    const clusters = request.clusters ?? held;
    if (clusters.length === 0) {
      throw new ConflictError(`Stage '${stage.name}' holds no cluster`);
    }
    const shared = [...sharedClusters(evidence.clusters)].filter(([c]) =>
      clusters.includes(c),
    );
    if (shared.length > 0) {
      throw new ConflictError(
        `A cluster belongs to one stage at most: ${shared
          .map(([c, in_]) => `${c} is in ${in_.join(' and ')}`)
          .join('; ')}; change the stages' clusters or selectors`,
      );
    }
    if (!stage.requires) {
      return { clusters, image: request.image, version: request.version };
    }
    const requested = request.image ?? request.version;
    const verdict = promotion({
      requires: stage.requires,
      verification: this.verify(evidence, stage.requires.stage),
      requested,
      now: this.clock(),
    });
    if (!verdict.ok) {
      throw new ConflictError(
        `stage ${stage.name} requires a version ${
          stage.requires.stage
        } verified: ${verdict.missing.join('; ')}`,
      );
    }
    if (requested !== undefined) {
      return { clusters, image: request.image, version: request.version };
    }
    // Nothing named: the version the required stage verified.
    return verdict.revision.source
      ? { clusters, version: verdict.version }
      : { clusters, image: verdict.version };
  }

  /**
   * The stage a release that names none goes to. When one of its clusters is in a stage that
   * requires another, the release is that stage's, and all its clusters must be in it (409
   * otherwise: a release cannot take a version to prod by riding along with one to staging).
   * Undefined when none of its clusters is in such a stage.
   */
  async stageOf(
    application: Application,
    clusters: string[],
  ): Promise<string | undefined> {
    const stages = application.spec.stages ?? [];
    if (!stages.some(s => s.requires)) return undefined;
    const known = await this.options.stores.clusters.listClusters();
    const held = stageClusters(
      stages,
      known.map(c => ({ name: c.name, labels: c.labels ?? {} })),
    );
    const stageOfCluster = (cluster: string) =>
      stages.filter(s => held.get(s.name)?.includes(cluster));
    const governed = stages.filter(
      s => s.requires && clusters.some(c => held.get(s.name)?.includes(c)),
    );
    if (governed.length === 0) return undefined;
    const [stage] = governed;
    const outside = clusters.filter(
      c => !stageOfCluster(c).some(s => s.name === stage.name),
    );
    if (governed.length > 1 || outside.length > 0) {
      throw new ConflictError(
        `A release goes to one stage at a time: ${clusters
          .map(
            c =>
              `${c} is in ${
                stageOfCluster(c)
                  .map(s => `stage '${s.name}'`)
                  .join(' and ') || 'no stage'
              }`,
          )
          .join('; ')}; release to each stage on its own (name 'stage')`,
      );
    }
    return stage.name;
  }

  private promotionMissing(
    stage: Stage,
    required: Verification,
    now: Date,
  ): string[] {
    const verdict = promotion({
      requires: stage.requires!,
      verification: required,
      now,
    });
    return verdict.ok ? [] : verdict.missing;
  }

  private verify(evidence: Evidence, stage: string): Verification {
    return verifyStage({
      stage,
      clusters: evidence.clusters.get(stage) ?? [],
      runs: evidence.runs,
      releases: evidence.releases,
    });
  }

  private async evidence(application: Application): Promise<Evidence> {
    const { stores } = this.options;
    const stages = application.spec.stages ?? [];
    if (stages.length === 0) {
      return { stages, clusters: new Map(), runs: new Map(), releases: [] };
    }
    const [known, deployments, current, records] = await Promise.all([
      stores.clusters.listClusters(),
      stores.deployments.listDeployments({ applicationId: application.id }),
      stores.revisions.listCurrentRevisions({ applicationId: application.id }),
      stores.releases.listReleases(application.id),
    ]);
    const revisionOf = new Map(
      current.map(r => [`${r.deploymentId}#${r.revision}`, r]),
    );
    const runs = new Map<string, ClusterRun>();
    for (const deployment of deployments) {
      runs.set(deployment.cluster, {
        deployment,
        revision: revisionOf.get(`${deployment.id}#${deployment.revision}`),
      });
    }
    // Only the releases that brought a current revision can verify anything: only theirs are
    // read further.
    const releases = await Promise.all(
      records
        .filter(r =>
          r.targets.some(t =>
            revisionOf.has(`${t.deploymentId}#${t.revision}`),
          ),
        )
        .map(async record => ({
          record,
          completed: await this.completed(record, revisionOf),
        })),
    );
    return {
      stages,
      clusters: stageClusters(
        stages,
        known.map(c => ({ name: c.name, labels: c.labels ?? {} })),
      ),
      runs,
      releases,
    };
  }

  /**
   * Whether a release ended COMPLETED: with a strategy, its phase says; without, every target's
   * revision reached DEPLOYED.
   */
  private async completed(
    record: ReleaseRecord,
    current: Map<string, { outcome: string | null }>,
  ): Promise<boolean> {
    if (record.progress || record.strategy) {
      return (record.progress?.phase ?? record.phase) === 'COMPLETED';
    }
    if (record.targets.length === 0) return false;
    const outcomes = await Promise.all(
      record.targets.map(async t => {
        const known = current.get(`${t.deploymentId}#${t.revision}`);
        if (known) return known.outcome;
        const revision = await this.options.stores.revisions.getRevision(
          t.deploymentId,
          t.revision,
        );
        return revision?.outcome ?? null;
      }),
    );
    return outcomes.every(o => o === 'DEPLOYED');
  }
}
