import type { LoggerService } from '@backstage/backend-plugin-api';
import type { DeploymentStatus } from '@cnp/plugin-fleet-common';
import { KubeconfigAccessPolicy } from '@cnp/plugin-fleet-node';
import type { FleetConfig } from '../config/FleetConfig';
import { DatabaseFleetStores } from '../database/DatabaseFleetStores';
import type {
  ApplicationStore,
  ClusterStore,
  DeploymentStore,
} from '../database/types';
import { ClusterDiscovery } from '../discovery/ClusterDiscovery';
import { HealthWorker } from '../health/HealthWorker';
import { ClusterClients } from '../kubernetes/ClusterClients';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';

/**
 * The health settings of the harness: the defaults of `app-config.yaml`, with a short timeout,
 * and no minOutage nor manualMinInterval: tests run cycles back to back, so the outage's time
 * rule and the manual-run limit are left to the tests about them.
 */
export const harnessHealthConfig: FleetConfig['health'] = {
  intervalMs: 300_000,
  failureThreshold: 2,
  minOutageMs: 0,
  manualMinIntervalMs: 0,
  recoveryThreshold: 1,
  probeTimeoutMs: 2_500, // generous: a loaded CI machine must not turn a slow probe into a failure
  concurrency: 16,
  massOutage: { minClusters: 3, fraction: 0.55 },
};

export interface LogRecord {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  /** The child loggers' fields and the call's own, merged. */
  fields: Record<string, unknown>;
  /** The error the call was given, if any. */
  error?: Error;
}

/** A log line as the backend's logger would show it: the message, the error's, the fields. */
export function formatLogRecord(record: LogRecord): string {
  const error = record.error ? `: ${record.error.message}` : '';
  const fields = Object.keys(record.fields).length
    ? ` ${JSON.stringify(record.fields)}`
    : '';
  return `[${record.level}] ${record.message}${error}${fields}`;
}

/**
 * A LoggerService that keeps what it is told, with its fields and error (and prints it when
 * FLEET_BENCH_VERBOSE is set); it needs no jest, so benchmarks and the chaos suite use it under
 * plain node.
 */
export function recordingLogger(
  records: LogRecord[] = [],
  inherited: Record<string, unknown> = {},
): LoggerService & { records: LogRecord[] } {
  const verbose = !!process.env.FLEET_BENCH_VERBOSE;
  const log =
    (level: LogRecord['level']) =>
    (message: string, meta?: Error | Record<string, unknown>) => {
      const record: LogRecord =
        meta instanceof Error
          ? { level, message, fields: { ...inherited }, error: meta }
          : { level, message, fields: { ...inherited, ...meta } };
      if (records.length < 100_000) records.push(record);
      if (verbose) process.stderr.write(`${formatLogRecord(record)}\n`);
    };
  return {
    records,
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    child: fields => recordingLogger(records, { ...inherited, ...fields }),
  };
}

export type ProbeFn = ClusterClients['probe'];

/**
 * Fleet's real parts wired as the plugin wires them — the stores on a real database, discovery
 * of real kubeconfig files, client-node clients, the health worker — without the scheduler, so a
 * test, a benchmark or a chaos scenario runs cycles itself.
 */
export async function createFleet(options: {
  knex: Knex;
  kubeconfigDir: string;
  health?: Partial<FleetConfig['health']>;
  /** Default: a {@link recordingLogger}. */
  logger?: LoggerService;
  /** Wraps the cluster store the health worker writes through, e.g. to inject a failure. */
  wrapClusters?: (clusters: ClusterStore) => ClusterStore;
  wrapProbe?: (probe: ProbeFn, clients: ClusterClients) => ProbeFn;
  /** Called around discovery, e.g. to time it. */
  aroundDiscovery?: (run: () => Promise<void>) => Promise<void>;
}) {
  const logger = options.logger ?? recordingLogger();
  const stores = await DatabaseFleetStores.create({
    database: {
      getClient: async () => options.knex,
      migrations: { skip: false },
    },
  });
  const policy = KubeconfigAccessPolicy.create({
    kubeconfigDir: options.kubeconfigDir,
  });
  const clients = ClusterClients.create({ policy });
  const discovery = ClusterDiscovery.create({
    clusters: stores.clusters,
    logger,
    sources: { kubeconfigDir: options.kubeconfigDir },
  });
  const health = { ...harnessHealthConfig, ...options.health };
  const discover = async () => {
    await discovery.run();
  };
  const worker = HealthWorker.create({
    stores: {
      clusters: options.wrapClusters
        ? options.wrapClusters(stores.clusters)
        : stores.clusters,
      state: stores.state,
    },
    clients: options.wrapProbe
      ? { probe: options.wrapProbe(clients.probe.bind(clients), clients) }
      : clients,
    logger,
    health,
    discover: options.aroundDiscovery
      ? () => options.aroundDiscovery!(discover)
      : discover,
  });
  return { stores, worker, logger, clients, discovery, policy, health };
}

/** Registers an application (once) with one deployment on `cluster` in the given status. */
export async function seedDeployment(
  stores: {
    applications: Pick<
      ApplicationStore,
      'getApplicationByEntityRef' | 'insertApplication'
    >;
    deployments: Pick<DeploymentStore, 'insertDeployment'>;
  },
  cluster: string,
  name: string,
  status: DeploymentStatus,
  statusReason?: string,
) {
  const entityRef = `component:default/${name}`;
  const application =
    (await stores.applications.getApplicationByEntityRef(entityRef)) ??
    (await stores.applications.insertApplication({
      entityRef,
      name,
      spec: { image: 'nginx:1.27' },
    }));
  return stores.deployments.insertDeployment(
    { applicationId: application.id, cluster, status, statusReason },
    'test',
  );
}

/**
 * Seeds `perCluster` DEPLOYED deployments (each with its revision 1) on each named cluster,
 * straight through SQL in batches (what the API would write, without a Kubernetes apply per row). Returns their ids.
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
  // Each deployment's revision 1, as a deploy records it.
  await knex.batchInsert(
    'fleet_revisions',
    rows.map(row => ({
      deployment_id: row.id,
      application_id: row.application_id,
      cluster: row.cluster,
      revision: 1,
      image: row.image,
      replicas: 2,
      cause: 'deploy',
      created_by: 'seed',
      created_at: now,
      outcome: row.status === 'FAILED' ? 'FAILED' : 'DEPLOYED',
      outcome_at: now,
    })),
    1000,
  );
  return rows.map(r => r.id);
}

/** Counts every statement a knex pool sends, by kind (see `classifyStatement`). */
export function statementCounter(knex: Knex) {
  let counts = new Map<string, number>();
  let enabled = false;
  knex.on('query', (query: { sql?: string }) => {
    if (!enabled) return;
    const kind = classifyStatement(query.sql ?? '');
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

/** What a statement of the stores is for, from its SQL: `UPDATE fleet_clusters`, `BEGIN`… */
export function classifyStatement(sql: string): string {
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
