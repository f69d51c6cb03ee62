import { NotFoundError } from '@backstage/errors';
import type { Deployment } from '@cnp/plugin-fleet-common';
import type { DeploymentServiceStores } from './deploymentTypes';

/** The deployment, or a 404 naming it. */
export async function deploymentOr404(
  stores: Pick<DeploymentServiceStores, 'deployments'>,
  deploymentId: string,
): Promise<Deployment> {
  const deployment = await stores.deployments.getDeployment(deploymentId);
  if (!deployment)
    throw new NotFoundError(`Deployment '${deploymentId}' not found`);
  return deployment;
}
