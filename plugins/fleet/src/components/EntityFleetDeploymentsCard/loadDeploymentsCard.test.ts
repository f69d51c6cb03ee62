import type { Cluster, Deployment } from '@cnp/plugin-fleet-common';
import type { FleetApi } from '../../api';
import { loadDeploymentsCard } from './loadDeploymentsCard';

describe('loadDeploymentsCard', () => {
  it('asks only for cluster names that can be clusters, so a typo in the annotation cannot fail the card', async () => {
    const asked: string[][] = [];
    const api = {
      listDeployments: async () =>
        [{ id: 'd1', cluster: 'sim-2' }] as unknown as Deployment[],
      listClusters: async ({ names }: { names: string[] }) => {
        asked.push(names);
        // What the API does with a name that is no DNS-1123 label: a 400.
        if (names.some(n => !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(n)))
          throw new Error('400');
        return names.map(name => ({ name, status: 'ONLINE' })) as Cluster[];
      },
      listApplications: async () => [],
      listReleases: async () => [],
    } as unknown as FleetApi;
    const data = await loadDeploymentsCard(api, {
      entityRef: 'component:default/payments',
      named: ['sim-1', 'Prod_EU', 'x'.repeat(64)],
    });
    expect(asked).toEqual([['sim-1', 'sim-2']]);
    expect(data.clusters.map(c => c.name)).toEqual(['sim-1', 'sim-2']);
    expect(data.deployments).toHaveLength(1);
  });
});
