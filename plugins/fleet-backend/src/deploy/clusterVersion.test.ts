/*
 * What a deploy sends depends on the cluster: the preStop `sleep` action only where the health
 * probe saw Kubernetes 1.30 or later (an `exec` of sleep below, which a 1.29 server takes), and
 * Fleet's default requests and limits when neither the application nor the config names any
 * (`resources: {}` opts out).
 */
import type { ApplicationSpec } from '@cnp/plugin-fleet-common';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import { createDeployStack, settled } from '../testing/deployStack';
import type { DeploymentService } from './DeploymentService';

jest.setTimeout(90_000);

const databases = createTestDatabases();
const sim = useSimulator({
  clusters: ['current', 'older'],
  readyDelayMs: 30,
  serverVersions: { older: 'v1.29.4' },
});

describe.each(databases.eachSupportedId())(
  'deploys that depend on the cluster (%s)',
  databaseId => {
    const namespace = `ver-${databaseId.toLowerCase().replace(/_/g, '-')}`;
    const services: DeploymentService[] = [];
    afterEach(() => Promise.all(services.splice(0).map(s => s.stop())));

    async function setup() {
      // The probe records each cluster's version. No defaultResources: Fleet's own defaults.
      const stack = await createDeployStack({
        knex: await databases.init(databaseId),
        kubeconfigDir: sim.kubeconfigDir,
        deploy: { namespace },
      });
      services.push(stack.deployments);
      return stack;
    }

    const container = (cluster: string, name: string) =>
      (
        sim
          .objects(cluster)
          .find(
            (o: any) =>
              o.kind === 'Deployment' &&
              o.metadata.name === name &&
              o.metadata.namespace === namespace,
          ) as any
      ).spec.template.spec.containers[0];

    async function deploy(
      h: Awaited<ReturnType<typeof setup>>,
      entityRef: string,
      spec: ApplicationSpec,
      cluster: string,
    ) {
      const app = await h.deployments.registerApplication({ entityRef, spec });
      const d = await h.deployments.deploy({ entityRef, cluster }, 'test');
      expect(await settled(h.stores, d.id)).toMatchObject({
        status: 'DEPLOYED',
      });
      return container(cluster, app.name);
    }

    it('uses the sleep action on 1.30 and an exec of sleep on 1.29, and deploys on both', async () => {
      const h = await setup();
      const spec = { image: 'ghcr.io/acme/payments:1.0.0' };
      const current = await deploy(h, 'component:default/now', spec, 'current');
      expect(current.lifecycle).toEqual({ preStop: { sleep: { seconds: 5 } } });
      const older = await deploy(h, 'component:default/then', spec, 'older');
      expect(older.lifecycle).toEqual({
        preStop: { exec: { command: ['sleep', '5'] } },
      });
    });

    it("gives pods Fleet's default requests and limits unless the application says otherwise", async () => {
      const h = await setup();
      const image = 'ghcr.io/acme/payments:1.0.0';
      expect(
        (await deploy(h, 'component:default/plain', { image }, 'current'))
          .resources,
      ).toEqual({
        requests: { cpu: '100m', memory: '128Mi' },
        limits: { cpu: '200m', memory: '256Mi' },
      });
      expect(
        (
          await deploy(
            h,
            'component:default/own',
            { image, resources: { requests: { memory: '64Mi' } } },
            'current',
          )
        ).resources,
      ).toEqual({
        requests: { cpu: '100m', memory: '64Mi' },
        limits: { cpu: '200m' },
      });
      const optedOut = await deploy(
        h,
        'component:default/none',
        { image, resources: {} },
        'current',
      );
      // As a real API server, the simulator shows a container without any as `{}`.
      expect(optedOut.resources ?? {}).toEqual({});
    });
  },
);
