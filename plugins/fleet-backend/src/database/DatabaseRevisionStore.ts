import type { Revision } from '@cnp/plugin-fleet-common';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Knex } from 'knex';
import { afterSortKey } from './dialect';
import { toRevision, type RevisionRow } from './tables';
import type { NewRevision, PageRequest, RevisionStore } from './types';

/** Deployment ids per statement in a read of given deployments' revisions. */
const ID_CHUNK = 500;

/** Every column but the rendered objects, which only `getRevisionObjects` reads. */
const COLUMNS = [
  'id',
  'deployment_id',
  'application_id',
  'cluster',
  'revision',
  'image',
  'replicas',
  'env',
  'resources',
  'namespace',
  'port',
  'cause',
  'created_by',
  'created_at',
  'outcome',
  'outcome_reason',
  'outcome_at',
  'source',
] as const;

/** The row of a new revision of a deployment (its id comes from the database). */
export function revisionRow(
  deployment: { id: string; applicationId: string; cluster: string },
  revision: number,
  spec: NewRevision,
  now: Date,
): Omit<RevisionRow, 'id'> {
  return {
    deployment_id: deployment.id,
    application_id: deployment.applicationId,
    cluster: deployment.cluster,
    revision,
    image: spec.image,
    replicas: spec.replicas ?? null,
    env: spec.env ? JSON.stringify(spec.env) : null,
    resources: spec.resources ? JSON.stringify(spec.resources) : null,
    namespace: spec.namespace ?? null,
    port: spec.port ?? null,
    cause: spec.cause,
    created_by: spec.createdBy.slice(0, 255),
    created_at: now,
    outcome: null,
    outcome_reason: null,
    outcome_at: null,
    source: spec.source ? JSON.stringify(spec.source) : null,
    objects: spec.objects ? JSON.stringify(spec.objects) : null,
  };
}

/** The knex implementation of {@link RevisionStore}, on SQLite and PostgreSQL. */
export class DatabaseRevisionStore implements RevisionStore {
  private constructor(private readonly db: Knex) {}

  static create(db: Knex): DatabaseRevisionStore {
    return new DatabaseRevisionStore(db);
  }

  async listRevisions(
    deploymentId: string,
    page?: PageRequest,
  ): Promise<Revision[]> {
    const query = this.db<RevisionRow>('fleet_revisions')
      .select(...COLUMNS)
      .where({ deployment_id: deploymentId })
      .orderBy('revision', 'desc');
    if (page) {
      afterSortKey(
        query,
        [{ column: 'revision', order: 'desc' }],
        page.after?.map(Number),
      ).limit(page.limit);
    }
    return (await query).map(toRevision);
  }

  async getRevision(
    deploymentId: string,
    revision: number,
  ): Promise<Revision | undefined> {
    const row = await this.db<RevisionRow>('fleet_revisions')
      .select(...COLUMNS)
      .where({ deployment_id: deploymentId, revision })
      .first();
    return row ? toRevision(row) : undefined;
  }

  async getRevisionObjects(
    deploymentId: string,
    revision: number,
  ): Promise<KubernetesObject[] | undefined> {
    const row = await this.db<RevisionRow>('fleet_revisions')
      .select('objects')
      .where({ deployment_id: deploymentId, revision })
      .first();
    return row?.objects ? JSON.parse(row.objects) : undefined;
  }

  async listCurrentRevisions(
    filter: { applicationId?: string; deploymentIds?: string[] } = {},
  ): Promise<Revision[]> {
    const query = () => {
      const q = this.db<RevisionRow>('fleet_revisions as r')
        .join('fleet_deployments as d', join =>
          join
            .on('d.id', '=', 'r.deployment_id')
            .andOn('d.revision', '=', 'r.revision'),
        )
        .select(COLUMNS.map(column => `r.${column}`));
      if (filter.applicationId)
        q.where('d.application_id', filter.applicationId);
      return q;
    };
    if (!filter.deploymentIds) return (await query()).map(toRevision);
    // A bounded number of bound parameters per statement (SQLite's limit is the lowest).
    const revisions: Revision[] = [];
    for (let i = 0; i < filter.deploymentIds.length; i += ID_CHUNK) {
      const ids = filter.deploymentIds.slice(i, i + ID_CHUNK);
      for (const row of await query().whereIn('d.id', ids))
        revisions.push(toRevision(row));
    }
    return revisions;
  }
}
