/*
 * The fleet the latency and memory benchmarks measure, registered and seeded before the backend
 * starts, so that its startup work (health cycle, reconcile) sees the whole fleet: clusters by
 * discovery (a first health cycle of Fleet's HealthWorker registers them and records them
 * ONLINE, so that the backend's reconcile run really reads the live objects), then applications
 * (components) × clusters each, straight through SQL, each deployment with its history, and
 * each deployment's objects applied to its cluster as Fleet's deploy applies them: a fleet at
 * rest, deployed an hour ago, which the backend's first reconcile finds in sync. (Rows without
 * objects made that reconcile find every Deployment missing and roll thousands back, a load no
 * real fleet puts on the backend while its cards are read.)
 */
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import pLimit from 'p-limit';
import { ConfigReader } from '@backstage/config';
import { createFleet } from '@cnp/fleet-harness';
import {
  DeploymentService,
  ManifestApplier,
  ManifestRemover,
  readFleetConfig,
} from './releaseParts';

type Fleet = Awaited<ReturnType<typeof createFleet>>;
type CurrentRevision = Awaited<
  ReturnType<Fleet['stores']['revisions']['listCurrentRevisions']>
>[number];
type FleetCluster = Awaited<
  ReturnType<Fleet['stores']['clusters']['listClusters']>
>[number];
type ApplyResult = Awaited<ReturnType<ManifestApplier['apply']>>;

/** Revisions each seeded deployment has (its history), the last one current. */
export const REVISIONS_PER_DEPLOYMENT = 5;

export interface SeededFleet {
  /** `component:default/service-<i+1>` is application i's entity. */
  applications: number;
  deployments: number;
  /** Deployments whose objects were applied (those on clusters the registering cycle found ONLINE). */
  applied: number;
}

export async function seedFleetDeployments(options: {
  knex: Knex;
  kubeconfigDir: string;
  clusterNames: string[];
  applications: number;
  deploymentsPerApplication: number;
  /**
   * Applies each deployment's objects to its cluster (default), so that the first reconcile run
   * finds a fleet at rest. Off, the rows alone: that run finds the objects missing and marks
   * the deployments OUT_OF_SYNC (self-heal is off by default).
   */
  applyObjects?: boolean;
  /** Every deployment DEPLOYED (default: one in 10 FAILED, APPLY_FAILED). */
  allDeployed?: boolean;
  /**
   * The registering cycle's probe timeout (default 2 s): a cluster it finds UNKNOWN gets no
   * objects. Longer, so that every cluster gets its objects on a loaded machine.
   */
  registerProbeTimeoutMs?: number;
  log: (line: string) => void;
}): Promise<SeededFleet> {
  const { knex, clusterNames, log } = options;
  const pre = await createFleet({
    knex,
    kubeconfigDir: options.kubeconfigDir,
    health: {
      probeTimeoutMs: options.registerProbeTimeoutMs ?? 2000,
      concurrency: 64,
    },
  });
  const preCycle = await pre.worker.runCycle();
  log(
    `  registered ${preCycle.probed} clusters (${preCycle.online} ONLINE, ${preCycle.unknown} UNKNOWN)`,
  );
  const seedStarted = performance.now();
  // Deployed an hour ago: outside the automatic rollback's window (10 minutes after an apply).
  const now = new Date(Date.now() - 60 * 60_000);
  const apps = Array.from({ length: options.applications }, (_, i) => ({
    id: randomUUID(),
    entity_ref: `component:default/service-${i + 1}`,
    name: `service-${i + 1}`,
    origin: 'imported',
    spec: JSON.stringify({
      image: `registry.local/service-${i + 1}:1.0.${i % 7}`,
      replicas: 3,
    }),
    placement: '{}',
    created_at: now,
    updated_at: now,
  }));
  if (apps.length) await knex.batchInsert('fleet_applications', apps, 500);
  // 90 % DEPLOYED, 10 % FAILED (APPLY_FAILED); none in flight (PENDING or PROGRESSING would be
  // adopted and followed at startup), none DEGRADED (with its objects applied and ready, the
  // first reconcile would bring it back to DEPLOYED: a write per deployment in the measured run).
  // A FAILED deployment's objects are applied too, as a failed apply that wrote them leaves them;
  // the reconcile finds them in sync and leaves its status alone.
  const statuses = [
    'DEPLOYED',
    'DEPLOYED',
    'DEPLOYED',
    'DEPLOYED',
    'DEPLOYED',
    'DEPLOYED',
    'DEPLOYED',
    'DEPLOYED',
    'DEPLOYED',
    'FAILED',
  ];
  const reasons: Record<string, string | null> = {
    DEPLOYED: null,
    FAILED: 'APPLY_FAILED',
  };
  const deployments = apps.flatMap((app, i) =>
    Array.from({ length: options.deploymentsPerApplication }, (_, k) => {
      const status = options.allDeployed
        ? 'DEPLOYED'
        : statuses[(i + k) % statuses.length];
      return {
        id: randomUUID(),
        application_id: app.id,
        cluster:
          clusterNames[
            (i * options.deploymentsPerApplication + k) % clusterNames.length
          ],
        status,
        status_reason: reasons[status],
        message: null,
        sync_status: 'SYNCED',
        image: `registry.local/service-${i + 1}:1.0.${i % 7}`,
        revision: REVISIONS_PER_DEPLOYMENT,
        last_applied_at: now,
        last_synced_at: now,
        created_at: now,
        updated_at: now,
      };
    }),
  );
  if (deployments.length)
    await knex.batchInsert('fleet_deployments', deployments, 1000);
  // Each deployment with its history: revisions 1..5, the last one current. Built a slice of
  // deployments at a time: at 100,000 deployments the 500,000 rows are never all in memory.
  const revisionsOf = (d: (typeof deployments)[number]) =>
    Array.from({ length: REVISIONS_PER_DEPLOYMENT }, (_, r) => ({
      deployment_id: d.id,
      application_id: d.application_id,
      cluster: d.cluster,
      revision: r + 1,
      image: d.image.replace(/:1\.0\.(\d+)$/, `:1.${r}.$1`),
      replicas: 3,
      cause: r === 0 ? 'deploy' : 'release',
      created_by: 'bench',
      created_at: now,
      outcome:
        d.status === 'FAILED' && r === REVISIONS_PER_DEPLOYMENT - 1
          ? 'FAILED'
          : 'DEPLOYED',
      outcome_at: now,
    }));
  const slice = Math.floor(2000 / REVISIONS_PER_DEPLOYMENT);
  for (let i = 0; i < deployments.length; i += slice) {
    await knex('fleet_revisions').insert(
      deployments.slice(i, i + slice).flatMap(revisionsOf),
    );
  }
  await knex.raw('ANALYZE');
  const withObjects = options.applyObjects !== false;
  const applied = withObjects ? await applyObjects(pre, log) : 0;
  const counts = await knex('fleet_deployments').count({ n: '*' }).first();
  log(
    `  seeded ${clusterNames.length} clusters, ${
      apps.length
    } applications and ${
      counts?.n
    } deployments, ${REVISIONS_PER_DEPLOYMENT} revisions each, ${
      withObjects ? `the objects of ${applied} applied` : 'no objects applied'
    } (${((performance.now() - seedStarted) / 1000).toFixed(1)} s)`,
  );

  return {
    applications: apps.length,
    deployments: Number(counts?.n),
    applied,
  };
}

