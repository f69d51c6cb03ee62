import { metrics } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import {
  coreServices,
  createBackendModule,
  type SchedulerService,
} from '@backstage/backend-plugin-api';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { useSimulator } from '@cnp/kube-simulator';
import { createTestDatabases } from '../testing/databases';
import net from 'node:net';
import request from 'supertest';
import { fleetPlugin } from '../plugin';
import { RECONCILE_TASK_ID } from '../reconcile/ReconcileWorker';

// Fleet's metrics as Prometheus scrapes them: the backend's instrumentation (a MeterProvider with
// a Prometheus exporter, as packages/backend/src/instrumentation.js sets it up), Backstage's
// metrics service, the real plugin driven through its API, and /metrics read over HTTP.

jest.setTimeout(90_000);

const databases = createTestDatabases();
const sim = useSimulator({ clusters: ['east', 'west'], readyDelayMs: 50 });

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

let exporter: PrometheusExporter;
let provider: MeterProvider;
let port: number;

beforeAll(async () => {
  port = await freePort();
  exporter = new PrometheusExporter({ host: '127.0.0.1', port });
  provider = new MeterProvider({ readers: [exporter] });
  // Before any backend starts: the metrics service takes its meter from the global provider.
  metrics.setGlobalMeterProvider(provider);
});

afterAll(async () => {
  metrics.disable();
  await provider.shutdown();
});

/** The scrape, one sample per line: `name{labels} value`. */
async function scrape(): Promise<string[]> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(res.status).toBe(200);
  return (await res.text()).split('\n').filter(l => l && !l.startsWith('#'));
}

function sample(lines: string[], name: string, labels: string = ''): number {
  const line = lines.find(
    l =>
      l.startsWith(`${name}{`) &&
      labels.split(',').every(label => !label || l.includes(label)),
  );
  if (!line) {
    throw new Error(
      `No sample ${name} with ${labels}; samples:\n${lines
        .filter(l => l.startsWith('fleet'))
        .join('\n')}`,
    );
  }
  return Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe.each(databases.eachSupportedId())(
  'Fleet metrics on the Prometheus exporter (%s)',
  databaseId => {
    it('exports clusters, deployments and releases by status, and the probe, cycle and reconcile durations', async () => {
      const knex = await databases.init(databaseId);
      let scheduler: SchedulerService | undefined;
      const { server } = await startTestBackend({
        features: [
          fleetPlugin,
          createBackendModule({
            pluginId: 'fleet',
            moduleId: 'test-scheduler',
            register(env) {
              env.registerInit({
                deps: { s: coreServices.scheduler },
                async init({ s }) {
                  scheduler = s;
                },
              });
            },
          }),
          mockServices.database.factory({ knex }),
          mockServices.rootConfig.factory({
            data: {
              fleet: {
                discovery: { kubeconfigDir: sim.kubeconfigDir },
                health: {
                  // Generous: a slow probe on a loaded machine must not fail a healthy cluster.
                  probeTimeout: { seconds: 5 },
                  minOutage: { seconds: 0 },
                  manualMinInterval: { seconds: 0 },
                },
                deploy: { pollInterval: { milliseconds: 100 } },
              },
            },
          }),
          catalogServiceMock.factory({ entities: [] }),
        ],
      });
      // A scrape sees this test's backend only: counters and histograms of an earlier one are
      // read as differences.
      const before = await scrape();
      const count = (lines: string[], name: string, labels = '') => {
        try {
          return sample(lines, name, labels);
        } catch {
          return 0;
        }
      };

      await request(server).post('/api/fleet/health/run').expect(200);
      const entityRef = `component:default/metered-${databaseId.toLowerCase()}`;
      const created = await request(server)
        .post('/api/fleet/deployments')
        .send({ entityRef, cluster: 'east', image: 'metered:1.0.0' })
        .expect(201);
      for (let i = 0; i < 200; i++) {
        const d = await request(server).get(
          `/api/fleet/deployments/${created.body.id}`,
        );
        if (d.body.status === 'DEPLOYED') break;
        await new Promise(r => setTimeout(r, 50));
      }
      const [application] = (
        await request(server)
          .get(`/api/fleet/applications?entityRef=${entityRef}`)
          .expect(200)
      ).body.items;
      await request(server)
        .post(`/api/fleet/applications/${application.id}/releases`)
        .send({ image: 'metered:1.1.0' })
        .expect(201);
      sim.setFault('west', { mode: 'down' });
      await request(server).post('/api/fleet/health/run').expect(200);
      await request(server).post('/api/fleet/health/run').expect(200);
      await scheduler!.triggerTask(RECONCILE_TASK_ID);

      const after = await scrape();
      // Gauges: the fleet as the database holds it.
      expect(sample(after, 'fleet_clusters', 'status="ONLINE"')).toBe(1);
      expect(sample(after, 'fleet_clusters', 'status="OFFLINE"')).toBe(1);
      expect(sample(after, 'fleet_clusters', 'status="UNKNOWN"')).toBe(0);
      const deployments = [
        'PENDING',
        'PROGRESSING',
        'DEPLOYED',
        'DEGRADED',
        'FAILED',
      ];
      expect(
        deployments.reduce(
          (sum, s) => sum + sample(after, 'fleet_deployments', `status="${s}"`),
          0,
        ),
      ).toBe(1);
      expect(
        ['SYNCED', 'OUT_OF_SYNC', 'UNKNOWN'].reduce(
          (sum, s) =>
            sum + sample(after, 'fleet_deployments_sync', `sync_status="${s}"`),
          0,
        ),
      ).toBe(1);
      expect(sample(after, 'fleet_releases', 'phase="IMMEDIATE"')).toBe(1);
      expect(sample(after, 'fleet_releases', 'phase="ROLLED_BACK"')).toBe(0);

      // Histograms and the counter: what this backend ran. Three cycles over two clusters, the
      // last two with west failing; one ONLINE -> OFFLINE transition; one reconcile.
      const delta = (name: string, labels = '') =>
        count(after, name, labels) - count(before, name, labels);
      expect(delta('fleet_health_cycle_duration_count')).toBe(3);
      expect(
        delta('fleet_health_probe_duration_count', 'outcome="success"'),
      ).toBe(4);
      expect(
        delta('fleet_health_probe_duration_count', 'outcome="failure"'),
      ).toBe(2);
      expect(
        delta(
          'fleet_health_probe_duration_bucket',
          'outcome="success",le="+Inf"',
        ),
      ).toBe(4);
      expect(
        delta('fleet_health_transitions_total', 'from="ONLINE",to="OFFLINE"'),
      ).toBe(1);
      expect(delta('fleet_reconcile_duration_count')).toBe(1);
      expect(delta('fleet_reconcile_duration_sum')).toBeGreaterThan(0);
    });
  },
);
