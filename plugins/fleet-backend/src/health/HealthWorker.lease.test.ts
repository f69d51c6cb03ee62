import { mockServices } from '@backstage/backend-test-utils';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import { createFleet } from '../testing/fleet';
import type { ProbeOutcome } from '../kubernetes/ClusterClients';

jest.setTimeout(60_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['alpha', 'bravo'] });

describe.each(databases.eachSupportedId())(
  'the health-cycle lease against the kube simulator (%s)',
  databaseId => {
    it('a cycle whose lease was taken over cannot write probe results: its writes are refused and the newer cycle’s stay', async () => {
      const knex = await databases.init(databaseId);
      // Two replicas over one database. The first one's cycle stalls in its probes (a GC pause,
      // a hung socket) past its lease; the second takes the lease over and runs a whole cycle.
      let stalling = false;
      let resume!: () => void;
      const stall = new Promise<void>(r => {
        resume = r;
      });
      let probing!: () => void;
      const probed = new Promise<void>(r => {
        probing = r;
      });
      const stalled = await createFleet({
        knex,
        kubeconfigDir: sim.kubeconfigDir,
        logger: mockServices.logger.mock(),
        health: { failureThreshold: 1 },
        wrapProbe: probe => async (cluster, timeoutMs) => {
          const outcome: ProbeOutcome = await probe(cluster, timeoutMs);
          if (stalling && cluster.name === 'alpha') {
            probing();
            await stall;
          }
          return outcome;
        },
      });
      const other = await createFleet({
        knex,
        kubeconfigDir: sim.kubeconfigDir,
        logger: mockServices.logger.mock(),
      });
      await other.worker.runCycle();
      expect(await other.stores.clusters.getCluster('alpha')).toMatchObject({
        status: 'ONLINE',
      });

      stalling = true;
      sim.setFault('alpha', { mode: 'down' });
      const late = stalled.worker.runCycle();
      await probed;
      // Its lease runs out while it stalls; the other replica's cycle takes it and sees alpha
      // back up.
      await knex('fleet_locks')
        .where({ name: 'health-cycle' })
        .update({ expires_at: new Date(Date.now() - 1000) });
      sim.setFault('alpha', { mode: 'ok' });
      const newer = await other.worker.runCycle();
      expect(newer.errors).toEqual([]);
      const written = await other.stores.clusters.getCluster('alpha');
      expect(written).toMatchObject({
        status: 'ONLINE',
        consecutiveFailures: 0,
      });

      resume();
      const stale = await late;
      // Its decisions (alpha OFFLINE after one failure, bravo's counters) were refused.
      expect(stale.errors.map(e => e.cluster).sort()).toEqual([
        'alpha',
        'bravo',
      ]);
      expect(stale.errors[0].message).toMatch(/lease was lost/);
      expect(await other.stores.clusters.getCluster('alpha')).toEqual(written);
      const events = await other.stores.events.listEvents({
        subjectKind: 'cluster',
        subject: 'alpha',
      });
      expect(events.some(e => e.to === 'OFFLINE')).toBe(false);
      expect(await other.stores.state.getLastCycle()).toMatchObject({
        startedAt: newer.startedAt,
      });
    });

    it('a lease taken over moves its fencing token on; a renewal keeps it; a released one is taken with a new token', async () => {
      const knex = await databases.init(databaseId);
      const { stores } = await createFleet({
        knex,
        kubeconfigDir: sim.kubeconfigDir,
        logger: mockServices.logger.mock(),
      });
      const a = await stores.state.takeLease('cycle', 'a', 60_000);
      expect(a).toEqual({ name: 'cycle', holder: 'a', token: 1 });
      expect(
        await stores.state.takeLease('cycle', 'b', 60_000),
      ).toBeUndefined();
      expect(await stores.state.takeLease('cycle', 'a', 60_000)).toEqual(a);
      await knex('fleet_locks')
        .where({ name: 'cycle' })
        .update({ expires_at: new Date(Date.now() - 1000) });
      const b = await stores.state.takeLease('cycle', 'b', 60_000);
      expect(b).toEqual({ name: 'cycle', holder: 'b', token: 2 });
      // The holder that lost it cannot renew it, nor write with its token.
      expect(
        await stores.state.takeLease('cycle', 'a', 60_000),
      ).toBeUndefined();
      await expect(
        stores.state.setLastCycle({} as any, a!),
      ).rejects.toMatchObject({ name: 'LeaseLostError' });
      await stores.state.releaseLease('cycle', 'b');
      expect(await stores.state.takeLease('cycle', 'c', 60_000)).toEqual({
        name: 'cycle',
        holder: 'c',
        token: 3,
      });
      await expect(
        stores.state.setLastCycle({} as any, b!),
      ).rejects.toMatchObject({ name: 'LeaseLostError' });
    });
  },
);
