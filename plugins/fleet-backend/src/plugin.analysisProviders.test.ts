import { createBackendModule } from '@backstage/backend-plugin-api';
import {
  mockServices,
  startTestBackend,
  type TestDatabaseId,
} from '@backstage/backend-test-utils';
import { schedulerServiceFactory } from '@backstage/backend-defaults/scheduler';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import {
  fleetAnalysisProvidersExtensionPoint,
  type FleetAnalysisProvider,
} from '@cnp/plugin-fleet-node';
import { useSimulator } from '@cnp/kube-simulator';
import request from 'supertest';
import { fleetPlugin } from './plugin';
import { createTestDatabases } from './testing/databases';

/*
 * An analysis provider a backend module adds through `fleet.analysis-providers`: a release's
 * analysis names it (`provider: { verdict: {...its settings} }`), and it judges the canary with
 * those settings, on a plain cluster and on one whose canary is an Argo Rollout (whose
 * AnalysisTemplates can only name Argo's own providers, so Fleet alone measures it there). A
 * provider nobody registered is a 400 naming it.
 */

jest.setTimeout(120_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east', 'west'] });

/** Fails the clusters its settings list in `failOn`, passes the others; records what it measures. */
function verdictProvider() {
  const seen: string[] = [];
  const provider: FleetAnalysisProvider = {
    type: 'verdict',
    measure: async ({ template, config, context }) => {
      const failOn = Array.isArray(config.failOn) ? config.failOn : [];
      const failed = failOn.includes(context.cluster);
      seen.push(`${template.name} ${context.cluster} r${context.revision}`);
      return {
        template: template.name,
        cluster: context.cluster,
        condition: template.successCondition,
        at: new Date().toISOString(),
        phase: failed ? 'Failed' : 'Successful',
        value: failed ? 0 : 1,
      };
    },
  };
  return { provider, seen };
}

const strategy = (failOn: string[]) => ({
  canary: {
    steps: [
      { setWeight: 50 },
      { pause: { duration: '1s' } },
      { setWeight: 100 },
    ],
  },
  analysis: {
    templates: [
      {
        name: 'judged',
        interval: '1s',
        successCondition: 'result == 1',
        provider: { verdict: { failOn } },
      },
    ],
  },
});

/**
 * A Fleet backend with `providers` added by a module, and `name` deployed on east and west: its
 * application's releases path and a wait for a release to finish.
 */
async function startFleet(
  databaseId: TestDatabaseId,
  name: string,
  providers: FleetAnalysisProvider[],
) {
  const testAnalysis = createBackendModule({
    pluginId: 'fleet',
    moduleId: 'test-analysis',
    register(env) {
      env.registerInit({
        deps: { analysis: fleetAnalysisProvidersExtensionPoint },
        async init({ analysis }) {
          analysis.addAnalysisProvider(...providers);
        },
      });
    },
  });
  const backend = await startTestBackend({
    features: [
      fleetPlugin,
      testAnalysis,
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
  await request(server).post('/api/fleet/health/run').expect(200);
  const entityRef = `component:default/${name}-${databaseId.toLowerCase()}`;
  for (const cluster of ['east', 'west']) {
    await request(server)
      .post('/api/fleet/deployments')
      .send({ entityRef, cluster, image: `${name}:1.0.0`, replicas: 2 })
      .expect(201);
  }
  const waitFor = async <T>(read: () => Promise<T>, ok: (v: T) => boolean) => {
    let value = await read();
    for (let i = 0; i < 1600 && !ok(value); i++) {
      await new Promise(r => setTimeout(r, 50));
      value = await read();
    }
    if (!ok(value))
      throw new Error(`never got there: ${JSON.stringify(value)}`);
    return value;
  };
  await waitFor(
    async () =>
      (
        await request(server).get(
          `/api/fleet/deployments?entityRef=${entityRef}`,
        )
      ).body.items,
    (items: any[]) =>
      items.length === 2 && items.every(d => d.status === 'DEPLOYED'),
  );
  const [application] = (
    await request(server)
      .get(`/api/fleet/applications?entityRef=${entityRef}`)
      .expect(200)
  ).body.items;
  const releases = `/api/fleet/applications/${application.id}/releases`;
  const finished = async (id: string) =>
    waitFor(
      async () =>
        (await request(server).get(`/api/fleet/releases/${id}`).expect(200))
          .body,
      r => r.status === 'COMPLETED' || r.status === 'ROLLED_BACK',
    );
  return { backend, server, entityRef, releases, finished };
}

/** A credential a module holds in its own configuration, never in a release's settings. */
const SECRET = 'tok-4f1d9c2e-module-only';

/** A strategy whose one template, `probed`, is measured by `provider`, within `limits`. */
const probed = (provider: object, limits: object) => ({
  canary: { steps: [{ setWeight: 50 }, { setWeight: 100 }] },
  analysis: {
    templates: [
      {
        name: 'probed',
        interval: '1s',
        successCondition: 'result == 1',
        provider,
        ...limits,
      },
    ],
  },
});

/** The events of one release, as `GET /events` lists them. */
const eventsOf = async (server: any, id: string): Promise<any[]> =>
  (
    await request(server).get('/api/fleet/events?limit=500').expect(200)
  ).body.items.filter((e: any) => e.subject === id);

describe.each(databases.eachSupportedId())(
  'fleet analysis providers from a backend module (%s)',
  databaseId => {
    it('judges a release by an added provider with its settings, in every traffic mode, and refuses an unknown one', async () => {
      // West serves Argo Rollouts: its canary is a Rollout; east's is sized by replicas.
      sim.setCrd('west', 'rollouts.argoproj.io', true);
      sim.setCrd('east', 'rollouts.argoproj.io', false);
      const { provider, seen } = verdictProvider();
      const { backend, server, entityRef, releases, finished } =
        await startFleet(databaseId, 'judged', [provider]);
      // A provider nobody registered: a 400 naming it, nothing started.
      const unknown = strategy([]);
      unknown.analysis.templates[0].provider = {
        datadog: { query: 'q' },
      } as any;
      const refused = await request(server)
        .post(releases)
        .send({ image: 'judged:2.0.0', strategy: unknown })
        .expect(400);
      expect(refused.body.error.message).toBe(
        "Invalid release: strategy.analysis.templates.0.provider: 'datadog' is not a registered analysis provider (registered: prometheus, verdict)",
      );
      // Two providers in one template: a 400 too.
      const two = strategy([]);
      (two.analysis.templates[0].provider as any).prometheus = {
        address: 'http://prometheus:9090',
        query: 'up',
      };
      expect(
        (
          await request(server)
            .post(releases)
            .send({ image: 'judged:2.0.0', strategy: two })
            .expect(400)
        ).body.error.message,
      ).toContain('strategy.analysis.templates.0.provider');

      // The provider passes both clusters: the release completes, judged by it on each.
      const passing = await request(server)
        .post(releases)
        .send({ image: 'judged:2.0.0', strategy: strategy([]) })
        .expect(201);
      const done = await finished(passing.body.id);
      expect(done.status).toBe('COMPLETED');
      expect(
        done.progress.clusters.map((c: any) => [c.cluster, c.mode, c.state]),
      ).toEqual([
        ['east', 'replicas', 'DONE'],
        ['west', 'rollout', 'DONE'],
      ]);
      expect(
        done.progress.analysis.map((m: any) => [
          m.cluster,
          m.template,
          m.phase,
        ]),
      ).toEqual(
        expect.arrayContaining([
          ['east', 'judged', 'Successful'],
          ['west', 'judged', 'Successful'],
        ]),
      );
      expect(seen).toEqual(
        expect.arrayContaining(['judged east r2', 'judged west r2']),
      );
      // West's canary was a Rollout, with no AnalysisTemplate for it: Argo could not run one.
      const ours = (kind: string) =>
        sim
          .history('west', { kind })
          .filter(
            e =>
              e.object.metadata.annotations?.['cnp.io/entity-ref'] ===
              entityRef,
          );
      const rollouts = ours('Rollout').filter(e => e.verb === 'create');
      expect(rollouts).toHaveLength(1);
      expect(
        (rollouts[0].object as any).spec.strategy.canary.analysis,
      ).toBeUndefined();
      expect(ours('AnalysisTemplate')).toEqual([]);

      // The provider fails east: the release rolls back, the abort naming its metric and cluster.
      const failing = await request(server)
        .post(releases)
        .send({ image: 'judged:3.0.0', strategy: strategy(['east']) })
        .expect(201);
      const rolledBack = await finished(failing.body.id);
      expect(rolledBack.progress.phase).toBe('ROLLED_BACK');
      expect(rolledBack.progress.abort).toMatchObject({
        reason: 'ANALYSIS_FAILED',
        cluster: 'east',
        metric: 'judged',
        value: 0,
      });
      await backend.stop();
    });

    it("keeps a provider's own text out of the release and its events", async () => {
      sim.setCrd('west', 'rollouts.argoproj.io', false);
      sim.setCrd('east', 'rollouts.argoproj.io', false);
      // Its first measurement on each cluster is inconclusive, the next ones successful, each
      // with a message that names the module's credential.
      const measured = new Map<string, number>();
      const leaky: FleetAnalysisProvider = {
        type: 'leaky',
        measure: async ({ template, context }) => {
          const n = (measured.get(context.cluster) ?? 0) + 1;
          measured.set(context.cluster, n);
          return {
            template: template.name,
            cluster: context.cluster,
            condition: template.successCondition,
            at: new Date().toISOString(),
            ...(n === 1
              ? {
                  phase: 'Inconclusive' as const,
                  value: null,
                  message: `403 from the metrics API with token ${SECRET}`,
                }
              : {
                  phase: 'Successful' as const,
                  value: 1,
                  message: `passed, asked with token ${SECRET}`,
                }),
          };
        },
      };
      const { backend, server, releases, finished } = await startFleet(
        databaseId,
        'leaked',
        [leaky],
      );
      const created = await request(server)
        .post(releases)
        .send({
          image: 'leaked:2.0.0',
          strategy: probed({ leaky: { query: 'q' } }, { inconclusiveLimit: 3 }),
        })
        .expect(201);
      const done = await finished(created.body.id);
      expect(done.status).toBe('COMPLETED');
      // A success has its value and no message; an inconclusive one only Fleet's word.
      expect(
        done.progress.analysis.map((m: any) => [m.cluster, m.phase, m.message]),
      ).toEqual(
        expect.arrayContaining([
          ['east', 'Successful', undefined],
          ['west', 'Successful', undefined],
        ]),
      );
      const events = await eventsOf(server, created.body.id);
      expect(
        events
          .filter(e => e.reason === 'ANALYSIS_INCONCLUSIVE')
          .map(e => e.message)
          .sort(),
      ).toEqual([
        'probed on east: inconclusive (no data; 1 in a row, limit 3)',
        'probed on west: inconclusive (no data; 1 in a row, limit 3)',
      ]);
      expect(JSON.stringify(done)).not.toContain(SECRET);
      expect(JSON.stringify(events)).not.toContain(SECRET);
      await backend.stop();
    });

    it('counts a provider that throws as an error measurement, and rolls back past consecutiveErrorLimit', async () => {
      sim.setCrd('west', 'rollouts.argoproj.io', false);
      sim.setCrd('east', 'rollouts.argoproj.io', false);
      const broken: FleetAnalysisProvider = {
        type: 'broken',
        measure: async () => {
          throw new Error(`connection refused, token ${SECRET}`);
        },
      };
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      try {
        const { backend, server, releases, finished } = await startFleet(
          databaseId,
          'thrown',
          [broken],
        );
        const created = await request(server)
          .post(releases)
          .send({
            image: 'thrown:2.0.0',
            strategy: probed({ broken: {} }, { consecutiveErrorLimit: 1 }),
          })
          .expect(201);
        const rolledBack = await finished(created.body.id);
        expect(rolledBack.status).toBe('ROLLED_BACK');
        expect(rolledBack.progress.phase).toBe('ROLLED_BACK');
        expect(rolledBack.progress.abort).toMatchObject({
          reason: 'ANALYSIS_FAILED',
          metric: 'probed',
          value: null,
        });
        expect(rolledBack.progress.abort.message).toMatch(
          /^Analysis probed on (east|west) could not be measured 2 times in a row \(limit 1\): error$/,
        );
        const events = await eventsOf(server, created.body.id);
        expect(JSON.stringify(rolledBack)).not.toContain(SECRET);
        expect(JSON.stringify(events)).not.toContain(SECRET);
        await backend.stop();
      } finally {
        process.off('unhandledRejection', onUnhandled);
      }
      expect(unhandled).toEqual([]);
    });
  },
);
