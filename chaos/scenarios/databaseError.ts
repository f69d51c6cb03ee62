/*
 * A database error for one cluster in a cycle: a PostgreSQL trigger (installed from outside, no
 * change to Fleet) makes the cascade of cluster 'c2' fail inside its transaction. That cluster's
 * whole transaction rolls back; the other clusters' updates of the same cycle are committed.
 */
import {
  createFleet,
  seedDeployments,
  startSimulator,
} from '@cnp/fleet-harness';
import { CHAOS_READY_DELAY_MS } from '../lib';
import type { Scenario } from '../lib';

const TRIGGER_SQL = `
CREATE OR REPLACE FUNCTION chaos_fail_c2() RETURNS trigger AS $$
BEGIN
  IF NEW.cluster = 'c2' THEN
    RAISE EXCEPTION 'chaos: injected database error for cluster %', NEW.cluster;
  END IF;
  RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER chaos_fail_c2 BEFORE UPDATE ON fleet_deployments
  FOR EACH ROW EXECUTE FUNCTION chaos_fail_c2();
`;

export const databaseError: Scenario = {
  id: 'db-error',
  title: 'Database error for one cluster',
  tried:
    "'c2' and 'c4' reach their failure threshold in the same cycle; a PostgreSQL trigger raises an error when c2's deployments are degraded (mid-transaction, after its status UPDATE and event INSERT)",
  timeoutMs: 120_000,
  async run({ checks, db }) {
    const names = ['c1', 'c2', 'c3', 'c4', 'c5'];
    const sim = await startSimulator({
      clusters: names,
      readyDelayMs: CHAOS_READY_DELAY_MS,
    });
    const knex = db.knex();
    const fleet = await createFleet({
      knex,
      kubeconfigDir: sim.kubeconfigDir,
      health: { probeTimeoutMs: 1000 },
    });
    await fleet.worker.runCycle();
    await seedDeployments(knex, names, 3);
    await fleet.worker.runCycle();

    sim.setFault('c2', { mode: 'down' });
    sim.setFault('c4', { mode: 'down' });
    await fleet.worker.runCycle(); // grace: one failure each
    await knex.raw(TRIGGER_SQL);
    const c2Before = await knex('fleet_clusters').where({ name: 'c2' }).first();
    const eventsBefore = Number(
      (await knex('fleet_events').count({ n: '*' }).first())?.n,
    );
    const before = Object.fromEntries(
      (await knex('fleet_clusters').select('name', 'last_probe_at')).map(r => [
        r.name,
        new Date(r.last_probe_at).getTime(),
      ]),
    );

    const summary = await fleet.worker.runCycle();

    checks.ok(
      summary.errors.length === 1 &&
        summary.errors[0].cluster === 'c2' &&
        /chaos: injected/.test(summary.errors[0].message),
      'the cycle reported exactly one error, for c2, with the database message',
      summary.errors,
    );
    const c2After = await knex('fleet_clusters').where({ name: 'c2' }).first();
    checks.equal(
      {
        status: c2After.status,
        failures: c2After.consecutive_failures,
        updated: String(c2After.updated_at),
      },
      {
        status: c2Before.status,
        failures: c2Before.consecutive_failures,
        updated: String(c2Before.updated_at),
      },
      "c2's transaction rolled back whole: its row is as before (ONLINE, 1 failure), though its status UPDATE ran first",
    );
    const c2Events = await fleet.stores.events.listEvents({
      subjectKind: 'cluster',
      subject: 'c2',
    });
    checks.ok(
      !c2Events.some(e => e.to === 'OFFLINE'),
      'no OFFLINE event for c2 (its event INSERT rolled back too)',
    );
    const c2Deployments = await fleet.stores.deployments.listDeployments({
      cluster: 'c2',
    });
    checks.ok(
      c2Deployments.every(d => d.status === 'DEPLOYED'),
      "c2's 3 deployments untouched (DEPLOYED)",
    );

    const c4 = await fleet.stores.clusters.getCluster('c4');
    const c4Deployments = await fleet.stores.deployments.listDeployments({
      cluster: 'c4',
    });
    checks.ok(
      c4?.status === 'OFFLINE' &&
        c4Deployments.length === 3 &&
        c4Deployments.every(d => d.status === 'DEGRADED'),
      "the same cycle's update of c4 committed: OFFLINE, its 3 deployments DEGRADED",
      { status: c4?.status, deployments: c4Deployments.map(d => d.status) },
    );
    const after = Object.fromEntries(
      (await knex('fleet_clusters').select('name', 'last_probe_at')).map(r => [
        r.name,
        new Date(r.last_probe_at).getTime(),
      ]),
    );
    const advanced = ['c1', 'c3', 'c5'].filter(n => after[n] > before[n]);
    checks.equal(
      advanced,
      ['c1', 'c3', 'c5'],
      'c1, c3 and c5 got their probe results of this cycle committed',
    );
    const eventsAfter = Number(
      (await knex('fleet_events').count({ n: '*' }).first())?.n,
    );
    checks.equal(
      eventsAfter - eventsBefore,
      1 + 3,
      'the events of the cycle: c4 OFFLINE + its 3 deployments, none for c2',
    );

    await knex.raw(
      'DROP TRIGGER chaos_fail_c2 ON fleet_deployments; DROP FUNCTION chaos_fail_c2();',
    );
    const next = await fleet.worker.runCycle();
    const c2Next = await fleet.stores.clusters.getCluster('c2');
    const c2DeploymentsNext = await fleet.stores.deployments.listDeployments({
      cluster: 'c2',
    });
    checks.ok(
      next.errors.length === 0 &&
        c2Next?.status === 'OFFLINE' &&
        c2DeploymentsNext.every(d => d.status === 'DEGRADED'),
      'once the fault is gone, the next cycle takes c2 OFFLINE with its cascade (its count went on from 1)',
      { errors: next.errors, status: c2Next?.status },
    );
  },
};
