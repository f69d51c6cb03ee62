/*
 * A Backstage backend (createBackend from @backstage/backend-defaults, the production wiring)
 * with only the Fleet backend plugin, in a process of its own so that its memory can be read
 * from /proc. Listens on 127.0.0.1 only. Its database is the PostgreSQL database named by
 * FLEET_BENCH_DB (given as the plugin's database, like `backend.database` would), it discovers
 * FLEET_BENCH_KUBECONFIG_DIR, and the real scheduler runs the health task at startup.
 *
 * Callers are authenticated with a static external-access token (FLEET_BENCH_TOKEN): the
 * backend's real auth and httpAuth services, no mocks. FLEET_BENCH_GUEST_TOKEN, when set, is a
 * second one whose access restrictions allow Fleet's deploy permissions only: a caller that is
 * not a cluster admin, decided by the real permissions service. FLEET_BENCH_CATALOG_FILE, when
 * set, adds Backstage's catalog backend reading that file of entities (owners decide projects).
 * FLEET_BENCH_CONFIG, when set, is JSON merged into the backend's config at the top level (e.g. a
 * `kubernetes` section); FLEET_BENCH_FEATURES, when set, is a JSON list of module specifiers
 * whose default export is a backend feature, each added as `backend.add(import(specifier))` (e.g.
 * `@backstage/plugin-kubernetes-backend` and Fleet's module of it): the caller names what it
 * installs, so this package does not depend on it.
 */
