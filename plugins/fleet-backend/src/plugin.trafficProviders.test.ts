import { createBackendModule } from '@backstage/backend-plugin-api';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { schedulerServiceFactory } from '@backstage/backend-defaults/scheduler';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import {
  fleetTrafficProvidersExtensionPoint,
  type FleetTrafficProvider,
} from '@cnp/plugin-fleet-node';
import { useSimulator } from '@cnp/kube-simulator';
import request from 'supertest';
import { fleetPlugin } from './plugin';
import { createTestDatabases } from './testing/databases';
import { deployedApplication, waitUntil } from './testing/apiCalls';

/*
 * A traffic provider a backend module adds through `fleet.traffic-providers`: asked before
 * Fleet's own, it runs the canary of the clusters it detects, with the strategy's weights, and
 * the others keep Fleet's own (here an Argo Rollout).
 */

jest.setTimeout(90_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east', 'west'] });

/** A provider that steers nothing: it records what it is asked, for the clusters named `east`. */
function recordingProvider() {
  const calls: string[] = [];
  const provider: FleetTrafficProvider = {
    id: 'recorder',
    description: 'the recorder',
    detect: async ({ cluster, strategy }) =>
      cluster.name === 'east' && strategy.canary.steps.length > 0,
    ownershipConflict: async target => {
      calls.push(`check ${target.cluster.name} ${target.name}`);
      return undefined;
    },
    step: async (target, { weight, weightIndex }) => {
      calls.push(`step ${target.cluster.name} ${weight} #${weightIndex}`);
      return { kind: 'reached', message: `recorded ${weight}%` };
    },
    trafficToStable: async (target, { cause }) => {
      calls.push(`to stable ${target.cluster.name} (${cause})`);
      return { kind: 'reached', message: 'recorded' };
    },
    removeCanary: async target => {
      calls.push(`remove ${target.cluster.name}`);
      return { kind: 'reached', message: 'recorded' };
    },
  };
  return { provider, calls };
}

describe.each(databases.eachSupportedId())(
  'fleet traffic providers from a backend module (%s)',
  databaseId => {
    it('runs a release through an added provider with the strategy weights, Fleet its own elsewhere', async () => {
      // West serves Argo Rollouts: Fleet's own provider for it runs its canary.
      sim.setCrd('west', 'rollouts.argoproj.io', true);
      const { provider, calls } = recordingProvider();
      const testTraffic = createBackendModule({
        pluginId: 'fleet',
        moduleId: 'test-traffic',
        register(env) {
          env.registerInit({
            deps: { traffic: fleetTrafficProvidersExtensionPoint },
            async init({ traffic }) {
              traffic.addTrafficProvider(provider);
            },
          });
        },
      });
      const backend = await startTestBackend({
        features: [
          fleetPlugin,
          testTraffic,
          mockServices.database.factory({
            knex: await databases.init(databaseId),
          }),
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
            },
          }),
          // The release task runs on its own schedule.
          schedulerServiceFactory,
          catalogServiceMock.factory({ entities: [] }),
        ],
      });
      const server = backend.server;
      const entityRef = `component:default/steered-${databaseId.toLowerCase()}`;
      const application = await deployedApplication(server, {
        entityRef,
        image: 'steered:1.0.0',
        clusters: ['east', 'west'],
        replicas: 2,
        tries: 1200,
      });

      const created = await request(server)
        .post(`/api/fleet/applications/${application.id}/releases`)
        .send({
          image: 'steered:2.0.0',
          strategy: {
            waves: [{ clusters: ['east'] }, { clusters: ['west'] }],
            canary: {
              steps: [{ setWeight: 25 }, { setWeight: 50 }, { setWeight: 100 }],
            },
          },
        })
        .expect(201);
      const id = created.body.id;
      const done = await waitUntil(
        async () =>
          (
            await request(server).get(`/api/fleet/releases/${id}`).expect(200)
          ).body,
        r => r.status !== 'PROGRESSING',
        1200,
      );
      expect(done.status).toBe('COMPLETED');
      expect(
        done.progress.clusters.map((c: any) => [c.cluster, c.mode, c.state]),
      ).toEqual([
        ['east', 'recorder', 'DONE'],
        ['west', 'rollout', 'DONE'],
      ]);
      // Its steps had the strategy's weights; at 100 % the stable workload took the revision.
      expect(calls.filter(c => c.startsWith('step'))).toEqual([
        'step east 25 #0',
        'step east 50 #1',
      ]);
      expect(calls).toContain('to stable east (completion)');
      expect(calls).toContain('remove east');
      expect(calls.some(c => c.includes('west'))).toBe(false);
      expect(done.targets.map((t: any) => [t.cluster, t.revision])).toEqual([
        ['east', 2],
        ['west', 2],
      ]);
      const events = (
        await request(server).get('/api/fleet/events?limit=500').expect(200)
      ).body;
      expect(JSON.stringify(events)).toContain(
        'east: canary started through the recorder',
      );
      await backend.stop();
    });
  },
);
