/*
 * Bytes per load of the entity deployments card at a fleet size: the fleet seeded as the card
 * benchmark seeds it (10 deployments per application), the backend started, its startup health
 * cycle waited for, then one card load of a few entities, with the card's old request set and
 * its new one (bench/lib/cardLoadBytes.ts). No load runs: the figure is the size of the answers,
 * which the load does not change.
 */
import { randomBytes } from 'node:crypto';
import {
  createTempDatabase,
  ms,
  startBackendProcess,
  startSimProcess,
} from '@cnp/fleet-harness';
import {
  cardBytesLines,
  measureCardLoadBytes,
  type CardBytesResult,
} from './lib/cardLoadBytes';
import { seedFleetDeployments } from './lib/seedDeployments';
import { waitForStartupCycle } from './lib/waitFor';

export interface CardBytesRun {
  clusters: number;
  deployments: number;
  loads: CardBytesResult[];
}

export async function benchCardBytes(options: {
  clusters: number;
  applications: number;
  /** Entities whose card is loaded (the first ones). */
  cards: number;
  basePort?: number;
  log: (line: string) => void;
}): Promise<CardBytesRun> {
  const { log } = options;
  const db = await createTempDatabase('fleet_bench');
  const sim = await startSimProcess({
    clusters: options.clusters,
    port: options.basePort,
    watch: { controllerTickMs: 30_000 },
  });
  const token = randomBytes(24).toString('hex');
  let backend: Awaited<ReturnType<typeof startBackendProcess>> | undefined;
  try {
    const knex = db.knex();
    const seeded = await seedFleetDeployments({
      knex,
      kubeconfigDir: sim.kubeconfigDir,
      clusterNames: sim.names,
      applications: options.applications,
      deploymentsPerApplication: 10,
      log,
    });
    const startedAt = Date.now();
    backend = await startBackendProcess({
      FLEET_BENCH_DB: db.connection,
      FLEET_BENCH_KUBECONFIG_DIR: sim.kubeconfigDir,
      FLEET_BENCH_TOKEN: token,
      FLEET_BENCH_HEALTH: JSON.stringify({
        probeTimeout: { seconds: 2 },
        concurrency: 64,
      }),
      FLEET_BENCH_FLEET: JSON.stringify({
        reconcile: { interval: { hours: 1 } },
      }),
      LOG_LEVEL: process.env.FLEET_BENCH_VERBOSE ? 'info' : 'error',
      ...(options.basePort
        ? { FLEET_BENCH_PORT: String(options.basePort + 1) }
        : {}),
    });
    log(`  backend started in ${ms(backend.startMs)}`);
    // The clusters' rows as the card reads them at rest: after the startup health cycle.
    const cycle = await waitForStartupCycle(
      knex,
      startedAt,
      Math.max(300_000, options.clusters * 60),
    );
    log(
      `  startup health cycle over ${cycle.probed} clusters: ${ms(
        cycle.durationMs,
      )}`,
    );
    const base = `http://127.0.0.1:${backend.port}/api/fleet`;
    const loads: CardBytesResult[] = [];
    for (let i = 0; i < Math.min(options.cards, seeded.applications); i++) {
      const result = await measureCardLoadBytes({
        base,
        token,
        entityRef: `component:default/service-${i + 1}`,
      });
      loads.push(result);
      for (const line of cardBytesLines(result)) log(line);
    }
    return {
      clusters: options.clusters,
      deployments: seeded.deployments,
      loads,
    };
  } finally {
    await backend?.stop();
    await sim.stop();
    await db.drop();
  }
}
