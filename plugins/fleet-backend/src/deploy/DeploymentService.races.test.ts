import { mockServices } from '@backstage/backend-test-utils';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import { createFleet } from '../testing/fleet';
import type { FleetStores } from '../database/types';
import { DeploymentService } from './DeploymentService';
import { ManifestApplier } from './ManifestApplier';
import { ManifestRemover } from './ManifestRemover';
import { settled } from '../testing/deployStack';

jest.setTimeout(60_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['alpha'], readyDelayMs: 100 });

/** A promise and the function that resolves it. */
function signal() {
  let resolve!: () => void;
  const promise = new Promise<void>(r => {
    resolve = r;
  });
  return { promise, resolve };
}

function liveImage(cluster: string, name: string): string | undefined {
  const deployment: any = sim
    .objects(cluster)
    .find(o => o.kind === 'Deployment' && (o.metadata as any).name === name);
  return deployment?.spec.template.spec.containers[0].image;
}

describe.each(databases.eachSupportedId())(
  'deploy races against the kube simulator (%s)',
  databaseId => {
    const suffix = databaseId.toLowerCase().replace(/_/g, '-');
    const services: DeploymentService[] = [];
    afterEach(() => Promise.all(services.splice(0).map(s => s.stop())));

    async function setup(
      wrap: {
        applier?: (real: ManifestApplier) => ManifestApplier;
        stores?: (real: FleetStores) => FleetStores;
      } = {},
    ) {
      const knex = await databases.init(databaseId);
      const harness = await createFleet({
        knex,
        kubeconfigDir: sim.kubeconfigDir,
        logger: mockServices.logger.mock(),
      });
      await harness.worker.runCycle();
      const real = ManifestApplier.create({ clients: harness.clients });
      const deployments = DeploymentService.create({
        stores: wrap.stores ? wrap.stores(harness.stores) : harness.stores,
        applier: wrap.applier ? wrap.applier(real) : real,
        remover: ManifestRemover.create({ clients: harness.clients }),
        logger: harness.logger,
        deploy: {
          namespace: `races-${suffix}`,
          defaultReplicas: 1,
          progressDeadlineMs: 10_000,
          pollIntervalMs: 50,
        },
      });
      services.push(deployments);
      return { ...harness, deployments };
    }

    it('two concurrent deploys of different images to one deployment end with the live image equal to the current revision image, whichever apply lands last', async () => {
      // The first deploy's apply is held until the second's has landed, so the older revision's
      // apply reaches the cluster last: the interleaving that left it running under the newer
      // revision's record.
      let calls = 0;
      const firstEntered = signal();
      const secondApplied = signal();
      let racing = false;
      const { stores, deployments } = await setup({
        applier: real =>
          Object.assign(Object.create(real), {
            apply: async (...args: Parameters<ManifestApplier['apply']>) => {
              if (!racing) return real.apply(...args);
              const call = ++calls;
              if (call === 1) {
                firstEntered.resolve();
                await secondApplied.promise;
              }
              const result = await real.apply(...args);
              if (call === 2) secondApplied.resolve();
              return result;
            },
          }),
      });
      const ref = `component:default/race-${suffix}`;
      const first = await deployments.deploy(
        { entityRef: ref, cluster: 'alpha', image: 'nginx:1.25' },
        'test',
      );
      await settled(stores, first.id);
      const name = (await stores.applications.getApplicationByEntityRef(ref))!
        .name;

      racing = true;
      const older = deployments.deploy(
        { entityRef: ref, cluster: 'alpha', image: 'nginx:1.26' },
        'user:default/ada',
      );
      await firstEntered.promise;
      const newer = deployments.deploy(
        { entityRef: ref, cluster: 'alpha', image: 'nginx:1.27' },
        'user:default/bob',
      );
      await Promise.all([older, newer]);

      const done = await settled(stores, first.id);
      const current = (await stores.revisions.getRevision(
        done.id,
        done.revision,
      ))!;
      expect(current).toMatchObject({ revision: 3, image: 'nginx:1.27' });
      expect(done).toMatchObject({ status: 'DEPLOYED', image: 'nginx:1.27' });
      expect(liveImage('alpha', name)).toBe(current.image);
    });

    it('two application updates that race are both kept: the one whose read went stale merges again over the newer version', async () => {
      // The first update reads the application, then the second one runs whole before the first
      // writes: a read-merge-write without a version check would write the first one's merge
      // over the second's change.
      let hold: (() => Promise<unknown>) | undefined;
      const { stores, deployments } = await setup({
        stores: real => ({
          ...real,
          applications: Object.assign(Object.create(real.applications), {
            getApplication: async (id: string) => {
              const read = await real.applications.getApplication(id);
              const other = hold;
              hold = undefined;
              await other?.();
              return read;
            },
          }),
        }),
      });
      const registered = await deployments.registerApplication({
        entityRef: `component:default/patch-race-${suffix}`,
        spec: { image: 'nginx:1.27', replicas: 1 },
      });
      hold = () =>
        deployments.updateApplication(registered.id, {
          spec: { image: 'nginx:1.28' },
        });
      const updated = await deployments.updateApplication(registered.id, {
        spec: { replicas: 4 },
      });
      expect(updated).toMatchObject({
        version: 3,
        spec: { image: 'nginx:1.28', replicas: 4 },
      });
      expect(
        await stores.applications.getApplication(registered.id),
      ).toMatchObject({ spec: { image: 'nginx:1.28', replicas: 4 } });
    });

    it('a cluster going OFFLINE between the rollout poll reading it ONLINE and writing the result still leaves the deployment DEGRADED / CLUSTER_OFFLINE', async () => {
      // The health cascade takes the cluster OFFLINE right after the poll's last read of the
      // cluster (a read outside the write's transaction), or at the same time as its write when
      // the read is inside it. The cascade moves DEPLOYED deployments only, so a PROGRESSING one
      // is the poll's to degrade.
      let ready = false;
      let cascaded: Promise<void> | undefined;
      const takeOffline = (stores: FleetStores) =>
        (cascaded ??= stores.clusters.inClusterTransaction(async tx => {
          await tx.updateClusterHealth('alpha', {
            status: 'OFFLINE',
            statusReason: 'Unreachable: connection refused',
            consecutiveFailures: 3,
            consecutiveSuccesses: 0,
          });
          await tx.degradeDeploymentsOnCluster(
            'alpha',
            'fleet-health',
            "Cluster 'alpha' is OFFLINE",
          );
        }));
      const { stores, deployments } = await setup({
        applier: real =>
          Object.assign(Object.create(real), {
            rolloutState: async (
              ...args: Parameters<ManifestApplier['rolloutState']>
            ) => {
              const state = await real.rolloutState(...args);
              if (state.kind === 'ready') ready = true;
              return state;
            },
          }),
        stores: real => ({
          ...real,
          clusters: Object.assign(Object.create(real.clusters), {
            getCluster: async (name: string) => {
              const cluster = await real.clusters.getCluster(name);
              if (ready) await takeOffline(real);
              return cluster;
            },
          }),
          deployments: Object.assign(Object.create(real.deployments), {
            completeRollout: async (
              ...args: Parameters<FleetStores['deployments']['completeRollout']>
            ) => {
              const [written] = await Promise.all([
                real.deployments.completeRollout(...args),
                takeOffline(real),
              ]);
              return written;
            },
          }),
        }),
      });
      const started = await deployments.deploy(
        {
          entityRef: `component:default/poll-${suffix}`,
          cluster: 'alpha',
          image: 'nginx:1.27',
        },
        'test',
      );
      await settled(stores, started.id);
      // The poll's write may commit before the cascade does (they run side by side): what the
      // two leave behind is read once both are done.
      expect(cascaded).toBeDefined();
      await cascaded;
      expect(await stores.clusters.getCluster('alpha')).toMatchObject({
        status: 'OFFLINE',
      });
      expect(await stores.deployments.getDeployment(started.id)).toMatchObject({
        status: 'DEGRADED',
        statusReason: 'CLUSTER_OFFLINE',
      });
    });
  },
);
