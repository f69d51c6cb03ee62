import { mockServices } from '@backstage/backend-test-utils';
import type { DeploymentStatus } from '@cnp/plugin-fleet-common';
import { Knex } from 'knex';
import type { FleetConfig } from '../config/FleetConfig';
import { DatabaseFleetStore } from '../database/DatabaseFleetStore';
import type { FleetStore } from '../database/FleetStore';
import { ClusterDiscovery } from '../discovery/ClusterDiscovery';
import { HealthWorker } from '../health/HealthWorker';
import { ClusterClients } from '../kubernetes/ClusterClients';
import { KubeconfigAccessPolicy } from '../kubernetes/KubeconfigAccessPolicy';

export const testHealthConfig: FleetConfig['health'] = {
  intervalMs: 300_000,
  failureThreshold: 2,
  recoveryThreshold: 1,
  probeTimeoutMs: 2_500, // generous: a loaded CI machine must not turn a slow probe into a failure
  concurrency: 16,
  massOutage: { minClusters: 3, fraction: 0.55 },
};

/**
 * The real parts wired as plugin.ts wires them — store on a real database, discovery of real
 * kubeconfig files, real client-node clients — without the scheduler, so a test runs cycles
 * one at a time.
 */
export async function createFleetHarness(options: {
  knex: Knex;
  kubeconfigDir: string;
  health?: Partial<FleetConfig['health']>;
  wrapStore?: (store: FleetStore) => FleetStore;
  wrapProbe?: (probe: ClusterClients['probe']) => ClusterClients['probe'];
}) {
  const logger = mockServices.logger.mock();
  const store = await DatabaseFleetStore.create({
    database: mockServices.database({
      knex: options.knex,
      migrations: { skip: false },
    }),
  });
  const policy = KubeconfigAccessPolicy.create({
    kubeconfigDir: options.kubeconfigDir,
  });
  const clients = ClusterClients.create({ policy });
  const discovery = ClusterDiscovery.create({
    store,
    logger,
    sources: { kubeconfigDir: options.kubeconfigDir },
  });
  const worker = HealthWorker.create({
    store: options.wrapStore ? options.wrapStore(store) : store,
    clients: options.wrapProbe
      ? { probe: options.wrapProbe(clients.probe.bind(clients)) }
      : clients,
    logger,
    health: { ...testHealthConfig, ...options.health },
    discover: async () => {
      await discovery.run();
    },
  });
  return { store, worker, logger, clients, discovery };
}

/** Registers an application with one deployment on `cluster` in the given status. */
export async function seedDeployment(
  store: FleetStore,
  cluster: string,
  name: string,
  status: DeploymentStatus,
  statusReason?: string,
) {
  const entityRef = `component:default/${name}`;
  const application =
    (await store.getApplicationByEntityRef(entityRef)) ??
    (await store.insertApplication({
      entityRef,
      name,
      spec: { image: 'nginx:1.27' },
    }));
  return store.insertDeployment(
    { applicationId: application.id, cluster, status, statusReason },
    'test',
  );
}
