import {
  DEPLOYMENT_STATUSES,
  type DeploymentStatus,
} from '@cnp/plugin-fleet-common';
import type { Knex } from 'knex';

/**
 * Deployments per cluster and status, by cluster name (every status counted, zeros included);
 * a cluster without any deployment is left out. One grouped query, whatever the fleet's size.
 */
export async function countDeploymentsPerCluster(
  db: Knex,
): Promise<
  Array<{ cluster: string; byStatus: Record<DeploymentStatus, number> }>
> {
  const rows = (await db('fleet_deployments')
    .select('cluster', 'status')
    .count({ n: '*' })
    .groupBy('cluster', 'status')
    .orderBy('cluster')) as Array<{
    cluster: string;
    status: DeploymentStatus;
    n: number | string;
  }>;
  const byCluster = new Map<string, Record<DeploymentStatus, number>>();
  for (const row of rows) {
    let counts = byCluster.get(row.cluster);
    if (!counts) {
      counts = Object.fromEntries(
        DEPLOYMENT_STATUSES.map(v => [v, 0]),
      ) as Record<DeploymentStatus, number>;
      byCluster.set(row.cluster, counts);
    }
    counts[row.status] = Number(row.n);
  }
  return [...byCluster].map(([cluster, byStatus]) => ({ cluster, byStatus }));
}
