/*
 * A component's own manifests against Fleet's generated workload, on 100 simulated clusters: what
 * one cluster's apply and preview take when the set is 50 objects of twelve kinds rather than
 * the 3 objects Fleet generates. Both go through the parts the backend's deploy and preview use,
 * over HTTPS with each cluster's kubeconfig (one simulator process serves every cluster's API
 * server; Fleet's parts run in this process):
 *
 * - the component's manifests: the objects rendered for the cluster with Fleet's marks
 *   (`renderRepositoryObjects`, as a deploy renders a revision), then what the deploy's apply
 *   does with them (`Deployer.applyDesired`): the namespace ensured (`ManifestApplier
 *   .ensureNamespace`), then `ObjectSetApplier.apply` (every object's live counterpart read and
 *   checked as Fleet's, each kind applied in dependency order, 8 objects of a kind at a time,
 *   the previous revision's objects the set drops pruned);
 * - the generated workload: `ManifestApplier.apply` of `buildManifests(...)` (Deployment,
 *   Service, PodDisruptionBudget; namespace created when missing), with the `fleet.deploy`
 *   defaults the generated source passes;
 * - the preview of both: `ObjectSetApplier.preview` (a server-side dry run of every object), as
 *   `Previews` asks it for each cluster.
 *
 * Not measured in these rounds: the Git read of the manifests (a deploy reads them once, before
 * anything is recorded), the database writes around an apply (revision, status, events), the
 * rollout follow-up, and the render itself (done before the clock starts; CPU only). The round
 * of bench/manifestsDeploy.ts then times the whole `DeploymentService.deploy()` and `preview()`,
 * Git read and database included, on the same clusters.
 */
import knexFactory from 'knex';
import pLimit from 'p-limit';
import { ConfigReader } from '@backstage/config';
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  createFleet,
  loadAverage,
  ms,
  percentile,
  runScoped,
  startSimProcess,
  table,
  type SimProcess,
} from '@cnp/fleet-harness';
import { ManifestApplier, readFleetConfig } from './lib/releaseParts';
import {
  buildManifests,
  objectsOf,
  ObjectSetApplier,
  renderRepositoryObjects,
  type Manifests,
  type ObjectChange,
} from './lib/manifestParts';
import { deployRound, type DeployRoundResult } from './manifestsDeploy';

const SHOP = 'component:default/shop';
const FIRST = 'first apply (creates)';
const SECOND = 'second apply, unchanged';
const AGAIN = 're-apply unchanged';
const PREVIEW = 'preview of the next version';
const STOREFRONT = 'component:default/storefront';

/** How the parts fan out over clusters in the backend, for the reader of the figures. */
export const FAN_OUT = {
  /** `ReleaseOrchestrator`: a progressive release's wave, `pLimit(16)`. */
  progressiveWave: 16,
  /** `Previews`: `PREVIEW_CONCURRENCY`. */
  preview: 8,
  /** `ReleaseService` (immediate release) and `Placer`: one cluster after another. */
  immediateRelease: 1,
};

export interface PhaseStats {
  /** What was done on each cluster. */
  phase: string;
  workload: 'manifests' | 'generated';
  objects: number;
  clusters: number;
  concurrency: number;
  p50: number;
  p95: number;
  max: number;
  /** All clusters, first start to last end. */
  wallMs: number;
  /** API requests each cluster received (mean). */
  requestsPerCluster: number;
  /** CPU of this process (Fleet's parts) per cluster, ms. */
  fleetCpuMsPerCluster: number;
  /** CPU of the simulator process per cluster, ms. */
  simCpuMsPerCluster: number;
}

export interface ManifestsRunResult {
  clusters: number;
  concurrency: number;
  phases: PhaseStats[];
  /** What the previews answered, per action, summed over the clusters. */
  previewActions: Record<'manifests' | 'generated', Record<string, number>>;
  load: string;
}

type Cluster = Awaited<
  ReturnType<
    Awaited<
      ReturnType<typeof createFleet>
    >['stores']['clusters']['listClusters']
  >
>[number];

// ---------------------------------------------------------------- the component's manifests

const image = (part: string, version: string) =>
  `registry.example/shop-${part}:${version}`;

const selector = (app: string) => ({ matchLabels: { app } });

