import { mockServices } from '@backstage/backend-test-utils';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ClusterStore, FleetStores } from '../database/types';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import { eventually } from '../testing/eventually';
import { createFleet, seedDeployment } from '../testing/fleet';

jest.setTimeout(60_000);

const databases = createTestDatabases();
const CLUSTERS = ['alpha', 'bravo', 'charlie', 'delta', 'echo'];
const sim = useSimulator({ clusters: CLUSTERS });

describe.each(databases.eachSupportedId())(
  'HealthWorker against the kube simulator (%s)',
  databaseId => {
    async function setup(
      options: Parameters<typeof createFleet>[0] extends infer O
        ? Partial<O>
        : never = {},
    ) {
      const knex = await databases.init(databaseId);
      const harness = await createFleet({
        knex,
        kubeconfigDir: sim.kubeconfigDir,
        logger: mockServices.logger.mock(),
        ...options,
      });
      return { knex, ...harness };
    }
    const status = async (stores: FleetStores, name: string) =>
      (await stores.clusters.getCluster(name))!;

    it('discovers the simulated clusters and makes them ONLINE with their server version', async () => {
      const { stores, worker } = await setup();
      const summary = await worker.runCycle();
      expect(summary).toMatchObject({
        probed: 5,
        online: 5,
        offline: 0,
        errors: [],
      });
      const alpha = await status(stores, 'alpha');
      expect(alpha).toMatchObject({
        status: 'ONLINE',
        endpoint: sim.endpoint('alpha'),
        kubeconfigRef: sim.kubeconfigPath('alpha'),
        consecutiveFailures: 0,
        serverVersion: expect.stringMatching(/^v1\./),
      });
      expect(alpha.lastProbeAt).toBeDefined();
      expect(alpha.lastSuccessAt).toBeDefined();
    });

    it('rule 1 grace period: one failed probe keeps ONLINE, the threshold makes OFFLINE, counts are stored', async () => {
      const { stores, worker } = await setup();
      await worker.runCycle();
      sim.setFault('bravo', { mode: 'down' });
      await worker.runCycle();
      expect(await status(stores, 'bravo')).toMatchObject({
        status: 'ONLINE',
        consecutiveFailures: 1,
      });
      await worker.runCycle();
      const bravo = await status(stores, 'bravo');
      expect(bravo).toMatchObject({
        status: 'OFFLINE',
        consecutiveFailures: 2,
      });
      const [event] = await stores.events.listEvents({
        subjectKind: 'cluster',
        subject: 'bravo',
      });
      expect(event).toMatchObject({
        from: 'ONLINE',
        to: 'OFFLINE',
        reason: 'FAILURE_THRESHOLD_REACHED',
        actor: 'fleet-health',
      });
      expect(event.message).toContain('2/2 consecutive probes failed');

      // a success resets the count and brings it back
      sim.setFault('bravo', { mode: 'ok' });
      await worker.runCycle();
      expect(await status(stores, 'bravo')).toMatchObject({
        status: 'ONLINE',
        consecutiveFailures: 0,
      });
      // and a single failure after that does not reach the threshold again
      sim.setFault('bravo', { mode: 'error' });
      await worker.runCycle();
      expect(await status(stores, 'bravo')).toMatchObject({
        status: 'ONLINE',
        consecutiveFailures: 1,
      });
    });

    it('rule 2 cascade only on a confirmed ONLINE -> OFFLINE, never from UNKNOWN', async () => {
      const { stores, worker } = await setup();
      await worker.runCycle();
      const onAlpha = await seedDeployment(stores, 'alpha', 'web', 'DEPLOYED');
      const pendingOnAlpha = await seedDeployment(
        stores,
        'alpha',
        'batch',
        'PENDING',
      );
      const onBravo = await seedDeployment(stores, 'bravo', 'web', 'DEPLOYED');

      sim.setFault('alpha', { mode: 'down' });
      await worker.runCycle();
      expect(await stores.deployments.getDeployment(onAlpha.id)).toMatchObject({
        status: 'DEPLOYED',
      }); // grace period
      await worker.runCycle();
      expect(await stores.deployments.getDeployment(onAlpha.id)).toMatchObject({
        status: 'DEGRADED',
        statusReason: 'CLUSTER_OFFLINE',
      });
      expect(
        await stores.deployments.getDeployment(pendingOnAlpha.id),
      ).toMatchObject({
        status: 'PENDING',
      });
      expect(await stores.deployments.getDeployment(onBravo.id)).toMatchObject({
        status: 'DEPLOYED',
      });

      // a cluster that was never ONLINE: UNKNOWN -> OFFLINE changes the cluster only
      const fox = `fox-${databaseId.toLowerCase().replace(/_/g, '-')}`;
      const added = await sim.addCluster(fox);
      sim.setFault(fox, { mode: 'down' });
      await worker.runCycle(); // discovered, first failure
      expect(await status(stores, fox)).toMatchObject({
        status: 'UNKNOWN',
        consecutiveFailures: 1,
      });
      const onFox = await seedDeployment(stores, fox, 'web', 'DEPLOYED');
      await worker.runCycle();
      expect(await status(stores, fox)).toMatchObject({ status: 'OFFLINE' });
      expect(await stores.deployments.getDeployment(onFox.id)).toMatchObject({
        status: 'DEPLOYED',
      });
      fs.rmSync(added, { force: true });
    });

    it('rule 3 targeted recovery: only deployments degraded by CLUSTER_OFFLINE go back to DEPLOYED', async () => {
      const { stores, worker } = await setup();
      await worker.runCycle();
      const cascaded = await seedDeployment(
        stores,
        'charlie',
        'web',
        'DEPLOYED',
      );
      const sick = await seedDeployment(
        stores,
        'charlie',
        'api',
        'DEGRADED',
        'WORKLOAD_UNHEALTHY',
      );
      const failed = await seedDeployment(
        stores,
        'charlie',
        'jobs',
        'FAILED',
        'APPLY_FAILED',
      );
      sim.setFault('charlie', { mode: 'timeout' });
      await worker.runCycle();
      await worker.runCycle();
      expect(await stores.deployments.getDeployment(cascaded.id)).toMatchObject(
        {
          status: 'DEGRADED',
          statusReason: 'CLUSTER_OFFLINE',
        },
      );

      sim.setFault('charlie', { mode: 'ok' });
      const summary = await worker.runCycle();
      expect(summary.restoredDeployments).toBe(1);
      expect(await status(stores, 'charlie')).toMatchObject({
        status: 'ONLINE',
      });
      expect(await stores.deployments.getDeployment(cascaded.id)).toMatchObject(
        {
          status: 'DEPLOYED',
        },
      );
      expect(await stores.deployments.getDeployment(sick.id)).toMatchObject({
        status: 'DEGRADED',
        statusReason: 'WORKLOAD_UNHEALTHY',
      });
      expect(await stores.deployments.getDeployment(failed.id)).toMatchObject({
        status: 'FAILED',
        statusReason: 'APPLY_FAILED',
      });
      const events = await stores.events.listEvents({
        subjectKind: 'deployment',
        subject: cascaded.id,
      });
      expect(events.slice(0, 2).map(e => `${e.from}->${e.to}`)).toEqual([
        'DEGRADED->DEPLOYED',
        'DEPLOYED->DEGRADED',
      ]);
    });

    it('rule 4 isolation: an error on one cluster rolls back that cluster alone and the cycle goes on', async () => {
      const failOn = 'bravo';
      const { stores, worker } = await setup({
        wrapClusters: inner =>
          Object.assign(Object.create(inner), {
            inClusterTransaction: (
              fn: Parameters<ClusterStore['inClusterTransaction']>[0],
            ) =>
              inner.inClusterTransaction(tx =>
                fn({
                  ...tx,
                  degradeDeploymentsOnCluster: async (
                    cluster,
                    actor,
                    message,
                  ) => {
                    const moved = await tx.degradeDeploymentsOnCluster(
                      cluster,
                      actor,
                      message,
                    );
                    if (cluster === failOn)
                      throw new Error(`injected failure on ${cluster}`);
                    return moved;
                  },
                }),
              ),
          }),
      });
      await worker.runCycle();
      const onAlpha = await seedDeployment(stores, 'alpha', 'web', 'DEPLOYED');
      const onBravo = await seedDeployment(stores, 'bravo', 'web', 'DEPLOYED');
      sim.setFault('alpha', { mode: 'down' });
      sim.setFault('bravo', { mode: 'down' });
      await worker.runCycle();
      const summary = await worker.runCycle();

      expect(summary.errors).toEqual([
        { cluster: 'bravo', message: 'injected failure on bravo' },
      ]);
      expect(await status(stores, 'alpha')).toMatchObject({
        status: 'OFFLINE',
        consecutiveFailures: 2,
      });
      expect(await stores.deployments.getDeployment(onAlpha.id)).toMatchObject({
        status: 'DEGRADED',
      });
      // bravo's status change and cascade were one transaction: both rolled back
      expect(await status(stores, 'bravo')).toMatchObject({
        status: 'ONLINE',
        consecutiveFailures: 1,
      });
      expect(await stores.deployments.getDeployment(onBravo.id)).toMatchObject({
        status: 'DEPLOYED',
      });
      expect(
        (
          await stores.events.listEvents({
            subjectKind: 'cluster',
            subject: 'bravo',
          })
        )[0].to,
      ).toBe('ONLINE');
      // clusters probed after bravo in the same cycle were still updated
      expect(await status(stores, 'echo')).toMatchObject({ status: 'ONLINE' });
      expect(summary.probed).toBe(5);
    });

    it('writes a cycle without transitions in one statement for all its clusters', async () => {
      const { knex, worker } = await setup();
      await worker.runCycle(); // UNKNOWN -> ONLINE: one transaction each
      const updates: string[] = [];
      const onQuery = (q: { sql: string }) => {
        if (/^update\s+"?fleet_clusters/i.test(q.sql.trim()))
          updates.push(q.sql);
      };
      knex.on('query', onQuery);
      const summary = await worker.runCycle();
      knex.off('query', onQuery);
      expect(summary).toMatchObject({
        probed: 5,
        online: 5,
        errors: [],
        transitions: [],
      });
      expect(updates).toHaveLength(1);
    });

    it('rule 4 with batched writes: a failed batch is written cluster by cluster and only the failing one rolls back', async () => {
      const failOn = 'charlie';
      let batches = 0;
      let failing = false;
      const { stores, worker } = await setup({
        wrapClusters: inner =>
          Object.assign(Object.create(inner), {
            updateClustersHealth: async (
              updates: Parameters<ClusterStore['updateClustersHealth']>[0],
            ) => {
              batches += 1;
              if (failing) throw new Error('injected batch failure');
              return inner.updateClustersHealth(updates);
            },
            inClusterTransaction: (
              fn: Parameters<ClusterStore['inClusterTransaction']>[0],
            ) =>
              inner.inClusterTransaction(tx =>
                fn({
                  ...tx,
                  updateClusterHealth: async (name, update) => {
                    await tx.updateClusterHealth(name, update);
                    if (failing && name === failOn)
                      throw new Error(`injected failure on ${name}`);
                  },
                }),
              ),
          }),
      });
      await worker.runCycle(); // UNKNOWN -> ONLINE: per-cluster transactions
      failing = true;
      sim.setFault('bravo', { mode: 'down' });
      const before = await status(stores, 'alpha');
      const charlieBefore = await status(stores, failOn);
      const summary = await worker.runCycle(); // no transition: one batch, which fails
      expect(batches).toBe(1);
      expect(summary.errors).toEqual([
        { cluster: failOn, message: `injected failure on ${failOn}` },
      ]);
      expect(await status(stores, 'bravo')).toMatchObject({
        status: 'ONLINE',
        consecutiveFailures: 1,
      });
      const alpha = await status(stores, 'alpha');
      expect(new Date(alpha.lastProbeAt!).getTime()).toBeGreaterThan(
        new Date(before.lastProbeAt!).getTime(),
      );
      expect((await status(stores, failOn)).lastProbeAt).toBe(
        charlieBefore.lastProbeAt,
      ); // rolled back
    });

    it('rule 5 not probeable: an opaque or vanished kubeconfigRef makes UNKNOWN, never OFFLINE, with no cascade', async () => {
      const { stores, worker } = await setup();
      await worker.runCycle();
      await stores.clusters.insertCluster({
        name: 'vault-ref',
        endpoint: 'https://10.1.1.1:6443',
        kubeconfigRef: 'secret/prod-kubeconfig',
        source: 'manual',
      });
      const onDelta = await seedDeployment(stores, 'delta', 'web', 'DEPLOYED');
      // delta fails once, then its kubeconfig file disappears
      sim.setFault('delta', { mode: 'down' });
      await worker.runCycle();
      // moved out of the discovery directory, so discovery cannot find it elsewhere either
      const moved = path.join(
        os.tmpdir(),
        `fleet-test-delta-${process.pid}.yaml`,
      );
      fs.renameSync(sim.kubeconfigPath('delta'), moved);
      try {
        for (let i = 0; i < 3; i++) await worker.runCycle();
        const delta = await status(stores, 'delta');
        expect(delta).toMatchObject({
          status: 'UNKNOWN',
          consecutiveFailures: 1,
        });
        expect(delta.statusReason).toMatch(
          /^NOT_PROBEABLE: kubeconfig file .*delta\.yaml' is not readable/,
        );
        expect(
          await stores.deployments.getDeployment(onDelta.id),
        ).toMatchObject({
          status: 'DEPLOYED',
        });
        const vault = await status(stores, 'vault-ref');
        expect(vault).toMatchObject({
          status: 'UNKNOWN',
          consecutiveFailures: 0,
        });
        expect(vault.statusReason).toContain('opaque reference');
        expect(vault.lastProbeAt).toBeNull();
      } finally {
        fs.renameSync(moved, sim.kubeconfigPath('delta'));
      }
      // back: the count was neither reset nor advanced while not probeable
      await worker.runCycle();
      expect(await status(stores, 'delta')).toMatchObject({
        status: 'OFFLINE',
        consecutiveFailures: 2,
      });
      expect(await stores.deployments.getDeployment(onDelta.id)).toMatchObject({
        status: 'DEPLOYED',
      }); // from UNKNOWN: no cascade
    });

    it('rule 6 mass-outage guard: honest statuses, cascade held and recorded, warning in the summary, then applied or dropped', async () => {
      const { stores, worker, logger } = await setup();
      await worker.runCycle();
      const deps: Record<string, string> = {};
      for (const c of ['alpha', 'bravo', 'charlie', 'delta']) {
        deps[c] = (await seedDeployment(stores, c, 'web', 'DEPLOYED')).id;
      }
      for (const c of ['alpha', 'bravo', 'charlie', 'delta'])
        sim.setFault(c, { mode: 'down' });
      await worker.runCycle();
      const guarded = await worker.runCycle();

      expect(guarded.massOutage).toMatchObject({
        active: true,
        clusters: ['alpha', 'bravo', 'charlie', 'delta'],
      });
      expect(guarded.degradedDeployments).toBe(0);
      for (const c of ['alpha', 'bravo', 'charlie', 'delta']) {
        expect(await status(stores, c)).toMatchObject({ status: 'OFFLINE' });
        expect((await status(stores, c)).cascadeHeldAt).toBeDefined();
        expect(await stores.deployments.getDeployment(deps[c])).toMatchObject({
          status: 'DEPLOYED',
        });
      }
      expect(logger.warn).toHaveBeenCalledWith(
        expect.stringContaining('Mass outage suspected: 4 of 5'),
        { clusters: 'alpha,bravo,charlie,delta' },
      );

      // still down everywhere: the guard stays up, nothing cascades
      const stillGuarded = await worker.runCycle();
      expect(stillGuarded.massOutage.active).toBe(true);
      expect(await stores.deployments.getDeployment(deps.alpha)).toMatchObject({
        status: 'DEPLOYED',
      });

      // three come back: the guard lifts; the held cascade is applied to the one still OFFLINE
      for (const c of ['alpha', 'bravo', 'charlie'])
        sim.setFault(c, { mode: 'ok' });
      const lifted = await worker.runCycle();
      expect(lifted.massOutage.active).toBe(false);
      expect(lifted.degradedDeployments).toBe(1);
      expect(await stores.deployments.getDeployment(deps.delta)).toMatchObject({
        status: 'DEGRADED',
        statusReason: 'CLUSTER_OFFLINE',
      });
      for (const c of ['alpha', 'bravo', 'charlie']) {
        expect(await status(stores, c)).toMatchObject({
          status: 'ONLINE',
          cascadeHeldAt: undefined,
        });
        expect(await stores.deployments.getDeployment(deps[c])).toMatchObject({
          status: 'DEPLOYED',
        });
      }
      expect((await status(stores, 'delta')).cascadeHeldAt).toBeUndefined();
    });

    it('rule 6 keeps a held cascade while the cluster is UNKNOWN, and applies it when it is OFFLINE again', async () => {
      const { stores, worker } = await setup();
      await worker.runCycle();
      const deps: Record<string, string> = {};
      for (const c of ['alpha', 'bravo', 'charlie', 'delta'])
        deps[c] = (await seedDeployment(stores, c, 'web', 'DEPLOYED')).id;
      for (const c of ['alpha', 'bravo', 'charlie', 'delta'])
        sim.setFault(c, { mode: 'down' });
      await worker.runCycle();
      expect((await worker.runCycle()).massOutage.active).toBe(true);
      expect((await status(stores, 'delta')).cascadeHeldAt).toBeDefined();

      // the network comes back for three; delta's kubeconfig disappears meanwhile: UNKNOWN, held
      for (const c of ['alpha', 'bravo', 'charlie'])
        sim.setFault(c, { mode: 'ok' });
      const moved = path.join(
        os.tmpdir(),
        `fleet-test-delta-held-${process.pid}.yaml`,
      );
      fs.renameSync(sim.kubeconfigPath('delta'), moved);
      try {
        await worker.runCycle();
        expect(await status(stores, 'delta')).toMatchObject({
          status: 'UNKNOWN',
        });
        expect((await status(stores, 'delta')).cascadeHeldAt).toBeDefined();
        expect(
          await stores.deployments.getDeployment(deps.delta),
        ).toMatchObject({
          status: 'DEPLOYED',
        });
      } finally {
        fs.renameSync(moved, sim.kubeconfigPath('delta'));
      }
      // back and still down: UNKNOWN -> OFFLINE would never cascade, but the held cascade applies
      await worker.runCycle();
      expect(await status(stores, 'delta')).toMatchObject({
        status: 'OFFLINE',
        cascadeHeldAt: undefined,
      });
      expect(await stores.deployments.getDeployment(deps.delta)).toMatchObject({
        status: 'DEGRADED',
        statusReason: 'CLUSTER_OFFLINE',
      });
      for (const c of ['alpha', 'bravo', 'charlie'])
        expect(await stores.deployments.getDeployment(deps[c])).toMatchObject({
          status: 'DEPLOYED',
        });
    });

    it('never runs two cycles at once in one process: a manual run waits, a scheduled one skips', async () => {
      let inFlight = 0;
      let maxInFlight = 0;
      let cycles = 0;
      /** alpha's probe waits for it: the first cycle holds the lease until the test lets go. */
      let gate: Promise<void> = Promise.resolve();
      let letGo = () => {};
      const { worker, stores } = await setup({
        health: { failureThreshold: 1 },
        wrapProbe: probe => async (cluster, timeoutMs) => {
          if (cluster.name === 'alpha') {
            maxInFlight = Math.max(maxInFlight, ++inFlight);
            cycles++;
            await gate;
            inFlight--;
          }
          return probe(cluster, timeoutMs);
        },
      });
      await worker.runCycle();
      sim.setFault('bravo', { mode: 'down' });
      cycles = 0;
      gate = new Promise(resolve => {
        letGo = resolve;
      });
      const first = worker.runCycle({ wait: true });
      // The first cycle probes alpha, so it holds the lease, until letGo.
      await eventually(() => expect(inFlight).toBe(1));
      await expect(worker.runCycle({ wait: false })).rejects.toMatchObject({
        name: 'ConflictError',
      });
      const second = worker.runCycle({ wait: true });
      letGo();
      await Promise.all([first, second]);
      expect(cycles).toBe(2);
      expect(maxInFlight).toBe(1);
      // One transition, written once: the second cycle saw the first one's result.
      const events = await stores.events.listEvents({
        subjectKind: 'cluster',
        subject: 'bravo',
      });
      expect(events.filter(e => e.to === 'OFFLINE')).toHaveLength(1);
    });

    it('probes with bounded concurrency and a timeout that really aborts', async () => {
      let inFlight = 0;
      let maxInFlight = 0;
      const { worker, stores } = await setup({
        health: { probeTimeoutMs: 300, concurrency: 2 },
        wrapProbe: probe => async (cluster, timeoutMs) => {
          maxInFlight = Math.max(maxInFlight, ++inFlight);
          try {
            return await probe(cluster, timeoutMs);
          } finally {
            inFlight--;
          }
        },
      });
      for (const c of CLUSTERS) sim.setFault(c, { mode: 'timeout' });
      const requestsBefore = CLUSTERS.map(c => sim.requestCount(c));
      const summary = await worker.runCycle();
      expect(summary.probed).toBe(5);
      expect(maxInFlight).toBe(2);
      const alpha = (await stores.clusters.getCluster('alpha'))!;
      expect(alpha).toMatchObject({ consecutiveFailures: 1 });
      expect(alpha.statusReason).toContain('timed out after 300 ms');
      // Really aborted: each probe closed its request, so the simulator holds none of them open.
      for (const [i, c] of CLUSTERS.entries()) {
        expect(sim.requestCount(c)).toBeGreaterThan(requestsBefore[i]);
        await eventually(() => expect(sim.heldRequestCount(c)).toBe(0));
      }
    });
  },
);
