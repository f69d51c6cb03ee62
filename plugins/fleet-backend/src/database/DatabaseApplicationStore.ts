import { ConflictError } from '@backstage/errors';
import type { Application } from '@cnp/plugin-fleet-common';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { PreconditionFailedError } from './conflicts';
import { afterKey, isUniqueViolation } from './dialect';
import { toApplication, type ApplicationRow } from './tables';
import type {
  ApplicationStore,
  NewApplication,
  PageRequest,
  PlacementGrant,
  PlacementGrantInput,
} from './types';
import type { PolicyDecision } from '@backstage/plugin-permission-common';
import type { PlacementRefusal } from '@cnp/plugin-fleet-common';

/** Applications, each with whether it is being removed. */
function applicationsQuery(db: Knex) {
  return db<ApplicationRow>('fleet_applications as a')
    .leftJoin('fleet_application_removals as r', 'r.application_id', 'a.id')
    .leftJoin('fleet_placement_grants as g', 'g.application_id', 'a.id')
    .select(
      'a.*',
      db.raw('r.application_id is not null as removing'),
      'g.refused as placement_refused',
    );
}

/** Another application holds the Ingress host a write asks for. */
class IngressHostTaken extends Error {
  constructor(readonly host: string) {
    super(`Ingress host '${host}' is taken`);
  }
}

/**
 * Claims the application's Ingress host (none: lets its host go), in the transaction that writes
 * its spec: the host's row is unique, so of two writes racing for a host one is refused.
 */
async function claimIngressHost(
  tx: Knex.Transaction,
  id: string,
  spec: Application['spec'],
): Promise<void> {
  await tx('fleet_ingress_hosts').where({ application_id: id }).delete();
  const host = spec.ingress?.host;
  if (!host) return;
  try {
    await tx('fleet_ingress_hosts').insert({ host, application_id: id });
  } catch (error) {
    if (isUniqueViolation(error)) throw new IngressHostTaken(host);
    throw error;
  }
}

/** Writes (or replaces) an application's placement grant, keeping what the reconcile refused. */
async function writePlacementGrant(
  db: Knex | Knex.Transaction,
  id: string,
  grant: PlacementGrantInput,
): Promise<void> {
  await db('fleet_placement_grants')
    .insert({
      application_id: id,
      decision: JSON.stringify(grant.decision),
      granted_by: grant.by.slice(0, 255),
      granted_at: new Date(),
    })
    .onConflict('application_id')
    .merge(['decision', 'granted_by', 'granted_at']);
}

/** The knex implementation of {@link ApplicationStore}, on SQLite and PostgreSQL. */
export class DatabaseApplicationStore implements ApplicationStore {
  private constructor(private readonly db: Knex) {}

  static create(db: Knex): DatabaseApplicationStore {
    return new DatabaseApplicationStore(db);
  }

  async listApplications(filter?: {
    entityRef?: string;
    page?: PageRequest;
  }): Promise<Application[]> {
    const query = applicationsQuery(this.db).orderBy('a.entity_ref');
    if (filter?.entityRef) query.where('a.entity_ref', filter.entityRef);
    if (filter?.page) {
      afterKey(query, ['a.entity_ref'], filter.page.after).limit(
        filter.page.limit,
      );
    }
    return (await query).map(toApplication);
  }

  /** The 409 of a write that lost an Ingress host to another application, naming it. */
  private async hostConflict(host: string): Promise<ConflictError> {
    const holder = await this.db('fleet_ingress_hosts as h')
      .join('fleet_applications as a', 'a.id', 'h.application_id')
      .where('h.host', host)
      .first('a.entity_ref');
    return new ConflictError(
      `Ingress host '${host}' is already used by ${
        holder?.entity_ref ?? 'another application'
      }: each host belongs to one application`,
    );
  }

  async listApplicationsByIngressHost(host: string): Promise<Application[]> {
    // The spec is JSON text: a LIKE finds the candidates on both databases (`_` and `%` cannot
    // be in a host name), the parsed spec decides.
    const rows = await applicationsQuery(this.db).where(
      'a.spec',
      'like',
      `%"host":${JSON.stringify(host)}%`,
    );
    return rows.map(toApplication).filter(a => a.spec.ingress?.host === host);
  }

  async getApplication(id: string): Promise<Application | undefined> {
    const row = await applicationsQuery(this.db).where('a.id', id).first();
    return row ? toApplication(row) : undefined;
  }

  async getApplicationByEntityRef(
    entityRef: string,
  ): Promise<Application | undefined> {
    const row = await applicationsQuery(this.db)
      .where('a.entity_ref', entityRef)
      .first();
    return row ? toApplication(row) : undefined;
  }

  async insertApplication(application: NewApplication): Promise<Application> {
    const now = new Date();
    const id = randomUUID();
    try {
      // The application and its author's placement decision land together: the reconcile
      // never reads the one without the other.
      await this.db.transaction(async tx => {
        await tx<ApplicationRow>('fleet_applications').insert({
          id,
          entity_ref: application.entityRef,
          name: application.name,
          origin: application.origin ?? null,
          spec: JSON.stringify(application.spec),
          placement: JSON.stringify(application.placement ?? {}),
          created_at: now,
          updated_at: now,
        });
        if (application.placementGrant) {
          await writePlacementGrant(tx, id, application.placementGrant);
        }
        await claimIngressHost(tx, id, application.spec);
      });
    } catch (error) {
      if (error instanceof IngressHostTaken) {
        throw await this.hostConflict(error.host);
      }
      if (isUniqueViolation(error)) {
        throw new ConflictError(
          `An application for '${application.entityRef}' already exists`,
        );
      }
      throw error;
    }
    return (await this.getApplication(id))!;
  }

