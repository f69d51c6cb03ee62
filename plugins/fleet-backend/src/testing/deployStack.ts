import { mockServices } from '@backstage/backend-test-utils';
import type { Deployment } from '@cnp/plugin-fleet-common';
import type { Knex } from 'knex';
import type { FleetStores } from '../database/types';
import { DeploymentService } from '../deploy/DeploymentService';
import { ManifestApplier } from '../deploy/ManifestApplier';
import { ManifestRemover } from '../deploy/ManifestRemover';
import { eventually } from './eventually';
import { createFleet } from './fleet';

type DeploySettings = Parameters<typeof DeploymentService.create>[0]['deploy'];

/**
 * Fleet's deploy path from its real parts, for tests against simulated clusters: the harness's
 * stores and clients (clusters discovered and, unless `probe: false`, probed once, which records
 * each cluster's version), a `ManifestApplier` and a `DeploymentService` that polls fast. The
 * caller stops the service (`deployments.stop()`) after its test.
 */
export async function createDeployStack(options: {
  knex: Knex;
  kubeconfigDir: string;
  deploy: Partial<DeploySettings> & { namespace: string };
  probe?: boolean;
}) {
  const harness = await createFleet({
    knex: options.knex,
    kubeconfigDir: options.kubeconfigDir,
    logger: mockServices.logger.mock(),
  });
  if (options.probe ?? true) await harness.worker.runCycle();
  else await harness.discovery.run();
  const applier = ManifestApplier.create({ clients: harness.clients });
  const deploy: DeploySettings = {
    defaultReplicas: 1,
    progressDeadlineMs: 5_000,
    pollIntervalMs: 25,
    ...options.deploy,
  };
  const deployments = DeploymentService.create({
    stores: harness.stores,
    applier,
    remover: ManifestRemover.create({ clients: harness.clients }),
    logger: harness.logger,
    deploy,
  });
  return { ...harness, applier, deploy, deployments };
}

/**
 * The deployment once it is neither PENDING nor PROGRESSING (read every 25 ms; fails after
 * `eventually`'s bound, generous for a loaded machine).
 */
export async function settled(
  stores: Pick<FleetStores, 'deployments'>,
  id: string,
): Promise<Deployment> {
  return eventually(
    async () => {
      const d = (await stores.deployments.getDeployment(id))!;
      if (d.status === 'PROGRESSING' || d.status === 'PENDING')
        throw new Error(`deployment ${id} did not settle: ${d.status}`);
      return d;
    },
    { intervalMs: 25 },
  );
}
