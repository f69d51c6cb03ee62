import { mockServices } from '@backstage/backend-test-utils';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { DatabaseFleetStores } from '../database/DatabaseFleetStores';
import { createTestDatabases } from '../testing/databases';
import { ClusterDiscovery } from './ClusterDiscovery';

jest.setTimeout(60_000);

const databases = createTestDatabases();

const kubeconfig = (context: string, server: string, ca?: string) =>
  stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'c',
        cluster: {
          server,
          ...(ca
            ? {
                'certificate-authority-data':
                  Buffer.from(ca).toString('base64'),
              }
            : {}),
        },
      },
    ],
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
      const logger = mockServices.logger.mock();
      const discovery = ClusterDiscovery.create({
        clusters: stores.clusters,
        logger,
        sources: { kubeconfigDir: dir },
      });
      return { stores, discovery, logger, knex };
    }

    /** A cluster with a label and a deployment: what a namesake must never take over. */
    async function settle(stores: Awaited<ReturnType<typeof setup>>['stores']) {
      await stores.clusters.updateClusterSettings(
        'kubernetes-admin-kubernetes',
        { labels: { env: 'prod' } },
        'user:default/ops',
      );
      const app = await stores.applications.insertApplication({
        entityRef: 'component:default/payments',
        name: 'payments',
        spec: { image: 'payments:1' },
      });
      const deployment = await stores.deployments.insertDeployment(
        {
          applicationId: app.id,
          cluster: 'kubernetes-admin-kubernetes',
          status: 'DEPLOYED',
        },
        'test',
      );
      return deployment.id;
    }

    it("a namesake context on another API server, after the cluster's kubeconfig vanished, becomes a new cluster with a new name, an event and a warning; the old one keeps its server, labels, deployments and history", async () => {
      const { stores, discovery, logger } = await setup();
      // kubeadm names every admin context alike.
      const context = 'kubernetes-admin@kubernetes';
      const prodFile = path.join(dir, 'prod.yaml');
      fs.writeFileSync(
        prodFile,
        kubeconfig(context, 'https://prod.example:6443', 'prod CA'),
      );
      expect((await discovery.run()).inserted).toEqual([
        'kubernetes-admin-kubernetes',
      ]);
      const deploymentId = await settle(stores);

      fs.rmSync(prodFile);
      const labFile = path.join(dir, 'lab.yaml');
      fs.writeFileSync(
        labFile,
        kubeconfig(context, 'https://lab.example:6443', 'lab CA'),
      );
      const run = await discovery.run();
      expect(run.updated).toEqual([]);
      expect(run.inserted).toEqual([
        expect.stringMatching(/^kubernetes-admin-kubernetes-[0-9a-f]{8}$/),
      ]);
      const renamed = run.inserted[0];
      expect(run.warnings).toEqual([
        expect.stringContaining(
          `it is a new cluster '${renamed}', and 'kubernetes-admin-kubernetes' keeps its deployments, labels and history`,
        ),
      ]);
      expect(logger.warn).toHaveBeenCalledWith(
        expect.stringContaining(`new cluster '${renamed}'`),
      );
      expect(
        await stores.clusters.getCluster('kubernetes-admin-kubernetes'),
      ).toMatchObject({
        endpoint: 'https://prod.example:6443',
        kubeconfigRef: prodFile,
        labels: { env: 'prod' },
      });
      expect(await stores.clusters.getCluster(renamed)).toMatchObject({
        endpoint: 'https://lab.example:6443',
        kubeconfigRef: labFile,
        labels: {},
      });
      expect(
        await stores.deployments.getDeployment(deploymentId),
      ).toMatchObject({ cluster: 'kubernetes-admin-kubernetes' });
      expect(
        await stores.deployments.listDeployments({ cluster: renamed }),
      ).toEqual([]);
      const events = await stores.events.listEvents({
        subjectKind: 'cluster',
        subject: 'kubernetes-admin-kubernetes',
      });
      expect(events.map(e => e.reason)).toEqual(
        expect.arrayContaining([
          'NEVER_PROBED',
          'SETTINGS_CHANGED',
          'NAME_REUSED',
        ]),
      );
      expect(events.find(e => e.reason === 'NAME_REUSED')?.message).toContain(
        renamed,
      );
      // Events are shown to every reader: no kubeconfig path in them.
      expect(
        events.find(e => e.reason === 'NAME_REUSED')?.message,
      ).not.toContain(dir);

      // The next cycles change nothing: no second cluster, no second event.
      const again = await discovery.run();
      expect(again).toMatchObject({ inserted: [], updated: [], warnings: [] });
      expect(
        (
          await stores.events.listEvents({
            subjectKind: 'cluster',
            subject: 'kubernetes-admin-kubernetes',
          })
        ).filter(e => e.reason === 'NAME_REUSED'),
      ).toHaveLength(1);
    });

    it('a kubeconfig replaced in place by another API server (same file and context, another CA) is a new cluster, never the old one re-pointed', async () => {
      const { stores, discovery } = await setup();
      const file = path.join(dir, 'admin.conf');
      const context = 'kubernetes-admin@kubernetes';
      fs.writeFileSync(
        file,
        kubeconfig(context, 'https://10.0.0.1:6443', 'old CA'),
      );
      await discovery.run();
      const deploymentId = await settle(stores);
      // A cluster rebuilt at the same address: same URL, another CA.
      fs.writeFileSync(
        file,
        kubeconfig(context, 'https://10.0.0.1:6443', 'new CA'),
      );
      const run = await discovery.run();
      expect(run.updated).toEqual([]);
      expect(run.inserted).toEqual([
        expect.stringMatching(/^kubernetes-admin-kubernetes-[0-9a-f]{8}$/),
      ]);
      expect(
        await stores.clusters.getCluster('kubernetes-admin-kubernetes'),
      ).toMatchObject({ labels: { env: 'prod' } });
      expect(
        await stores.deployments.getDeployment(deploymentId),
      ).toMatchObject({ cluster: 'kubernetes-admin-kubernetes' });
    });

    it('an unreadable known kubeconfig plus a namesake context in another file on another API server never re-points the cluster', async () => {
      const { stores, discovery } = await setup();
      const prodFile = path.join(dir, 'prod.yaml');
      const prodConfig = kubeconfig(
        'prod',
        'https://prod.example:6443',
        'prod CA',
      );
      fs.writeFileSync(prodFile, prodConfig);
      await discovery.run();
      await stores.clusters.updateClusterSettings('prod', {
        labels: { env: 'prod' },
      });

      // Half-written for one cycle, while a namesake appears elsewhere.
      fs.writeFileSync(prodFile, 'apiVersion: v1\nclusters: [');
      const otherFile = path.join(dir, 'other.yaml');
      fs.writeFileSync(
        otherFile,
        kubeconfig('prod', 'https://evil.example:6443', 'evil CA'),
      );
      const run = await discovery.run();
      expect(run.updated).toEqual([]);
      expect(await stores.clusters.getCluster('prod')).toMatchObject({
        endpoint: 'https://prod.example:6443',
        kubeconfigRef: prodFile,
        labels: { env: 'prod' },
      });
      expect(run.inserted).toEqual([
        expect.stringMatching(/^prod-[0-9a-f]{8}$/),
      ]);

      // Readable again: each keeps its own API server.
      fs.writeFileSync(prodFile, prodConfig);
      const healed = await discovery.run();
      expect(healed).toMatchObject({ inserted: [], updated: [] });
      expect(await stores.clusters.getCluster('prod')).toMatchObject({
        endpoint: 'https://prod.example:6443',
      });
      expect(await stores.clusters.getCluster(run.inserted[0])).toMatchObject({
        endpoint: 'https://evil.example:6443',
      });
    });

    it('a second context on an API server that is already a cluster is skipped with a warning naming that cluster', async () => {
      const { stores, discovery } = await setup();
      fs.writeFileSync(
        path.join(dir, 'a.yaml'),
        kubeconfig('admin', 'https://prod.example:6443', 'prod CA'),
      );
      fs.writeFileSync(
        path.join(dir, 'b.yaml'),
        kubeconfig('viewer', 'https://PROD.example:6443/', 'prod CA'),
      );
      const run = await discovery.run();
      expect(run.inserted).toEqual(['admin']);
      expect(run.warnings).toEqual([
        expect.stringContaining(
          'its API server https://prod.example:6443 (CA sha256:',
        ),
      ]);
      expect(run.warnings[0]).toContain("is cluster 'admin'");
      expect((await stores.clusters.listClusters()).map(c => c.name)).toEqual([
        'admin',
      ]);
    });

    it('two clusters stored on one API server before identities were: the first found takes its CA, the other is skipped with a warning, nothing fails', async () => {
      const { stores, discovery, knex } = await setup();
      for (const name of ['admin', 'viewer']) {
        fs.writeFileSync(
          path.join(dir, `${name}.yaml`),
          kubeconfig(name, 'https://prod.example:6443', 'prod CA'),
        );
      }
      // As the migration leaves them: the endpoint's server, the CA unknown.
      await stores.clusters.insertCluster({
        name: 'admin',
        endpoint: 'https://prod.example:6443',
        kubeconfigRef: path.join(dir, 'admin.yaml'),
        context: 'admin',
        source: 'discovered',
      });
      const row = await knex('fleet_clusters').where({ name: 'admin' }).first();
      await knex('fleet_clusters').insert({
        ...row,
        name: 'viewer',
        kubeconfig_ref: path.join(dir, 'viewer.yaml'),
        context: 'viewer',
      });
      const run = await discovery.run();
      expect(run).toMatchObject({ inserted: [], updated: ['admin'] });
      expect(run.warnings).toEqual([
        expect.stringContaining("is cluster 'admin' already"),
      ]);
      expect(await stores.clusters.getCluster('viewer')).toMatchObject({
        kubeconfigRef: path.join(dir, 'viewer.yaml'),
      });
      expect((await discovery.run()).warnings).toHaveLength(1);
    });

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
