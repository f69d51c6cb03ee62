import { mockServices } from '@backstage/backend-test-utils';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { createTestDatabases } from '../testing/databases';
import { DatabaseFleetStores } from '../database/DatabaseFleetStores';
import { ClusterDiscovery } from './ClusterDiscovery';

jest.setTimeout(60_000);

const databases = createTestDatabases();

const kubeconfig = (context: string) =>
  stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://a.example:6443' } }],
    users: [{ name: 'u', user: { token: 't' } }],
    contexts: [{ name: context, context: { cluster: 'c', user: 'u' } }],
    'current-context': context,
  });

describe.each(databases.eachSupportedId())(
  'ClusterDiscovery.discoveredNames (%s)',
  databaseId => {
    let dir: string;
    beforeEach(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-discovered-names-'));
    });
    afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('shares one discovery among concurrent callers, reuses it while younger than maxAge, and sees a removed kubeconfig after', async () => {
      const knex = await databases.init(databaseId);
      const stores = await DatabaseFleetStores.create({
        database: mockServices.database({ knex, migrations: { skip: false } }),
      });
      let discoveries = 0;
      const discovery = ClusterDiscovery.create({
        clusters: {
          listClusterOrigins: async () => {
            discoveries++; // one read of the stored clusters per discovery
            return stores.clusters.listClusterOrigins();
          },
          upsertDiscoveredClusters: (clusters, origins) =>
            stores.clusters.upsertDiscoveredClusters(clusters, origins),
        },
        logger: mockServices.logger.mock(),
        sources: { kubeconfigDir: dir },
      });
      fs.writeFileSync(path.join(dir, 'prod.yaml'), kubeconfig('prod'));

      // Recent enough: 30 s, so that a slow machine's discovery (a database read, the files, an
      // upsert) is still recent when asked again; then older than 500 ms, after 600 ms.
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => discovery.discoveredNames(30_000)),
      );
      expect(discoveries).toBe(1);
      expect(answers.every(names => names.has('prod'))).toBe(true);
      expect((await discovery.discoveredNames(30_000)).has('prod')).toBe(true);
      expect(discoveries).toBe(1);

      fs.rmSync(path.join(dir, 'prod.yaml'));
      expect((await discovery.discoveredNames(30_000)).has('prod')).toBe(true);
      await new Promise(r => setTimeout(r, 600));
      expect((await discovery.discoveredNames(500)).has('prod')).toBe(false);
      expect(discoveries).toBe(2);

      // A run (the health cycle's) refreshes what callers see.
      fs.writeFileSync(path.join(dir, 'prod.yaml'), kubeconfig('prod'));
      await discovery.run();
      expect((await discovery.discoveredNames(60_000)).has('prod')).toBe(true);
      expect(discoveries).toBe(3);
    });
  },
);