function deployment(app: string, version: string): KubernetesObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: app, labels: { app } },
    spec: {
      replicas: 2,
      selector: selector(app),
      template: {
        metadata: { labels: { app } },
        spec: {
          serviceAccountName:
            app === 'shop-worker' ? 'shop-worker' : 'shop-api',
          containers: [
            {
              name: 'main',
              image: image(app.replace(/^shop-/, ''), version),
              ports: [{ name: 'http', containerPort: 8080 }],
              envFrom: [{ configMapRef: { name: 'shop-config-0' } }],
              env: [
                {
                  name: 'DB_PASSWORD',
                  valueFrom: {
                    secretKeyRef: { name: 'shop-secret-0', key: 'password' },
                  },
                },
              ],
              resources: {
                requests: { cpu: '100m', memory: '128Mi' },
                limits: { cpu: '500m', memory: '256Mi' },
              },
              readinessProbe: {
                httpGet: { path: '/ready', port: 'http' },
                periodSeconds: 5,
              },
            },
          ],
        },
      },
    },
  } as KubernetesObject;
}

function service(app: string, headless = false): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: app, labels: { app } },
    spec: {
      ...(headless ? { clusterIP: 'None' } : {}),
      selector: { app },
      ports: [{ name: 'http', port: 80, targetPort: 8080 }],
    },
  } as KubernetesObject;
}

function job(name: string): KubernetesObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name },
    spec: {
      backoffLimit: 2,
      template: {
        spec: {
          serviceAccountName: 'shop-migrate',
          restartPolicy: 'Never',
          containers: [
            {
              name: 'main',
              image: image('tools', '1.0.0'),
              args: [name.replace(/^shop-/, '')],
            },
          ],
        },
      },
    },
  } as KubernetesObject;
}

/**
 * The shop's 50 objects: 8 ConfigMaps, 4 Secrets, 4 ServiceAccounts, 3 Roles, 3 RoleBindings,
 * 8 Services, 6 Deployments, 1 StatefulSet, 3 Jobs, 4 PodDisruptionBudgets, 3
 * HorizontalPodAutoscalers (v2) and 3 NetworkPolicies, as a repository holds them (no namespace,
 * no Fleet mark). `changed`: the next version, 5 objects changed (2 ConfigMaps' data, 2
 * Deployments' image, an HPA's maximum) and one ConfigMap dropped.
 */
