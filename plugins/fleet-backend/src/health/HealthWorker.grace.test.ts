import { mockServices } from '@backstage/backend-test-utils';
import { useSimulator } from '@cnp/kube-simulator';
import { holdDate } from '../testing/clock';
import { createTestDatabases } from '../testing/databases';
import { createFleet, seedDeployment } from '../testing/fleet';

/*
 * The grace period against quick probes: an outage is confirmed by failureThreshold failures
 * spanning minOutage, and manual runs are shared and limited to one per manualMinInterval.
 */

jest.setTimeout(60_000);

const databases = createTestDatabases();
const CLUSTERS = ['alpha', 'bravo', 'charlie', 'delta', 'echo'];
const sim = useSimulator({ clusters: CLUSTERS });

describe.each(databases.eachSupportedId())(
  'HealthWorker grace period and manual runs (%s)',
  databaseId => {
    async function setup(
      options: Parameters<typeof createFleet>[0] extends infer O
        ? Partial<O>
        : never = {},
      knex?: Awaited<ReturnType<typeof databases.init>>,
    ) {
      const db = knex ?? (await databases.init(databaseId));
      let probes = 0;
      const harness = await createFleet({
        knex: db,
        kubeconfigDir: sim.kubeconfigDir,
        logger: mockServices.logger.mock(),
        wrapProbe: probe => async (cluster, timeoutMs) => {
          probes++;
          return probe(cluster, timeoutMs);
        },
        ...options,
      });
      return { knex: db, probes: () => probes, ...harness };
    }

    it('a blip shorter than minOutage with failureThreshold reached does not make the cluster OFFLINE nor degrade its deployments', async () => {
      const { worker, stores } = await setup({
        health: { failureThreshold: 2, minOutageMs: 60_000 },
      });
      await worker.runCycle();
      const onBravo = await seedDeployment(stores, 'bravo', 'web', 'DEPLOYED');

      // A 10-second blip seen by the scheduled cycle and probed again on demand, three times.
      sim.setFault('bravo', { mode: 'down' });
      const first = await worker.runCycle();
      for (let i = 0; i < 3; i++) await worker.runManualCycle();
      const bravo = (await stores.clusters.getCluster('bravo'))!;
      expect(bravo).toMatchObject({
        status: 'ONLINE',
        consecutiveFailures: 4,
        firstFailureAt: first.startedAt,
      });
      expect(bravo.statusReason).toMatch(
        /^PROBE_FAILED: 4\/2 consecutive probes failed over [\d.]+ s \(an outage is confirmed after 60 s\)/,
      );
      expect(await stores.deployments.getDeployment(onBravo.id)).toMatchObject({
        status: 'DEPLOYED',
      });
      const events = await stores.events.listEvents({
        subjectKind: 'cluster',
        subject: 'bravo',
      });
      expect(events.filter(e => e.to === 'OFFLINE')).toHaveLength(0);

      // The blip ends: the count and its first failure are forgotten.
      sim.setFault('bravo', { mode: 'ok' });
      await worker.runCycle();
      const back = (await stores.clusters.getCluster('bravo'))!;
      expect(back).toMatchObject({ status: 'ONLINE', consecutiveFailures: 0 });
      expect(back.firstFailureAt).toBeUndefined();
    });

    it('failureThreshold failures spanning minOutage make the cluster OFFLINE and degrade its deployments', async () => {
      const { worker, stores } = await setup({
        health: { failureThreshold: 2, minOutageMs: 1_500 },
      });
      await worker.runCycle();
      const onBravo = await seedDeployment(stores, 'bravo', 'web', 'DEPLOYED');
      sim.setFault('bravo', { mode: 'down' });
      // The cycles' times are set here, not by how long a loaded machine takes to run them.
      const clock = holdDate();
      let confirming;
      try {
        const first = await worker.runCycle();
        clock.advance(100);
        await worker.runCycle();
        expect(await stores.clusters.getCluster('bravo')).toMatchObject({
          status: 'ONLINE',
          consecutiveFailures: 2,
          firstFailureAt: first.startedAt,
        });
        clock.set(Date.parse(first.startedAt) + 1_500);
        confirming = await worker.runCycle();
      } finally {
        clock.restore();
      }
      expect(confirming.transitions).toEqual([
        { cluster: 'bravo', from: 'ONLINE', to: 'OFFLINE' },
      ]);
      const bravo = (await stores.clusters.getCluster('bravo'))!;
      expect(bravo).toMatchObject({
        status: 'OFFLINE',
        consecutiveFailures: 3,
      });
      expect(bravo.statusReason).toMatch(
        /^FAILURE_THRESHOLD_REACHED: 3\/2 consecutive probes failed over [\d.]+ s \(an outage is confirmed after 1.5 s\)/,
      );
      expect(await stores.deployments.getDeployment(onBravo.id)).toMatchObject({
        status: 'DEGRADED',
        statusReason: 'CLUSTER_OFFLINE',
      });
    });

    it('concurrent manual runs share one cycle, in one process and across two replicas', async () => {
      const one = await setup({ health: { manualMinIntervalMs: 60_000 } });
      const other = await setup(
        { health: { manualMinIntervalMs: 60_000 } },
        one.knex,
      );
      const answers = await Promise.all([
        one.worker.runManualCycle(),
        one.worker.runManualCycle(),
        one.worker.runManualCycle(),
        other.worker.runManualCycle(),
        other.worker.runManualCycle(),
      ]);
      // One cycle probed the five clusters; every caller got its summary.
      expect(one.probes() + other.probes()).toBe(CLUSTERS.length);
      expect(new Set(answers.map(a => a.startedAt)).size).toBe(1);
      expect(answers.every(a => a.probed === CLUSTERS.length)).toBe(true);

      // Shared also without a minimum interval, within one process.
      const quick = await setup({ health: { manualMinIntervalMs: 0 } });
      const shared = await Promise.all(
        Array.from({ length: 4 }, () => quick.worker.runManualCycle()),
      );
      expect(quick.probes()).toBe(CLUSTERS.length);
      expect(new Set(shared.map(a => a.startedAt)).size).toBe(1);
    });

    it('a second manual run within manualMinInterval does not probe again and answers the last cycle, marked reused', async () => {
      const { worker, probes } = await setup({
        health: { manualMinIntervalMs: 60_000 },
      });
      const first = await worker.runManualCycle();
      expect(first.reused).toBeUndefined();
      expect(probes()).toBe(CLUSTERS.length);

      sim.setFault('alpha', { mode: 'down' });
      const second = await worker.runManualCycle();
      expect(probes()).toBe(CLUSTERS.length);
      expect(second).toMatchObject({
        startedAt: first.startedAt,
        online: CLUSTERS.length,
        reused: {
          nextRunAt: new Date(
            Date.parse(first.finishedAt) + 60_000,
          ).toISOString(),
        },
      });
      expect(second.reused!.message).toContain(
        'fleet.health.manualMinInterval',
      );

      // The scheduled cycle is not limited.
      const scheduled = await worker.runCycle();
      expect(probes()).toBe(2 * CLUSTERS.length);
      expect(scheduled.reused).toBeUndefined();
    });

    it('manual runs probe again once manualMinInterval has passed', async () => {
      const { worker, probes } = await setup({
        health: { manualMinIntervalMs: 500 },
      });
      // The runs' times are set here, not by how long a loaded machine takes to run them.
      const clock = holdDate();
      let later;
      try {
        await worker.runManualCycle();
        clock.advance(100);
        expect((await worker.runManualCycle()).reused).toBeDefined();
        clock.advance(500);
        later = await worker.runManualCycle();
      } finally {
        clock.restore();
      }
      expect(later.reused).toBeUndefined();
      expect(probes()).toBe(2 * CLUSTERS.length);
    });
  },
);
