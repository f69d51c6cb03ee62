/*
 * The reconcile with live state from watches (ClusterWatches + DriftChecks), against the kube
 * simulator: drift is seen when it happens, a run between full compares reads nothing on a
 * watched cluster, and a cluster leaving ONLINE stops its watches and its deployments' sync
 * turns UNKNOWN.
 */
import { mockServices } from '@backstage/backend-test-utils';
import type { Deployment } from '@cnp/plugin-fleet-common';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import { createFleet } from '../testing/fleet';
import type { FleetStores } from '../database/types';
import { DeploymentService } from '../deploy/DeploymentService';
import { ManifestApplier } from '../deploy/ManifestApplier';
import { ManifestRemover } from '../deploy/ManifestRemover';
import { ClusterWatches } from '../livestate/ClusterWatches';
import { DriftChecks } from '../livestate/DriftChecks';
import { ReconcileWorker } from './ReconcileWorker';

jest.setTimeout(90_000);

const databases = createTestDatabases();
const sim = useSimulator({
  clusters: ['north', 'south'],
  readyDelayMs: 50,
  watch: { controllerTickMs: 50 },
});

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(r => setTimeout(r, 25));
  }
}

describe.each(databases.eachSupportedId())(
  'ReconcileWorker with watches (%s)',
  databaseId => {
    const tag = databaseId.toLowerCase().replace(/_/g, '-');
    const namespace = `watch-${tag}`;
    const stops: Array<() => unknown> = [];
    afterEach(async () => {
      for (const stop of stops.splice(0)) await stop();
    });

    async function setup() {
      const knex = await databases.init(databaseId);
      const harness = await createFleet({
        knex,
        kubeconfigDir: sim.kubeconfigDir,
        logger: mockServices.logger.mock(),
      });
      await harness.worker.runCycle();
      const applier = ManifestApplier.create({ clients: harness.clients });
      const deployments = DeploymentService.create({
        stores: harness.stores,
        applier,
        remover: ManifestRemover.create({ clients: harness.clients }),
        logger: harness.logger,
        deploy: {
          namespace,
          defaultReplicas: 1,
          progressDeadlineMs: 5_000,
          pollIntervalMs: 25,
        },
      });
      const liveState = ClusterWatches.create({
        clients: harness.clients,
        applier,
        logger: harness.logger,
        timings: { backoffMs: 50, maxBackoffMs: 200 },
      });
      const reads = jest.spyOn(applier, 'readLive');
      // No release holds anything; when the reconcile asks is what is looked at.
      const heldDeployments = jest.fn(async () => new Set<string>());
      const reconciler = ReconcileWorker.create({
        stores: harness.stores,
        applier,
        deployments,
        logger: harness.logger,
        deploy: { namespace },
        reconcile: {
          intervalMs: 60_000,
          concurrency: 8,
          resyncIntervalMs: 600_000,
        },
        liveState,
        heldDeployments,
      });
      const driftChecks = DriftChecks.create({
        check: changes => reconciler.checkChanged(changes),
        logger: harness.logger,
      });
      // as the plugin wires them: a cluster's objects are compared once its watches listed
      liveState.listen(
        change => driftChecks.changed(change),
        cluster => {
          for (const object of reconciler.objectsOn(cluster))
            driftChecks.changed(object);
        },
      );
      stops.push(
        () => deployments.stop(),
        () => driftChecks.stop(),
        () => liveState.stop(),
      );
      return {
        ...harness,
        deployments,
        reconciler,
        liveState,
        reads,
        driftChecks,
        heldDeployments,
      };
    }

    async function settle(stores: FleetStores, id: string) {
      return until('the deploy to settle', async () => {
        const d = (await stores.deployments.getDeployment(id))!;
        return d.status !== 'PROGRESSING' && d.status !== 'PENDING' && d;
      });
    }

    async function deployed(
      h: Awaited<ReturnType<typeof setup>>,
      name: string,
      cluster: string,
    ): Promise<{ deployment: Deployment; name: string }> {
      const entityRef = `component:default/${name}-${tag}`;
      const d = await h.deployments.deploy(
        { entityRef, cluster, image: 'nginx:1.27' },
        'test',
      );
      await settle(h.stores, d.id);
      const app = (await h.stores.applications.getApplicationByEntityRef(
        entityRef,
      ))!;
      return { deployment: d, name: app.name };
    }

    const setImage = (cluster: string, name: string, image: string) =>
      sim.drift(cluster, {
        kind: 'Deployment',
        namespace,
        name,
        patch: {
          spec: {
            template: { spec: { containers: [{ name, image }] } },
          },
        },
      });

    it('sees drift when it happens, with no run: OUT_OF_SYNC naming the field', async () => {
      const h = await setup();
      const { deployment, name } = await deployed(h, 'evented', 'north');
      await h.reconciler.runOnce();
      await until('north watched', () => h.liveState.watching('north'));
      expect(
        (await h.stores.deployments.getDeployment(deployment.id))!.syncStatus,
      ).toBe('SYNCED');
      setImage('north', name, 'nginx:6.6.6');
      const drifted = await until('OUT_OF_SYNC from the event', async () => {
        const d = (await h.stores.deployments.getDeployment(deployment.id))!;
        return d.syncStatus === 'OUT_OF_SYNC' && d;
      });
      expect(drifted.syncDifferences).toContainEqual(
        expect.objectContaining({
          kind: 'Deployment',
          path: '/spec/template/spec/containers/0/image',
        }),
      );
    });

    it('finds a deployment made since the last run by the entity ref its object carries, and only for that object', async () => {
      const h = await setup();
      await h.reconciler.runOnce();
      // Made after the run: the run's index does not know it.
      const { deployment, name } = await deployed(h, 'late', 'north');
      const entityRef = `component:default/late-${tag}`;
      const claims = (change: { namespace: string; name: string }) =>
        h.reconciler.checkChanged([{ cluster: 'north', entityRef, ...change }]);
      // An object that only claims the component (another namespace, another name): nothing.
      expect(
        (await claims({ namespace: `${namespace}-copy`, name })).checked,
      ).toBe(0);
      expect((await claims({ namespace, name: `${name}-copy` })).checked).toBe(
        0,
      );
      // Its own object: compared at once.
      expect((await claims({ namespace, name })).checked).toBe(1);
      expect(
        (await h.stores.deployments.getDeployment(deployment.id))!.syncStatus,
      ).toBe('SYNCED');
    });

    it('heals drift from an event, at most once per interval: a second drift soon after stays OUT_OF_SYNC until the next run heals it', async () => {
      const h = await setup();
      const { deployment, name } = await deployed(h, 'healer', 'north');
      const app = (await h.stores.applications.getApplicationByEntityRef(
        `component:default/healer-${tag}`,
      ))!;
      await h.deployments.updateApplication(app.id, {
        spec: { selfHeal: true },
      });
      await h.reconciler.runOnce();
      await until('north watched', () => h.liveState.watching('north'));
      const liveImage = () =>
        (
          sim
            .objects('north')
            .find(
              o =>
                o.kind === 'Deployment' &&
                o.metadata.name === name &&
                o.metadata.namespace === namespace,
            ) as any
        ).spec.template.spec.containers[0].image;
      setImage('north', name, 'nginx:6.6.6');
      await until('healed from the event', () => liveImage() === 'nginx:1.27');
      await until('SYNCED', async () => {
        const d = (await h.stores.deployments.getDeployment(deployment.id))!;
        return d.syncStatus === 'SYNCED';
      });
      setImage('north', name, 'nginx:7.7.7');
      await until('OUT_OF_SYNC from the second event', async () => {
        const d = (await h.stores.deployments.getDeployment(deployment.id))!;
        return d.syncStatus === 'OUT_OF_SYNC';
      });
      await new Promise(r => setTimeout(r, 500));
      expect(liveImage()).toBe('nginx:7.7.7');
      const run = await h.reconciler.runOnce();
      expect(run.healed).toBe(1);
      expect(liveImage()).toBe('nginx:1.27');
    });

    it('compares a cluster whose watches start once they have listed, from memory: not object by object from the API meanwhile', async () => {
      const h = await setup();
      const { deployment, name } = await deployed(h, 'starter', 'north');
      setImage('north', name, 'nginx:6.6.6'); // drift from before any watch
      // Slow answers: the run decides what to compare while the first lists are under way.
      sim.setFault('north', { mode: 'ok', latencyMs: 400 });
      h.reads.mockClear();
      await h.reconciler.runOnce();
      const drifted = await until('OUT_OF_SYNC once listed', async () => {
        const d = (await h.stores.deployments.getDeployment(deployment.id))!;
        return d.syncStatus === 'OUT_OF_SYNC' && d;
      });
      expect(drifted.syncDifferences).toContainEqual(
        expect.objectContaining({
          path: '/spec/template/spec/containers/0/image',
        }),
      );
      expect(h.liveState.starting('north')).toBe(false);
      expect(
        h.reads.mock.calls.filter(([c]) => c.name === 'north'),
      ).toHaveLength(0);
    });

    it('between full compares, a run reads nothing on a watched cluster, and a deployment that changed is compared again', async () => {
      const h = await setup();
      const { deployment } = await deployed(h, 'quiet', 'south');
      const still = await deployed(h, 'still', 'north');
      await h.reconciler.runOnce();
      await until('south watched', () => h.liveState.watching('south'));
      await until('north watched', () => h.liveState.watching('north'));
      // compared once the watches listed
      for (const id of [deployment.id, still.deployment.id]) {
        await until('compared', async () => {
          const d = (await h.stores.deployments.getDeployment(id))!;
          return d.lastSyncedAt && d.syncStatus === 'SYNCED';
        });
      }
      await h.driftChecks.idle();
      h.reads.mockClear();
      const listDeployments = jest.spyOn(
        h.stores.deployments,
        'listDeployments',
      );
      const listRevisions = jest.spyOn(
        h.stores.revisions,
        'listCurrentRevisions',
      );
      h.heldDeployments.mockClear();
      const second = await h.reconciler.runOnce();
      expect(second.checked).toBe(0);
      expect(h.reads).not.toHaveBeenCalled();
      // Nothing to compare nor to unplace: which deployments releases hold is not read.
      expect(h.heldDeployments).not.toHaveBeenCalled();
      // Nothing to compare: no deployment is read in full but those in flight, and no revision.
      expect(listDeployments.mock.calls).toEqual([
        [{ statuses: ['PROGRESSING', 'PENDING'] }],
      ]);
      expect(listRevisions).not.toHaveBeenCalled();
      // A deploy of a new image: the deployment itself changed, so the next run compares it,
      // from memory.
      const redeploy = await h.deployments.deploy(
        {
          entityRef: `component:default/quiet-${tag}`,
          cluster: 'south',
          image: 'nginx:1.28',
        },
        'test',
      );
      await settle(h.stores, redeploy.id);
      await h.driftChecks.idle();
      listRevisions.mockClear();
      const third = await h.reconciler.runOnce();
      // One to compare: read, once for the run (a late event of the rollout may read it too).
      expect(h.heldDeployments).toHaveBeenCalled();
      expect(third.checked).toBe(1);
      expect(third.synced).toBe(1);
      // The revision of the one compared, not the other's (a late event of the rollout may
      // read it too, the same way).
      expect(listRevisions.mock.calls).toContainEqual([
        { deploymentIds: [deployment.id] },
      ]);
      expect(
        listRevisions.mock.calls.filter(
          ([filter]) => filter?.deploymentIds?.join() !== deployment.id,
        ),
      ).toEqual([]);
      expect(h.reads).not.toHaveBeenCalled();
      expect(
        (await h.stores.deployments.getDeployment(deployment.id))!.syncStatus,
      ).toBe('SYNCED');
    });

    it('stops the watches of a cluster that went OFFLINE and marks its deployments UNKNOWN; watches it again once ONLINE', async () => {
      const h = await setup();
      const { deployment } = await deployed(h, 'dark', 'south');
      await h.reconciler.runOnce();
      await until('south watched', () => h.liveState.watching('south'));
      await until('open watches on south', () => sim.openWatches('south') > 0);
      sim.setFault('south', { mode: 'down' });
      await h.worker.runCycle();
      await h.worker.runCycle();
      expect(
        (await h.stores.clusters.listClusters()).find(c => c.name === 'south')!
          .status,
      ).toBe('OFFLINE');
      const summary = await h.reconciler.runOnce();
      expect(h.liveState.clusters()).not.toContain('south');
      expect(h.liveState.watching('south')).toBe(false);
      expect(summary.unknown).toBeGreaterThanOrEqual(1);
      expect(
        (await h.stores.deployments.getDeployment(deployment.id))!,
      ).toMatchObject({ syncStatus: 'UNKNOWN' });
      sim.setFault('south', { mode: 'ok' });
      await until(
        'no open watch on south',
        () => sim.openWatches('south') === 0,
      );
      await h.worker.runCycle();
      await h.reconciler.runOnce();
      expect(h.liveState.clusters()).toContain('south');
      await until('south watched again', () => h.liveState.watching('south'));
      // compared once its watches listed again
      await until('SYNCED again', async () => {
        const d = (await h.stores.deployments.getDeployment(deployment.id))!;
        return d.syncStatus === 'SYNCED';
      });
    });
  },
);