export function shopManifests(changed = false): KubernetesObject[] {
  const version = changed ? '1.1.0' : '1.0.0';
  const apps = [
    'shop-api',
    'shop-web',
    'shop-worker',
    'shop-cache',
    'shop-search',
    'shop-events',
  ];
  const configMaps = Array.from({ length: 8 }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `shop-config-${i}` },
    data: Object.fromEntries(
      Array.from({ length: 6 }, (__, k) => [
        `SETTING_${k}`,
        changed && i < 2 ? `value-${i}-${k}-next` : `value-${i}-${k}`,
      ]),
    ),
  }));
  const secrets = Array.from({ length: 4 }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `shop-secret-${i}` },
    type: 'Opaque',
    data: {
      username: Buffer.from(`shop-${i}`).toString('base64'),
      password: Buffer.from(`not-a-real-password-${i}`).toString('base64'),
    },
  }));
  const accounts = ['shop-api', 'shop-worker', 'shop-db', 'shop-migrate'].map(
    name => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } }),
  );
  // Rights a project lets a component's own Roles grant: its own ConfigMaps and Secrets by
  // name, reads.
  const roles = [
    ['shop-read-config', ['configmaps'], ['get', 'list', 'watch']],
    ['shop-read-secrets', ['secrets'], ['get']],
    ['shop-watch-jobs', ['jobs'], ['get', 'list', 'watch']],
  ] as const;
  const roleObjects = roles.flatMap(([name, resources, verbs], i) => [
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name },
      rules: [
        {
          apiGroups: [resources[0] === 'jobs' ? 'batch' : ''],
          resources: [...resources],
          ...(resources[0] === 'secrets'
            ? { resourceNames: secrets.map(secret => secret.metadata.name) }
            : {}),
          ...(resources[0] === 'configmaps'
            ? { resourceNames: configMaps.map(map => map.metadata.name) }
            : {}),
          verbs: [...verbs],
        },
      ],
    },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'Role',
        name,
      },
      subjects: [
        { kind: 'ServiceAccount', name: accounts[i % 3].metadata.name },
      ],
    },
  ]);
  const services = [
    ...apps.map(app => service(app)),
    service('shop-db', true),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'shop-metrics' },
      spec: {
        selector: { app: 'shop-api' },
        ports: [{ name: 'metrics', port: 9090, targetPort: 9090 }],
      },
    },
  ];
  const statefulSet = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'shop-db', labels: { app: 'shop-db' } },
    spec: {
      serviceName: 'shop-db',
      replicas: 1,
      selector: selector('shop-db'),
      template: {
        metadata: { labels: { app: 'shop-db' } },
        spec: {
          serviceAccountName: 'shop-db',
          containers: [
            {
              name: 'db',
              image: 'registry.example/postgres:16.4',
              ports: [{ name: 'pg', containerPort: 5432 }],
            },
          ],
        },
      },
    },
  };
  const jobs = ['shop-migrate', 'shop-seed', 'shop-reindex'].map(job);
  const pdbs = ['shop-api', 'shop-web', 'shop-worker', 'shop-db'].map(app => ({
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: app },
    spec: { minAvailable: 1, selector: selector(app) },
  }));
  const hpas = ['shop-api', 'shop-web', 'shop-worker'].map(app => ({
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: app },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: app },
      minReplicas: 2,
      maxReplicas: changed && app === 'shop-worker' ? 12 : 10,
      metrics: [
        {
          type: 'Resource',
          resource: {
            name: 'cpu',
            target: { type: 'Utilization', averageUtilization: 70 },
          },
        },
      ],
    },
  }));
  const policies = [
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'shop-default-deny' },
      spec: { podSelector: {}, policyTypes: ['Ingress'] },
    },
    ...['shop-api', 'shop-db'].map(app => ({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: `${app}-ingress` },
      spec: {
        podSelector: { matchLabels: { app } },
        policyTypes: ['Ingress'],
        ingress: [
          {
            from: [{ podSelector: { matchLabels: { app: 'shop-web' } } }],
            ports: [{ protocol: 'TCP', port: app === 'shop-db' ? 5432 : 8080 }],
          },
        ],
      },
    })),
  ];
  const all = [
    ...configMaps,
    ...secrets,
    ...accounts,
    ...roleObjects,
    ...services,
    ...apps.map((app, i) =>
      deployment(app, changed && i < 2 ? version : '1.0.0'),
    ),
    statefulSet,
    ...jobs,
    ...pdbs,
    ...hpas,
    ...policies,
  ] as KubernetesObject[];
  // The next version drops the last ConfigMap.
  return changed
    ? all.filter(
        o => !(o.kind === 'ConfigMap' && o.metadata?.name === 'shop-config-7'),
      )
    : all;
}

// ---------------------------------------------------------------- the run

function stats(values: number[]) {
  return {
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    max: Math.max(...values),
  };
}

/**
 * Runs `each` on every cluster, `concurrency` clusters at a time, and times each cluster's call;
 * the requests and both processes' CPU are counted over the whole phase.
 */
async function phase(
  sim: SimProcess,
  clusters: Cluster[],
  concurrency: number,
  label: Pick<PhaseStats, 'phase' | 'workload' | 'objects'>,
  each: (cluster: Cluster) => Promise<void>,
): Promise<PhaseStats> {
  const names = clusters.map(c => c.name);
  const requests0 = await sim.requestCounts(names);
  const sim0 = await sim.cpuUsage();
  const cpu0 = process.cpuUsage();
  const limit = pLimit(concurrency);
  const started = performance.now();
  const durations = await Promise.all(
    clusters.map(cluster =>
      limit(async () => {
        const t = performance.now();
        await each(cluster);
        return performance.now() - t;
      }),
    ),
  );
  const wallMs = performance.now() - started;
  const cpu = process.cpuUsage(cpu0);
  const sim1 = await sim.cpuUsage();
  const requests1 = await sim.requestCounts(names);
  const requests = names.reduce(
    (sum, n) => sum + (requests1[n] - requests0[n]),
    0,
  );
  const cpuMs = (u: { user: number; system: number }) =>
    (u.user + u.system) / 1000 / clusters.length;
  return {
    ...label,
    clusters: clusters.length,
    concurrency,
    ...stats(durations),
    wallMs,
    requestsPerCluster: requests / clusters.length,
    fleetCpuMsPerCluster: cpuMs(cpu),
    simCpuMsPerCluster: cpuMs({
      user: sim1.user - sim0.user,
      system: sim1.system - sim0.system,
    }),
  };
}