import { createBackend } from '@backstage/backend-defaults';
import {
  coreServices,
  createServiceFactory,
} from '@backstage/backend-plugin-api';
import { ConfigReader } from '@backstage/config';
import knexFactory from 'knex';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createServer } from 'node:net';
import { writeHeapSnapshot } from 'node:v8';
// The harness wires the plugin's own parts: it exists to build the backend plugin.
// eslint-disable-next-line @backstage/no-mixed-plugin-imports
import fleetPlugin from '@cnp/plugin-fleet-backend';
// eslint-disable-next-line @backstage/no-mixed-plugin-imports
import { poolStats } from '@cnp/plugin-fleet-backend/testUtils';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function main() {
  const connection = process.env.FLEET_BENCH_DB!;
  const kubeconfigDir = process.env.FLEET_BENCH_KUBECONFIG_DIR!;
  const token = process.env.FLEET_BENCH_TOKEN!;
  const guestToken = process.env.FLEET_BENCH_GUEST_TOKEN;
  const catalogFile = process.env.FLEET_BENCH_CATALOG_FILE;
  const health = JSON.parse(process.env.FLEET_BENCH_HEALTH ?? '{}');
  const fleet = JSON.parse(process.env.FLEET_BENCH_FLEET ?? '{}');
  const extraConfig = JSON.parse(process.env.FLEET_BENCH_CONFIG ?? '{}');
  const features: string[] = JSON.parse(
    process.env.FLEET_BENCH_FEATURES ?? '[]',
  );
  const knex = knexFactory({
    client: 'pg',
    connection,
    pool: { min: 0, max: 10 },
  });
  // FLEET_BENCH_PORT: a port of the caller's range; otherwise a free one.
  const port = Number(process.env.FLEET_BENCH_PORT) || (await freePort());

  const backend = createBackend();
  const config = new ConfigReader({
    ...extraConfig,
    backend: {
      baseUrl: `http://127.0.0.1:${port}`,
      listen: { host: '127.0.0.1', port },
      auth: {
        externalAccess: [
          { type: 'static', options: { token, subject: 'fleet-bench' } },
          ...(guestToken
            ? [
                {
                  type: 'static',
                  options: { token: guestToken, subject: 'fleet-guest' },
                  accessRestrictions: [
                    {
                      plugin: 'fleet',
                      permission: [
                        'fleet.deployment.create',
                        'fleet.deployment.delete',
                        'fleet.release.manage',
                        'fleet.cluster.deploy',
                      ],
                    },
                  ],
                },
              ]
            : []),
        ],
      },
    },
    ...(catalogFile
      ? {
          catalog: {
            rules: [{ allow: ['Component', 'Group', 'User', 'System'] }],
            locations: [{ type: 'file', target: catalogFile }],
            processingInterval: { seconds: 1 },
          },
        }
      : {}),
    fleet: {
      ...fleet,
      discovery: { kubeconfigDir, ...fleet.discovery },
      // Cycles are run on demand, back to back: no minOutage nor manualMinInterval unless the
      // scenario sets them.
      health: {
        interval: { hours: 1 },
        minOutage: { seconds: 0 },
        manualMinInterval: { seconds: 0 },
        ...fleet.health,
        ...health,
      },
    },
  });
  backend.add(
    createServiceFactory({
      service: coreServices.rootConfig,
      deps: {},
      factory: () => config,
    }),
  );
  // Fleet's database is the benchmark's database (the scheduler's tables go there too). Another
  // plugin (the catalog) gets a schema of its own in it: two plugins migrating the same tables at
  // once (each one's auth keys) would race.
  backend.add(
    createServiceFactory({
      service: coreServices.database,
      deps: { plugin: coreServices.pluginMetadata },
      factory: ({ plugin }) => ({
        getClient: async () => {
          if (plugin.getId() === 'fleet') return knex;
          const schema = `plugin_${plugin.getId().replace(/[^a-z0-9]/g, '_')}`;
          await knex.raw('CREATE SCHEMA IF NOT EXISTS ??', [schema]);
          return knexFactory({
            client: 'pg',
            connection,
            searchPath: [schema],
            pool: { min: 0, max: 5 },
          });
        },
      }),
    }),
  );
  // FLEET_BENCH_NO_FLEET: the same backend without the plugin, to tell Fleet's memory apart.
  if (!process.env.FLEET_BENCH_NO_FLEET) backend.add(fleetPlugin);
  if (catalogFile) backend.add(import('@backstage/plugin-catalog-backend'));
  for (const feature of features) backend.add(import(feature));
  const started = performance.now();
  await backend.start();
  process.send!({ type: 'ready', port, startMs: performance.now() - started });

  // A V8 CPU profile of a window the caller chooses ('profileStart', then 'profileStop' with the
  // file to write), unlike --cpu-prof, which covers the whole life of the process.
  let profiler: Session | undefined;
  const profile = async (message: { op?: string; file?: string }) => {
    if (message.op === 'profileStart' && !profiler) {
      profiler = new Session();
      profiler.connect();
      await profiler.post('Profiler.enable');
      await profiler.post('Profiler.start');
      return true;
    }
    if (message.op === 'profileStop' && profiler && message.file) {
      const { profile: taken } = await profiler.post('Profiler.stop');
      profiler.disconnect();
      profiler = undefined;
      writeFileSync(message.file, JSON.stringify(taken));
      return true;
    }
    return false;
  };

  process.on(
    'message',
    (message: { op?: string; id?: number; file?: string }) => {
      if (message?.op === 'profileStart' || message?.op === 'profileStop') {
        profile(message).then(
          done => process.send!({ type: message.op, id: message.id, done }),
          () =>
            process.send!({ type: message.op, id: message.id, done: false }),
        );
      }
      if (message?.op === 'memory') {
        // After a full GC (the child runs with --expose-gc): what is live, apart from the peak.
        (globalThis as { gc?: () => void }).gc?.();
        process.send!({
          type: 'memory',
          id: message.id,
          usage: process.memoryUsage(),
        });
      }
      if (message?.op === 'heapSnapshot' && message.file) {
        // What the heap holds, for Chrome DevTools' Memory panel (or bench/heapSummary.ts).
        const file = message.file;
        let done = false;
        try {
          writeHeapSnapshot(file);
          done = true;
        } catch (error) {
          process.stderr.write(`heap snapshot to ${file}: ${error}\n`);
        }
        process.send!({ type: 'heapSnapshot', id: message.id, done });
      }
      if (message?.op === 'pool' && !process.env.FLEET_BENCH_NO_FLEET) {
        process.send!({ type: 'pool', id: message.id, stats: poolStats() });
      }
    },
  );
  process.on('disconnect', () => process.exit(0));
}

main().catch(error => {
  process.stderr.write(`backend child: ${(error as Error)?.stack ?? error}\n`);
  process.exit(1);
});
