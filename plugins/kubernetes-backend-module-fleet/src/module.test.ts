/*
 * The Kubernetes plugin's backend, fed by this module from a real Fleet backend, against
 * simulated clusters through their real kubeconfig files: what the component's Kubernetes tab
 * asks (its objects on every cluster, a pod's events and logs through the proxy).
 */
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { createTestDatabases, useSimulator } from '@cnp/fleet-harness';
// eslint-disable-next-line @backstage/no-mixed-plugin-imports
import fleetPlugin from '@cnp/plugin-fleet-backend';
import kubernetesPlugin from '@backstage/plugin-kubernetes-backend';
import request from 'supertest';
import kubernetesModuleFleetClusters from './index';

jest.setTimeout(60_000);

const databases = createTestDatabases();
const sim = useSimulator({
  clusters: ['east', 'west', 'north'],
  readyDelayMs: 100,
});

const entity = {
  apiVersion: 'backstage.io/v1alpha1',
  kind: 'Component',
  metadata: {
    name: 'shop',
    namespace: 'default',
    annotations: { 'backstage.io/kubernetes-id': 'shop' },
  },
  spec: { type: 'service', lifecycle: 'production', owner: 'team-a' },
};

async function start(knex: Awaited<ReturnType<typeof databases.init>>) {
  const { server } = await startTestBackend({
    features: [
      fleetPlugin,
      kubernetesPlugin,
      kubernetesModuleFleetClusters,
      mockServices.database.factory({ knex }),
      mockServices.scheduler.factory(),
      mockServices.rootConfig.factory({
        data: {
          fleet: {
            discovery: { kubeconfigDir: sim.kubeconfigDir },
            health: {
              probeTimeout: { seconds: 2 },
              minOutage: { seconds: 0 },
              manualMinInterval: { seconds: 0 },
            },
            deploy: { pollInterval: { milliseconds: 100 } },
          },
          kubernetes: {
            serviceLocatorMethod: { type: 'multiTenant' },
            clusterLocatorMethods: [],
            objectTypes: ['pods', 'services', 'deployments', 'replicasets'],
            fleet: {
              refreshInterval: { milliseconds: 1 },
              skipMetricsLookup: true,
            },
          },
        },
      }),
      catalogServiceMock.factory({ entities: [entity] }),
    ],
  });
  return server;
}

async function waitFor(check: () => Promise<boolean>) {
  for (let i = 0; i < 300 && !(await check()); i++) {
    await new Promise(r => setTimeout(r, 50));
  }
  expect(await check()).toBe(true);
}

describe.each(databases.eachSupportedId())(
  'Kubernetes plugin fed by Fleet (%s)',
  databaseId => {
    it("shows a component's pods, ReplicaSets, events and logs on every cluster Fleet deployed it to, and follows Fleet's clusters", async () => {
      const server = await start(await databases.init(databaseId));
      await request(server).post('/api/fleet/health/run').expect(200);

      // Every cluster Fleet has, with its kubeconfig's server and Fleet's auth provider.
      const clusters = await request(server)
        .get('/api/kubernetes/clusters')
        .expect(200);
      expect(
        clusters.body.items.map((c: any) => [c.name, c.authProvider]),
      ).toEqual([
        ['east', 'fleet'],
        ['north', 'fleet'],
        ['west', 'fleet'],
      ]);

      // The application carries an environment value (shown by Fleet only to deployers).
      await request(server)
        .post('/api/fleet/applications')
        .send({
          entityRef: 'component:default/shop',
          spec: {
            image: 'shop:1.0',
            replicas: 2,
            env: { API_KEY: 's3cret-value' },
          },
        })
        .expect(201);
      for (const cluster of ['east', 'west']) {
        await request(server)
          .post('/api/fleet/deployments')
          .send({
            entityRef: 'component:default/shop',
            cluster,
            image: 'shop:1.0',
            replicas: 2,
          })
          .expect(201);
      }
      await waitFor(async () => {
        const list = await request(server)
          .get('/api/fleet/deployments?entityRef=component:default/shop')
          .expect(200);
        return list.body.items.every((d: any) => d.status === 'DEPLOYED');
      });

      const objects = await request(server)
        .post('/api/kubernetes/services/shop')
        .send({ entity })
        .expect(200);
      // Only the clusters where the component runs answer objects (north has none).
      const byCluster = new Map<string, any>(
        objects.body.items.map((item: any) => [item.cluster.name, item]),
      );
      expect([...byCluster.keys()].sort()).toEqual(['east', 'west']);
      for (const [, item] of byCluster) {
        expect(item.errors).toEqual([]);
        const of = (type: string) =>
          item.resources.find((r: any) => r.type === type).resources;
        const [deployment] = of('deployments');
        expect(deployment.metadata.name).toBe('shop');
        const [replicaSet] = of('replicasets');
        expect(replicaSet.metadata.ownerReferences[0]).toMatchObject({
          kind: 'Deployment',
          uid: deployment.metadata.uid,
        });
        const pods = of('pods');
        expect(pods).toHaveLength(2);
        for (const pod of pods) {
          expect(pod.metadata.ownerReferences[0]).toMatchObject({
            kind: 'ReplicaSet',
            uid: replicaSet.metadata.uid,
          });
          expect(pod.status.phase).toBe('Running');
        }
      }

      // Fleet hides environment values from who may not deploy the component; the tab, readable
      // by everyone, shows the variables' names only, in every object Fleet deployed.
      expect(JSON.stringify(objects.body)).not.toContain('s3cret-value');
      const [someDeployment] = byCluster
        .get('east')
        .resources.find((r: any) => r.type === 'deployments').resources;
      expect(someDeployment.spec.template.spec.containers[0].env).toEqual([
        { name: 'API_KEY' },
      ]);
      const [somePod] = byCluster
        .get('west')
        .resources.find((r: any) => r.type === 'pods').resources;
      expect(somePod.spec.containers[0].env).toEqual([{ name: 'API_KEY' }]);

      // The pod's logs and events, through the plugin's proxy, with Fleet's credentials.
      const pod = byCluster
        .get('east')
        .resources.find((r: any) => r.type === 'pods').resources[0];
      const log = await request(server)
        .get(
          `/api/kubernetes/proxy/api/v1/namespaces/default/pods/${pod.metadata.name}/log?container=shop`,
        )
        .set('Backstage-Kubernetes-Cluster', 'east')
        .expect(200);
      expect(log.text.split('\n')[0]).toBe(
        `Starting shop:1.0 as container shop of pod default/${pod.metadata.name}`,
      );
      const events = await request(server)
        .get(
          `/api/kubernetes/proxy/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=${pod.metadata.name}`,
        )
        .set('Backstage-Kubernetes-Cluster', 'east')
        .expect(200);
      expect(events.body.items.map((e: any) => e.reason)).toContain(
        'Scheduled',
      );

      // A cluster that goes OFFLINE in Fleet leaves the plugin's list; back ONLINE, it returns.
      sim.setFault('west', { mode: 'down' });
      await request(server).post('/api/fleet/health/run').expect(200);
      await request(server).post('/api/fleet/health/run').expect(200);
      const without = await request(server)
        .get('/api/kubernetes/clusters')
        .expect(200);
      expect(without.body.items.map((c: any) => c.name)).toEqual([
        'east',
        'north',
      ]);
      sim.setFault('west', { mode: 'ok' });
      await request(server).post('/api/fleet/health/run').expect(200);
      const back = await request(server)
        .get('/api/kubernetes/clusters')
        .expect(200);
      expect(back.body.items.map((c: any) => c.name)).toEqual([
        'east',
        'north',
        'west',
      ]);
    });
  },
);