function countActions(
  into: Record<string, number>,
  changes: readonly ObjectChange[],
) {
  for (const c of changes) into[c.action] = (into[c.action] ?? 0) + 1;
}

export interface ManifestsBenchResult {
  /** The parts, one round per concurrency. */
  rounds: ManifestsRunResult[];
  /** The whole deploy path, when asked for. */
  deploy?: DeployRoundResult;
}

export async function benchManifests(options: {
  clusters: number;
  /** Clusters at once for each measured round (one round per figure, each on fresh namespaces). */
  concurrencies: number[];
  /** Clusters at once of the whole deploy path's round; 0 leaves it out. */
  deployConcurrency: number;
  log: (line: string) => void;
}): Promise<ManifestsBenchResult> {
  return runScoped(() => run(options));
}

async function run(
  options: Parameters<typeof benchManifests>[0],
): Promise<ManifestsBenchResult> {
  const { log } = options;
  const sim = await startSimProcess({
    clusters: options.clusters,
    readyDelayMs: 200,
  });
  // The database only registers the clusters (their records and kubeconfigs); nothing measured
  // reads or writes it.
  const knex = knexFactory({
    client: 'better-sqlite3',
    connection: { filename: ':memory:' },
    useNullAsDefault: true,
    pool: { min: 1, max: 1 },
  });
  const fleet = await createFleet({
    knex,
    kubeconfigDir: sim.kubeconfigDir,
    health: { concurrency: 64 },
  });
  try {
    const cycle = await fleet.worker.runCycle();
    if (cycle.online !== options.clusters)
      throw new Error(`${cycle.online}/${options.clusters} clusters ONLINE`);
    const clusters = (await fleet.stores.clusters.listClusters()).sort((a, b) =>
      a.name.localeCompare(b.name, 'en', { numeric: true }),
    );
    const deploy = readFleetConfig(new ConfigReader({}), {}).deploy;
    const v1 = shopManifests();
    const v2 = shopManifests(true);
    log(
      `  ${
        clusters.length
      } clusters ONLINE (simulator: one process, started in ${ms(
        sim.startMs,
      )}); manifests: ${v1.length} objects (${kindsOf(v1)}), next version ${
        v2.length
      } (5 changed, 1 dropped); generated workload: Deployment, Service, PodDisruptionBudget (3 replicas)`,
    );

    const results: ManifestsRunResult[] = [];
    for (const concurrency of options.concurrencies) {
      // Each round on namespaces of its own (its first apply creates every object), with new
      // appliers: the object applier's API discovery answers are cold, as on a backend's first
      // apply to each cluster; the connections are those the health cycle opened.
      const shopNs = `shop-c${concurrency}`;
      const storefrontNs = `storefront-c${concurrency}`;
      const applier = ManifestApplier.create({ clients: fleet.clients });
      const objectApplier = ObjectSetApplier.create({ clients: fleet.clients });
      const render = (objects: KubernetesObject[], cluster: Cluster) =>
        renderRepositoryObjects(objects, {
          entityRef: SHOP,
          namespace: shopNs,
          cluster,
        });
      const generated = (cluster: Cluster, version: string): Manifests =>
        buildManifests({
          name: 'storefront',
          entityRef: STOREFRONT,
          namespace: storefrontNs,
          spec: {
            image: `registry.example/storefront:${version}`,
            replicas: 3,
          },
          defaultReplicas: deploy.defaultReplicas,
          defaultResources: deploy.defaultResources,
          preStopSleepSeconds: deploy.preStopSleepSeconds,
          serverVersion: cluster.serverVersion,
          progressDeadlineSeconds: Math.max(
            1,
            Math.ceil(deploy.progressDeadlineMs / 1000),
          ),
        });
      // Rendered before the clock starts, as a deploy renders the revision before its apply.
      const shop1 = new Map(clusters.map(c => [c.name, render(v1, c)]));
      const shop2 = new Map(clusters.map(c => [c.name, render(v2, c)]));
      const gen1 = new Map(clusters.map(c => [c.name, generated(c, '1.0.0')]));
      const gen2 = new Map(clusters.map(c => [c.name, generated(c, '1.1.0')]));
      const genObjects = objectsOf(gen1.get(clusters[0].name)!).length;

      // What the deploy's apply does with a component's own objects (`Deployer.applyDesired`).
      const applyShop = async (
        cluster: Cluster,
        previous?: KubernetesObject[],
      ) => {
        const made = await applier.ensureNamespace(cluster, {
          entityRef: SHOP,
          appName: 'shop',
          namespace: shopNs,
        });
        if (made.kind !== 'applied')
          throw new Error(`${cluster.name}: namespace: ${made.message}`);
        const result = await objectApplier.apply(cluster, {
          entityRef: SHOP,
          objects: shop1.get(cluster.name)!,
          previous,
        });
        if (result.kind !== 'applied')
          throw new Error(`${cluster.name}: apply: ${result.message}`);
      };
      const applyGenerated = async (cluster: Cluster) => {
        const result = await applier.apply(
          cluster,
          storefrontNs,
          gen1.get(cluster.name)!,
        );
        if (result.kind !== 'applied')
          throw new Error(
            `${cluster.name}: generated apply: ${result.message}`,
          );
      };
      const actions = {
        manifests: {} as Record<string, number>,
        generated: {} as Record<string, number>,
      };
      const preview = async (
        cluster: Cluster,
        workload: 'manifests' | 'generated',
      ) => {
        const answer =
          workload === 'manifests'
            ? await objectApplier.preview(cluster, {
                entityRef: SHOP,
                objects: shop2.get(cluster.name)!,
                previous: shop1.get(cluster.name)!,
              })
            : await objectApplier.preview(cluster, {
                entityRef: STOREFRONT,
                objects: objectsOf(gen2.get(cluster.name)!),
              });
        if (answer.kind !== 'previewed')
          throw new Error(`${cluster.name}: preview: ${answer.message}`);
        countActions(actions[workload], answer.objects);
      };

      const phases: PhaseStats[] = [];
      const measure = async (
        label: Pick<PhaseStats, 'phase' | 'workload' | 'objects'>,
        each: (cluster: Cluster) => Promise<void>,
      ) => {
        const stats = await phase(sim, clusters, concurrency, label, each);
        phases.push(stats);
        log(
          `    ${`${stats.phase}, ${stats.workload} (${stats.objects})`.padEnd(
            50,
          )} p50 ${ms(stats.p50).padStart(7)}  p95 ${ms(stats.p95).padStart(
            7,
          )}  max ${ms(stats.max).padStart(7)}  all ${ms(stats.wallMs).padStart(
            7,
          )}; ${stats.requestsPerCluster.toFixed(0)} requests, CPU Fleet ${ms(
            stats.fleetCpuMsPerCluster,
          )} + simulator ${ms(stats.simCpuMsPerCluster)} a cluster`,
        );
      };
      log(
        `  ${concurrency} cluster${
          concurrency === 1 ? '' : 's'
        } at a time (namespaces ${shopNs}, ${storefrontNs}):`,
      );
      await measure(
        { phase: FIRST, workload: 'manifests', objects: v1.length },
        cluster => applyShop(cluster),
      );
      await measure(
        { phase: FIRST, workload: 'generated', objects: genObjects },
        applyGenerated,
      );
      // The first apply over objects a create made also hands their fields over from the
      // create's entry to the apply's (`serverSideApply`'s ownership upgrade): a request more per
      // object, once. The re-apply after it is what every later unchanged apply costs.
      for (const name of [SECOND, AGAIN]) {
        await measure(
          { phase: name, workload: 'manifests', objects: v1.length },
          cluster => applyShop(cluster, shop1.get(cluster.name)),
        );
        await measure(
          { phase: name, workload: 'generated', objects: genObjects },
          applyGenerated,
        );
      }
      await measure(
        { phase: PREVIEW, workload: 'manifests', objects: v2.length },
        cluster => preview(cluster, 'manifests'),
      );
      await measure(
        { phase: PREVIEW, workload: 'generated', objects: genObjects },
        cluster => preview(cluster, 'generated'),
      );
      const said = (a: Record<string, number>) =>
        Object.entries(a)
          .map(([k, v]) => `${v} ${k}`)
          .join(', ');
      log(
        `    previews answered, over ${
          clusters.length
        } clusters: manifests ${said(actions.manifests)}; generated ${said(
          actions.generated,
        )}`,
      );
      // Each cluster's preview must have found what changed: else it measured something else.
      const expected = {
        manifests: { update: 5, unchanged: 44, prune: 1 },
        generated: { update: 1, unchanged: 2 },
      };
      for (const workload of ['manifests', 'generated'] as const) {
        for (const [action, count] of Object.entries(expected[workload])) {
          if ((actions[workload][action] ?? 0) !== count * clusters.length)
            throw new Error(
              `the ${workload}' previews answered ${said(
                actions[workload],
              )}, not ${count} ${action} a cluster`,
            );
        }
      }
      results.push({
        clusters: clusters.length,
        concurrency,
        phases,
        previewActions: actions,
        load: loadAverage(),
      });
    }
    const whole =
      options.deployConcurrency > 0
        ? await deployRound({
            fleet,
            clusters,
            concurrency: options.deployConcurrency,
            manifests: { main: v1, next: v2 },
            log,
          })
        : undefined;
    return { rounds: results, deploy: whole };
  } finally {
    fleet.clients.dispose?.();
    await knex.destroy();
    await sim.stop();
  }
}

