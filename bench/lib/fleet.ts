/*
 * Fleet's real parts wired as plugins/fleet-backend/src/plugin.ts wires them — the knex store on
 * a real database, discovery of real kubeconfig files, client-node clients, the HealthWorker —
 * without the scheduler, so a benchmark or a chaos scenario runs cycles itself. (The same as
 * __testUtils__/fleetHarness.ts, minus its jest mocks, so it runs under plain node.)
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type { DeploymentStatus } from '@cnp/plugin-fleet-common';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import type { FleetConfig } from '../../plugins/fleet-backend/src/config/FleetConfig';
import { DatabaseFleetStore } from '../../plugins/fleet-backend/src/database/DatabaseFleetStore';
import type { FleetStore } from '../../plugins/fleet-backend/src/database/FleetStore';
import { ClusterDiscovery } from '../../plugins/fleet-backend/src/discovery/ClusterDiscovery';
import { HealthWorker } from '../../plugins/fleet-backend/src/health/HealthWorker';
import { ClusterClients } from '../../plugins/fleet-backend/src/kubernetes/ClusterClients';
import { KubeconfigAccessPolicy } from '../../plugins/fleet-backend/src/kubernetes/KubeconfigAccessPolicy';

export const defaultHealth: FleetConfig['health'] = {
  intervalMs: 300_000,
  failureThreshold: 2,
  recoveryThreshold: 1,
  probeTimeoutMs: 2_000,
  concurrency: 16,
  massOutage: { minClusters: 3, fraction: 0.55 },
};

export interface LogRecord {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
}

/** A LoggerService that keeps what it is told (and prints it when FLEET_BENCH_VERBOSE is set). */
export function recordingLogger(
  records: LogRecord[] = [],
): LoggerService & { records: LogRecord[] } {
  const verbose = !!process.env.FLEET_BENCH_VERBOSE;
  const log = (level: LogRecord['level']) => (message: string) => {
    if (records.length < 100_000) records.push({ level, message });
    if (verbose) process.stderr.write(`[${level}] ${message}\n`);
  };
  const logger: LoggerService & { records: LogRecord[] } = {
    records,
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    child: () => logger,
  };
  return logger;
}

export type ProbeFn = ClusterClients['probe'];

export async function createFleet(options: {
  knex: Knex;
  kubeconfigDir: string;
  health?: Partial<FleetConfig['health']>;
  wrapProbe?: (probe: ProbeFn, clients: ClusterClients) => ProbeFn;
  wrapStore?: (store: FleetStore) => FleetStore;
  /** Called around discovery, e.g. to time it. */
  aroundDiscovery?: (run: () => Promise<void>) => Promise<void>;
}) {
  const logger = recordingLogger();
  const store = await DatabaseFleetStore.create({
    database: {
      getClient: async () => options.knex,
      migrations: { skip: false },
    } as any,
  });
  const policy = KubeconfigAccessPolicy.create({
    kubeconfigDir: options.kubeconfigDir,
  });
  const clients = ClusterClients.create({ policy });
  const discovery = ClusterDiscovery.create({
    store,
    logger,
    sources: { kubeconfigDir: options.kubeconfigDir },
  });
  const probe = clients.probe.bind(clients);
  const health = { ...defaultHealth, ...options.health };
  const discover = async () => {
    await discovery.run();
  };
  const worker = HealthWorker.create({
    store: options.wrapStore ? options.wrapStore(store) : store,
    clients: {
      probe: options.wrapProbe ? options.wrapProbe(probe, clients) : probe,
    },
    logger,
    health,
    discover: options.aroundDiscovery
      ? () => options.aroundDiscovery!(discover)
      : discover,
  });
  return { store, worker, logger, clients, discovery, policy, health };
}

/**
 * Seeds `perCluster` DEPLOYED deployments on each named cluster, straight through SQL in
 * batches (what the API would write, without a Kubernetes apply per row). Returns their ids.
 */
export async function seedDeployments(
  knex: Knex,
  clusters: string[],
  perCluster: number,
  options: {
    status?: DeploymentStatus;
    statusReason?: string;
    appPrefix?: string;
  } = {},
): Promise<string[]> {
  const now = new Date();
  const prefix = options.appPrefix ?? 'app';
  const apps = Array.from({ length: perCluster }, (_, i) => ({
    id: randomUUID(),
    entity_ref: `component:default/${prefix}-${i + 1}`,
    name: `${prefix}-${i + 1}`,
    origin: 'imported',
    spec: JSON.stringify({ image: 'nginx:1.27', replicas: 2 }),
    placement: '{}',
    created_at: now,
    updated_at: now,
  }));
  await knex.batchInsert('fleet_applications', apps, 500);
  const rows = clusters.flatMap(cluster =>
    apps.map(app => ({
      id: randomUUID(),
      application_id: app.id,
      cluster,
      status: options.status ?? 'DEPLOYED',
      status_reason: options.statusReason ?? null,
      message: null,
      sync_status: 'SYNCED',
      image: 'nginx:1.27',
      revision: 1,
      last_applied_at: now,
      created_at: now,
      updated_at: now,
    })),
  );
  await knex.batchInsert('fleet_deployments', rows, 1000);
  return rows.map(r => r.id);
}

/** Counts every statement a knex pool sends, by kind (see `classify`). */
export function statementCounter(knex: Knex) {
  let counts = new Map<string, number>();
  let enabled = false;
  knex.on('query', (query: { sql?: string }) => {
    if (!enabled) return;
    const kind = classify(query.sql ?? '');
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  });
  return {
    start() {
      counts = new Map();
      enabled = true;
    },
    stop(): { total: number; byKind: Record<string, number> } {
      enabled = false;
      const byKind = Object.fromEntries(
        [...counts.entries()].sort((a, b) => b[1] - a[1]),
      );
      return { total: [...counts.values()].reduce((a, b) => a + b, 0), byKind };
    },
  };
}

/** What a statement of the store is for, from its SQL. */
export function classify(sql: string): string {
  const s = sql.trim().toLowerCase();
  if (s.startsWith('begin')) return 'BEGIN';
  if (s.startsWith('commit')) return 'COMMIT';
  if (s.startsWith('rollback')) return 'ROLLBACK';
  const verb = s.split(/\s+/)[0].toUpperCase();
  const table = s.match(/"?\b(fleet_[a-z_]+)\b"?/)?.[1] ?? '?';
  if (
    table === 'fleet_clusters' &&
    verb === 'SELECT' &&
    /where "name" = /.test(s)
  ) {
    return 'SELECT fleet_clusters by name';
  }
  return `${verb} ${table}`;
}