  async updateApplication(
    id: string,
    update: {
      spec?: Application['spec'];
      placement?: Application['placement'];
      placementGrant?: PlacementGrantInput;
    },
    expectedVersion?: number,
  ): Promise<Application | undefined> {
    const patch: Partial<ApplicationRow> = { updated_at: new Date() };
    if (update.spec !== undefined) patch.spec = JSON.stringify(update.spec);
    if (update.placement !== undefined)
      patch.placement = JSON.stringify(update.placement);
    // A new placement and its author's decision land together: the reconcile never places the
    // new selector with the previous author's decision.
    let count: number;
    try {
      count = await this.db.transaction(async tx => {
        const query = tx<ApplicationRow>('fleet_applications').where({ id });
        if (expectedVersion !== undefined)
          query.andWhere('version', expectedVersion);
        const updated = await query.update({
          ...patch,
          version: tx.raw('version + 1'),
        });
        if (updated > 0 && update.placementGrant) {
          await writePlacementGrant(tx, id, update.placementGrant);
        }
        if (updated > 0 && update.spec !== undefined) {
          await claimIngressHost(tx, id, update.spec);
        }
        return updated;
      });
    } catch (error) {
      if (error instanceof IngressHostTaken) {
        throw await this.hostConflict(error.host);
      }
      throw error;
    }
    if (count > 0) return this.getApplication(id);
    const current = await this.getApplication(id);
    if (!current) return undefined;
    throw new PreconditionFailedError(
      `Application '${id}' changed meanwhile: it is at version ${current.version}, not ${expectedVersion}; read it again`,
    );
  }

  async markRemoving(id: string): Promise<Application | undefined> {
    if (!(await this.getApplication(id))) return undefined;
    await this.db('fleet_application_removals')
      .insert({ application_id: id, requested_at: new Date() })
      .onConflict('application_id')
      .ignore();
    return this.getApplication(id);
  }

  async excludeCluster(
    id: string,
    cluster: string,
    actor: string,
  ): Promise<void> {
    await this.db('fleet_placement_exclusions')
      .insert({
        application_id: id,
        cluster,
        created_by: actor.slice(0, 255),
        created_at: new Date(),
      })
      .onConflict(['application_id', 'cluster'])
      .ignore();
  }

  async includeCluster(id: string, cluster: string): Promise<void> {
    await this.db('fleet_placement_exclusions')
      .where({ application_id: id, cluster })
      .delete();
  }

  async listExcludedClusters(): Promise<Map<string, Set<string>>> {
    const rows: Array<{ application_id: string; cluster: string }> =
      await this.db('fleet_placement_exclusions').select(
        'application_id',
        'cluster',
      );
    const excluded = new Map<string, Set<string>>();
    for (const row of rows) {
      if (!excluded.has(row.application_id))
        excluded.set(row.application_id, new Set());
      excluded.get(row.application_id)!.add(row.cluster);
    }
    return excluded;
  }

  async deleteIfEmpty(id: string): Promise<boolean> {
    const deleted = await this.db<ApplicationRow>('fleet_applications')
      .where({ id })
      .whereNotExists(
        this.db('fleet_deployments')
          .where('fleet_deployments.application_id', id)
          .select('id'),
      )
      .delete();
    if (deleted > 0) {
      await this.db('fleet_application_removals')
        .where({ application_id: id })
        .delete();
      await this.db('fleet_placement_exclusions')
        .where({ application_id: id })
        .delete();
      await this.db('fleet_placement_grants')
        .where({ application_id: id })
        .delete();
      await this.db('fleet_ingress_hosts')
        .where({ application_id: id })
        .delete();
    }
    return deleted > 0;
  }

  async setPlacementGrant(
    id: string,
    grant: PlacementGrantInput,
  ): Promise<void> {
    await writePlacementGrant(this.db, id, grant);
  }

  async listPlacementGrants(): Promise<Map<string, PlacementGrant>> {
    const rows: Array<{
      application_id: string;
      decision: string | null;
      granted_by: string | null;
    }> = await this.db('fleet_placement_grants')
      .whereNotNull('decision')
      .select('application_id', 'decision', 'granted_by');
    const grants = new Map<string, PlacementGrant>();
    for (const row of rows) {
      const decision = parseDecision(row.decision);
      if (decision) {
        grants.set(row.application_id, {
          decision,
          by: row.granted_by ?? 'unknown',
        });
      }
    }
    return grants;
  }

  async setPlacementRefused(
    id: string,
    refused: PlacementRefusal[],
  ): Promise<void> {
    await this.db('fleet_placement_grants')
      .insert({
        application_id: id,
        refused: refused.length ? JSON.stringify(refused) : null,
      })
      .onConflict('application_id')
      .merge(['refused']);
  }
}

/** A stored decision, or undefined when it is not one (then nothing is allowed by it). */
function parseDecision(text: string | null): PolicyDecision | undefined {
  if (!text) return undefined;
  try {
    const decision = JSON.parse(text);
    return decision && typeof decision.result === 'string'
      ? (decision as PolicyDecision)
      : undefined;
  } catch {
    return undefined;
  }
}
