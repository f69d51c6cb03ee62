import { mockServices } from '@backstage/backend-test-utils';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { DatabaseFleetStores } from '../database/DatabaseFleetStores';
import { createTestDatabases } from '@cnp/fleet-harness';
import { ClusterDiscovery } from './ClusterDiscovery';

jest.setTimeout(60_000);

const databases = createTestDatabases();

const kubeconfig = (context: string, server: string) =>
  stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server } }],
    users: [{ name: 'u', user: { token: 't' } }],
    contexts: [{ name: context, context: { cluster: 'c', user: 'u' } }],
    'current-context': context,
  });

describe.each(databases.eachSupportedId())(
  'ClusterDiscovery (%s)',
  databaseId => {
    let dir: string;
    beforeEach(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-cluster-discovery-'));
    });
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    async function setup() {
      const knex = await databases.init(databaseId);
      const stores = await DatabaseFleetStores.create({
        database: mockServices.database({ knex, migrations: { skip: false } }),
      });
      const discovery = ClusterDiscovery.create({
        clusters: stores.clusters,
        logger: mockServices.logger.mock(),
        sources: { kubeconfigDir: dir },
      });
      return { stores, discovery };
    }

    it('keeps a stored cluster on its own server when a new file names the same context', async () => {
      const { stores, discovery } = await setup();
      fs.writeFileSync(
        path.join(dir, 'b.yaml'),
        kubeconfig('prod', 'https://b.example:6443'),
      );
      await discovery.run();
      await stores.clusters.updateClusterSettings('prod', {
        labels: { owner: 'team-b' },
      });

      fs.writeFileSync(
        path.join(dir, 'a.yaml'),
        kubeconfig('prod', 'https://a.example:6443'),
      );
      const second = await discovery.run();
      expect(await stores.clusters.getCluster('prod')).toMatchObject({
        endpoint: 'https://b.example:6443',
        kubeconfigRef: path.join(dir, 'b.yaml'),
        labels: { owner: 'team-b' },
      });
      expect(second.inserted).toEqual([
        expect.stringMatching(/^prod-[0-9a-f]{8}$/),
      ]);
      expect(second.updated).toEqual([]);
      expect(
        await stores.clusters.getCluster(second.inserted[0]),
      ).toMatchObject({
        endpoint: 'https://a.example:6443',
      });
    });

    it('never overwrites a manual cluster of the same name', async () => {
      const { stores, discovery } = await setup();
      await stores.clusters.insertCluster({
        name: 'shared',
        endpoint: 'https://manual.example:6443',
        kubeconfigRef: 'vault:shared',
        source: 'manual',
      });
      fs.writeFileSync(
        path.join(dir, 'shared.yaml'),
        kubeconfig('shared', 'https://discovered.example:6443'),
      );
      await discovery.run();
      expect(await stores.clusters.getCluster('shared')).toMatchObject({
        source: 'manual',
        endpoint: 'https://manual.example:6443',
      });
    });
  },
);
