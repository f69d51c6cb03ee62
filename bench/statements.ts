/*
 * Database statements per health cycle, counted on the knex pool Fleet uses (knex 'query'
 * events: every SELECT/INSERT/UPDATE/DELETE and every BEGIN/COMMIT/ROLLBACK sent), for a cycle in
 * which nothing changes and for the cycle in which 10 % of the clusters go OFFLINE.
 */
import {
  createFleet,
  createTempDatabase,
  median,
  seedDeployments,
  startSimProcess,
  statementCounter,
} from '@cnp/fleet-harness';

export interface StatementCount {
  total: number;
  byKind: Record<string, number>;
}

export interface StatementsResult {
  n: number;
  deploymentsPerCluster: number;
  noChange: StatementCount[];
  grace: StatementCount;
  goOffline: StatementCount;
  recover: StatementCount;
  offlineSummary: { transitions: number; degraded: number; restored: number };
}

export async function benchStatements(options: {
  n: number;
  deploymentsPerCluster: number;
  noChangeRuns: number;
  downFraction: number;
  log: (line: string) => void;
}): Promise<StatementsResult> {
  const { n, log } = options;
  const db = await createTempDatabase('fleet_bench');
  const sim = await startSimProcess({ clusters: n });
  try {
    const knex = db.knex();
    const counter = statementCounter(knex);
    const fleet = await createFleet({
      knex,
      kubeconfigDir: sim.kubeconfigDir,
      health: { probeTimeoutMs: 2_000, concurrency: 64 },
    });
    await fleet.worker.runCycle(); // registers every cluster, UNKNOWN -> ONLINE
    await seedDeployments(knex, sim.names, options.deploymentsPerCluster);
    await fleet.worker.runCycle(); // settles

    const count = async (label: string) => {
      counter.start();
      const summary = await fleet.worker.runCycle();
      const counted = counter.stop();
      log(
        `    N=${n} ${label}: ${counted.total} statements (${(
          counted.total / n
        ).toFixed(2)} per cluster) ${JSON.stringify(counted.byKind)}`,
      );
      return { counted, summary };
    };

    const noChange: StatementCount[] = [];
    for (let i = 0; i < options.noChangeRuns; i++)
      noChange.push((await count(`no change ${i + 1}`)).counted);

    const step = Math.round(1 / options.downFraction);
    const downNames = sim.names.filter((_, i) => (i + 1) % step === 0);
    await sim.setFault(downNames, { mode: 'down' });
    const grace = (await count(`${downNames.length} fail once (grace)`))
      .counted;
    const offline = await count(`${downNames.length} go OFFLINE`);
    if (offline.summary.transitions.length !== downNames.length) {
      throw new Error(
        `expected ${downNames.length} transitions, got ${offline.summary.transitions.length}`,
      );
    }
    await sim.setFault(downNames, { mode: 'ok' });
    const recover = (await count(`${downNames.length} recover`)).counted;
    return {
      n,
      deploymentsPerCluster: options.deploymentsPerCluster,
      noChange,
      grace,
      goOffline: offline.counted,
      recover,
      offlineSummary: {
        transitions: offline.summary.transitions.length,
        degraded: offline.summary.degradedDeployments,
        restored: offline.summary.restoredDeployments,
      },
    };
  } finally {
    await sim.stop();
    await db.drop();
  }
}

export function medianTotal(counts: StatementCount[]): number {
  return median(counts.map(c => c.total));
}
