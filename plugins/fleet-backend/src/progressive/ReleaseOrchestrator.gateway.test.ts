import { mockServices } from '@backstage/backend-test-utils';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import type { Deployment, Release } from '@cnp/plugin-fleet-common';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import { createFleet } from '../testing/fleet';
import type { FleetStores } from '../database/types';
import { DeploymentService } from '../deploy/DeploymentService';
import { ManifestApplier } from '../deploy/ManifestApplier';
import { ManifestRemover } from '../deploy/ManifestRemover';
import {
  builtInTrafficProviders,
  TrafficProviders,
} from './traffic/TrafficProviders';
import { ReleaseOrchestrator } from './ReleaseOrchestrator';
import { ReleaseService } from './ReleaseService';

jest.setTimeout(120_000);

/* One cluster serves Gateway API HTTPRoutes only, the other Argo Rollouts as well. */
const CLUSTERS = ['gw-1', 'gw-2'];
const ROUTE_CRD = 'httproutes.gateway.networking.k8s.io';

const databases = createTestDatabases();
const sim = useSimulator({
  clusters: CLUSTERS,
  readyDelayMs: 60,
  crds: { 'gw-1': [ROUTE_CRD], 'gw-2': ['rollouts.argoproj.io', ROUTE_CRD] },
});

const ENTITY = 'component:default/payments';
const OLD = 'registry.example/payments:1.0.0';
const NEW = 'registry.example/payments:2.0.0';

describe.each(databases.eachSupportedId())(
  'progressive releases through a Gateway API HTTPRoute (%s)',
  databaseId => {
    const services: DeploymentService[] = [];
    afterEach(() => Promise.all(services.splice(0).map(s => s.stop())));

    async function settle(
      stores: FleetStores,
      id: string,
    ): Promise<Deployment> {
      for (let i = 0; i < 800; i++) {
        const d = (await stores.deployments.getDeployment(id))!;
        if (d.status !== 'PROGRESSING' && d.status !== 'PENDING') return d;
        await new Promise(r => setTimeout(r, 25));
      }
      throw new Error(`deployment ${id} did not settle`);
    }

    async function createRoute(cluster: string, namespace: string) {
      const kc = new KubeConfig();
      kc.loadFromFile(sim.kubeconfigPath(cluster));
      await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
        group: 'gateway.networking.k8s.io',
        version: 'v1',
        namespace,
        plural: 'httproutes',
        body: {
          apiVersion: 'gateway.networking.k8s.io/v1',
          kind: 'HTTPRoute',
          // Its owner lets Fleet steer it for this component.
          metadata: {
            name: 'payments-route',
            namespace,
            annotations: { 'cnp.io/entity-ref': ENTITY },
          },
          spec: {
            parentRefs: [{ name: 'shared-gateway', namespace: 'infra' }],
            rules: [
              { backendRefs: [{ name: 'payments', port: 80 }] },
              { backendRefs: [{ name: 'cart', port: 80 }] },
            ],
          },
        },
      });
    }

    it('runs a release with trafficRouting.gatewayAPI to completion: weights 20 then 50 on the route, then the stable Service alone', async () => {
      const namespace = `gw-${databaseId.toLowerCase().replace(/_/g, '-')}`;
      const knex = await databases.init(databaseId);
      const harness = await createFleet({
        knex,
        kubeconfigDir: sim.kubeconfigDir,
        logger: mockServices.logger.mock(),
      });
      await harness.worker.runCycle();
      const deployments = DeploymentService.create({
        stores: harness.stores,
        applier: ManifestApplier.create({ clients: harness.clients }),
        remover: ManifestRemover.create({ clients: harness.clients }),
        logger: harness.logger,
        deploy: {
          namespace,
          defaultReplicas: 4,
          progressDeadlineMs: 20_000,
          pollIntervalMs: 25,
        },
      });
      services.push(deployments);
      const orchestrator = ReleaseOrchestrator.create({
        stores: harness.stores,
        deployments,
        traffic: TrafficProviders.create({
          clients: harness.clients,
          providers: builtInTrafficProviders(),
        }),
        logger: harness.logger,
        defaultReplicas: 4,
        namespace,
        // Generous: a measurement that times out counts as failed (a loaded machine is slow).
        analysisTimeoutMs: 30_000,
      });
      const releases = ReleaseService.create({
        stores: harness.stores,
        deployments,
      });
      for (const cluster of CLUSTERS) {
        const d = await deployments.deploy(
          { entityRef: ENTITY, cluster, image: OLD, replicas: 4 },
          'user:default/ada',
        );
        await settle(harness.stores, d.id);
        await createRoute(cluster, namespace);
      }
      const application =
        (await harness.stores.applications.getApplicationByEntityRef(ENTITY))!;

      const started = await releases.release(
        application.id,
        {
          image: NEW,
          strategy: {
            waves: [{ percent: 100 }],
            canary: {
              steps: [{ setWeight: 20 }, { setWeight: 50 }, { setWeight: 100 }],
              maxSurge: '25%',
              maxUnavailable: 0,
              trafficRouting: { gatewayAPI: { httpRoute: 'payments-route' } },
            },
          },
        },
        'user:default/ada',
      );
      let done: Release = started;
      const deadline = Date.now() + 60_000;
      while (done.status === 'PROGRESSING' && Date.now() < deadline) {
        await orchestrator.tick();
        done = await releases.getRelease(started.id);
        await new Promise(r => setTimeout(r, 30));
      }
      expect(done.status).toBe('COMPLETED');
      expect(done.progress!.clusters.map(c => [c.cluster, c.mode])).toEqual(
        expect.arrayContaining([
          ['gw-1', 'gateway-api'],
          ['gw-2', 'gateway-api'],
        ]),
      );
      const objects = (cluster: string) =>
        sim
          .objects(cluster)
          .filter(o => (o.metadata as any).namespace === namespace) as any[];
      for (const cluster of CLUSTERS) {
        const rules = sim
          .history(cluster, { kind: 'HTTPRoute', namespace })
          .filter(h => h.verb !== 'create')
          .map(h =>
            (h.object as any).spec.rules.map((r: any) =>
              r.backendRefs.map((b: any) => `${b.name}=${b.weight}`).join(','),
            ),
          );
        // Only the rule naming the application's Service was split; the other stays as written.
        expect(rules).toEqual([
          ['payments=80,payments-canary=20', 'cart=undefined'],
          ['payments=50,payments-canary=50', 'cart=undefined'],
          ['payments=100', 'cart=undefined'],
        ]);
        const stable = objects(cluster).find(
          o => o.kind === 'Deployment' && o.metadata.name === 'payments',
        );
        expect(stable.spec.template.spec.containers[0].image).toBe(NEW);
        expect(
          objects(cluster)
            .filter(
              o =>
                o.metadata.name === 'payments-canary' || o.kind === 'Rollout',
            )
            .map(o => o.kind),
        ).toEqual([]);
      }
    });
  },
);