/**
 * Applies revisions' objects as Fleet's deploy does (the same manifests, the same server-side
 * apply) through a registered fleet's clients: the fleet's current revisions and clusters, and
 * `apply(revision, cluster)`.
 */
export async function revisionApplier(pre: Fleet): Promise<{
  revisions: CurrentRevision[];
  clusters: FleetCluster[];
  apply(revision: CurrentRevision, cluster: FleetCluster): Promise<ApplyResult>;
}> {
  const fleetConfig = readFleetConfig(new ConfigReader({}), {});
  const applier = ManifestApplier.create({ clients: pre.clients });
  const service = DeploymentService.create({
    stores: pre.stores,
    applier,
    remover: ManifestRemover.create({ clients: pre.clients }),
    logger: pre.logger,
    deploy: fleetConfig.deploy,
  });
  const [applications, revisions, clusters] = await Promise.all([
    pre.stores.applications.listApplications(),
    pre.stores.revisions.listCurrentRevisions(),
    pre.stores.clusters.listClusters(),
  ]);
  const appById = new Map(applications.map(a => [a.id, a]));
  const apply = async (revision: CurrentRevision, cluster: FleetCluster) => {
    const desired = await service.desiredFor({
      application: appById.get(revision.applicationId)!,
      revision,
      cluster,
    });
    // The seeded applications are of Fleet's generated workload (no manifests of their own).
    if (!desired.manifests)
      throw new Error(
        `${revision.cluster}: revision ${revision.revision} recorded objects of its own`,
      );
    return applier.apply(cluster, desired.namespace, desired.manifests);
  };
  return { revisions, clusters, apply };
}

/**
 * Applies each deployment's current revision to its cluster, as Fleet's deploy does (the same
 * manifests, the same server-side apply), on the clusters the registering cycle found ONLINE: a
 * cluster that times out holds objects Fleet cannot read either way.
 */
async function applyObjects(
  pre: Fleet,
  log: (line: string) => void,
): Promise<number> {
  const started = performance.now();
  const { revisions, clusters, apply } = await revisionApplier(pre);
  const online = new Map(
    clusters.filter(c => c.status === 'ONLINE').map(c => [c.name, c]),
  );
  const limit = pLimit(32);
  let applied = 0;
  const failures: string[] = [];
  await Promise.all(
    revisions
      .filter(r => online.has(r.cluster))
      .map(r =>
        limit(async () => {
          const result = await apply(r, online.get(r.cluster)!);
          if (result.kind === 'applied') applied += 1;
          else failures.push(`${r.cluster}: ${result.message}`);
        }),
      ),
  );
  pre.clients.closeIdleConnections();
  if (failures.length) {
    throw new Error(
      `${failures.length} applies failed while seeding, e.g. ${failures[0]}`,
    );
  }
  log(
    `  applied the objects of ${applied} deployments in ${(
      (performance.now() - started) /
      1000
    ).toFixed(1)} s`,
  );
  return applied;
}