function kindsOf(objects: KubernetesObject[]): string {
  const counts = new Map<string, number>();
  for (const o of objects) counts.set(o.kind!, (counts.get(o.kind!) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
}

/** The side-by-side table of the summary: per phase, manifests against the generated workload. */
export function manifestsTableRows(results: ManifestsRunResult[]): string[][] {
  const rows: string[][] = [];
  for (const r of results) {
    const byPhase = new Map<string, PhaseStats[]>();
    for (const p of r.phases)
      byPhase.set(p.phase, [...(byPhase.get(p.phase) ?? []), p]);
    for (const [name, [m, g]] of byPhase) {
      const cell = (p: PhaseStats) =>
        `${ms(p.p50)} / ${ms(p.p95)} / ${ms(p.max)}`;
      rows.push([
        String(r.concurrency),
        name,
        cell(m),
        cell(g),
        `${ms(m.p50 / m.objects)} / ${ms(g.p50 / g.objects)}`,
        `${m.requestsPerCluster.toFixed(0)} / ${g.requestsPerCluster.toFixed(
          0,
        )}`,
        `${ms(m.fleetCpuMsPerCluster)} / ${ms(g.fleetCpuMsPerCluster)}`,
        `${ms(m.simCpuMsPerCluster)} / ${ms(g.simCpuMsPerCluster)}`,
        `${ms(m.wallMs)} / ${ms(g.wallMs)}`,
      ]);
    }
  }
  return rows;
}

export const MANIFESTS_TABLE_HEADER = [
  'clusters at once',
  'per cluster',
  '50 own objects: p50 / p95 / max',
  'generated (3): p50 / p95 / max',
  'p50 / object (own / gen.)',
  'requests a cluster',
  'Fleet CPU a cluster',
  'simulator CPU a cluster',
  `all clusters, wall`,
];

/** The whole deploy path's figures, as the summary prints them. */
export function manifestsDeploySummary(d: DeployRoundResult): string {
  const rows = d.phases.map(p => [
    p.phase,
    p.workload,
    `${ms(p.p50)} / ${ms(p.p95)} / ${ms(p.max)}`,
    ms(p.wallMs),
  ]);
  for (const p of d.previews) {
    rows.push([
      'preview() of the next version, one call',
      p.workload,
      '',
      ms(p.wallMs),
    ]);
  }
  return [
    `the whole deploy path (DeploymentService, manifests read from a Git host), ${
      d.concurrency
    } cluster${d.concurrency === 1 ? '' : 's'} at a time:`,
    table(
      ['deploy()', 'workload', 'per cluster p50 / p95 / max', 'all clusters'],
      rows,
    ),
  ].join('\n');
}
