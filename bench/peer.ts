/*
 * Fleet's entity card beside its peer, Backstage's Kubernetes plugin, in one backend (one
 * portal) over the same fleet: the Kubernetes plugin installed as Fleet's portal installs it
 * (`@backstage/plugin-kubernetes-backend` fed with Fleet's clusters by
 * `plugins/kubernetes-backend-module-fleet`, the `kubernetes` section of app-config.yaml) and the
 * catalog backend holding the component. One component deployed on every cluster (Fleet's
 * generated workload, 3 replicas, applied as Fleet's deploy applies it, so that every cluster
 * has its Deployment, ReplicaSet and pods labelled `backstage.io/kubernetes-id`).
 *
 * One page view of each, alternating, one at a time: the Kubernetes tab's
 * `POST /api/kubernetes/services/:id` with `{ entity }` (the catalog's entity, as the tab sends
 * it), which asks every cluster for every object type; and one load of Fleet's deployments card
 * (its own code: FleetClient and loadDeploymentsCard), which reads Fleet's database. Then the same
 * with 10 % of the clusters hanging (the simulator's `timeout` fault: the connection is accepted,
 * no answer comes) right after the fault is set, before any health cycle: Fleet has not yet
 * found them OFFLINE, so the module still gives them to the Kubernetes plugin. Every page view is
 * bounded on the client side (`boundMs`): one that has not answered by then is recorded as such.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { parse, stringify } from 'yaml';
import {
  createTempDatabase,
  loadAverage,
  median,
  ms,
  percentile,
  processCpuSeconds,
  startBackendProcess,
  startSimProcess,
  table,
} from '@cnp/fleet-harness';
import { FleetClient } from '../plugins/fleet/src/api/FleetClient';
import { loadDeploymentsCard } from '../plugins/fleet/src/components/EntityFleetDeploymentsCard/loadDeploymentsCard';
import { seedFleetDeployments } from './lib/seedDeployments';
import { waitFor, waitForStartupCycle } from './lib/waitFor';

/** One page view: the peer's one request, or the card's requests of one load. */
export interface PeerSample {
  /** Until the answer (the last one, for the card), or the bound when none came. */
  ms: number;
  /** False when it had not answered within the bound. */
  answered: boolean;
  /** An answer that was not the component's (an HTTP error, a wrong count). */
  error?: string;
  requests: number;
  /** JSON bodies, bytes (summed over the card's requests). */
  jsonBytes: number;
  /** The same bodies gzipped: about what a browser asking for gzip downloads. */
  gzipBytes: number;
  /**
   * Backend CPU over the page view (from /proc, 10 ms ticks), ms: with the backend's own
   * background work over that time (see {@link PeerResult.idleCpuMsPerS}).
   */
  backendCpuMs: number;
  /** The clusters' side (the simulator process, every API server): CPU, ms, and requests. */
  clusterCpuMs: number;
  clusterRequests: number;
  /** Peer: clusters whose answer holds the component's pods, clusters that answered an error. */
  clustersWithPods?: number;
  clusterErrors?: number;
  /** Peer: one cluster's error, as the plugin answered it. */
  clusterError?: string;
  pods?: number;
}

export interface PeerSide {
  samples: PeerSample[];
  answered: number;
  /** Percentiles over every page view; one that did not answer counts as never (Infinity). */
  p50: number;
  p95: number;
  max: number;
  jsonBytes: number;
  gzipBytes: number;
  requests: number;
  backendCpuMs: number;
  clusterCpuMs: number;
  clusterRequests: number;
}

export interface PeerPhase {
  label: string;
  hanging: number;
  /** Fleet's view of the clusters at the end of the phase. */
  fleetStatuses: Record<string, number>;
  /** Clusters the Kubernetes plugin is given (`GET /api/kubernetes/clusters`) at the end. */
  pluginClusters: number;
  peer: PeerSide;
  card: PeerSide;
}

export interface PeerResult {
  clusters: number;
  podsPerCluster: number;
  requests: number;
  faultRequests: number;
  boundMs: number;
  /** Backend CPU while no page view runs (its scheduler, the catalog's processing loop), ms/s. */
  idleCpuMsPerS: number;
  phases: PeerPhase[];
}

const ENTITY_NAME = 'service-1';
const ENTITY_REF = `component:default/${ENTITY_NAME}`;

/** The `kubernetes` section of Fleet's portal (app-config.yaml), as the portal runs the plugin. */
function portalKubernetesConfig(): Record<string, unknown> {
  const file = path.join(__dirname, '..', 'app-config.yaml');
  const config = parse(readFileSync(file, 'utf8')) as {
    kubernetes?: Record<string, unknown>;
  };
  if (!config.kubernetes) throw new Error(`${file} has no kubernetes section`);
  return config.kubernetes;
}

function side(samples: PeerSample[]): PeerSide {
  const times = samples.map(s => (s.answered ? s.ms : Infinity));
  const answered = samples.filter(s => s.answered);
  const med = (f: (s: PeerSample) => number) =>
    answered.length ? median(answered.map(f)) : NaN;
  return {
    samples,
    answered: answered.length,
    p50: percentile(times, 50),
    p95: percentile(times, 95),
    max: Math.max(...times),
    jsonBytes: med(s => s.jsonBytes),
    gzipBytes: med(s => s.gzipBytes),
    requests: median(samples.map(s => s.requests)),
    backendCpuMs: median(samples.map(s => s.backendCpuMs)),
    clusterCpuMs: median(samples.map(s => s.clusterCpuMs)),
    clusterRequests: median(samples.map(s => s.clusterRequests)),
  };
}

/** A latency, or "no answer within the bound". */
export function peerMs(value: number, boundMs: number): string {
  return Number.isFinite(value) ? ms(value) : `no answer within ${ms(boundMs)}`;
}

export async function benchPeer(options: {
  clusters: number;
  requests: number;
  faultRequests: number;
  boundMs: number;
  hangingFraction: number;
  basePort?: number;
  log: (line: string) => void;
}): Promise<PeerResult> {
  const { log, boundMs } = options;
  const db = await createTempDatabase('fleet_bench');
  const sim = await startSimProcess({
    clusters: options.clusters,
    port: options.basePort,
    // As in the card benchmark: the simulator's controllers would take a share of the 2 cores
    // at 1,000 watched clusters; the seeded workloads are ready before the backend starts.
    watch: { controllerTickMs: 30_000 },
  });
  const dir = mkdtempSync(path.join(tmpdir(), 'fleet-bench-peer-'));
  const token = randomBytes(24).toString('hex');
  let backend: Awaited<ReturnType<typeof startBackendProcess>> | undefined;
  try {
    const knex = db.knex();
    // One application on every cluster.
    await seedFleetDeployments({
      knex,
      kubeconfigDir: sim.kubeconfigDir,
      clusterNames: sim.names,
      applications: 1,
      deploymentsPerApplication: options.clusters,
      allDeployed: true,
      // Every cluster with the component's objects, however loaded the machine.
      registerProbeTimeoutMs: 30_000,
      log,
    });
    const catalogFile = path.join(dir, 'catalog.yaml');
    writeFileSync(
      catalogFile,
      stringify({
        apiVersion: 'backstage.io/v1alpha1',
        kind: 'Component',
        metadata: {
          name: ENTITY_NAME,
          annotations: { 'backstage.io/kubernetes-id': ENTITY_NAME },
        },
        spec: { type: 'service', lifecycle: 'production', owner: 'team-a' },
      }),
    );
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
      FLEET_BENCH_CATALOG_FILE: catalogFile,
      FLEET_BENCH_CONFIG: JSON.stringify({
        kubernetes: portalKubernetesConfig(),
      }),
      FLEET_BENCH_FEATURES: JSON.stringify([
        '@backstage/plugin-kubernetes-backend',
        '@cnp/plugin-kubernetes-backend-module-fleet',
      ]),
      LOG_LEVEL: process.env.FLEET_BENCH_VERBOSE ? 'info' : 'error',
      ...(options.basePort
        ? { FLEET_BENCH_PORT: String(options.basePort + 1) }
        : {}),
    });
    const ready = backend;
    log(
      `  backend (Fleet, the catalog, the Kubernetes plugin with Fleet's module) started in ${ms(
        ready.startMs,
      )}`,
    );
    const cycle = await waitForStartupCycle(
      knex,
      startedAt,
      Math.max(300_000, options.clusters * 60),
    );
    log(
      `  startup health cycle over ${cycle.probed} clusters: ${ms(
        cycle.durationMs,
      )} (${cycle.online} ONLINE)`,
    );
    const root = `http://127.0.0.1:${ready.port}/api`;
    const headers = { Authorization: `Bearer ${token}` };
    const entity = await waitFor(
      'the catalog to hold the component',
      async () => {
        const res = await fetch(
          `${root}/catalog/entities/by-name/component/default/${ENTITY_NAME}`,
          { headers },
        );
        return res.ok ? ((await res.json()) as object) : undefined;
      },
      120_000,
      500,
    );

    type Measured = 'ms' | 'answered' | 'backendCpuMs' | 'clusterCpuMs';
    const clusterRequests = async () =>
      Object.values(await sim.requestCounts()).reduce((a, b) => a + b, 0);
    const clusterCpuMs = async () => {
      const u = await sim.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    const timed = async (
      work: (
        signal: AbortSignal,
      ) => Promise<Omit<PeerSample, Measured | 'clusterRequests'>>,
      bound = boundMs,
    ): Promise<PeerSample> => {
      const signal = AbortSignal.timeout(bound);
      const requests0 = await clusterRequests();
      const simCpu0 = await clusterCpuMs();
      const cpu0 = await processCpuSeconds(ready.pid);
      const t = performance.now();
      let sample: PeerSample;
      try {
        const done = await work(signal);
        sample = {
          ...done,
          ms: performance.now() - t,
          answered: !signal.aborted,
          backendCpuMs: 0,
          clusterCpuMs: 0,
          clusterRequests: 0,
        };
      } catch (error) {
        const answered = !signal.aborted;
        sample = {
          ms: answered ? performance.now() - t : bound,
          answered,
          error: answered ? String(error) : undefined,
          requests: 1,
          jsonBytes: 0,
          gzipBytes: 0,
          backendCpuMs: 0,
          clusterCpuMs: 0,
          clusterRequests: 0,
        };
      }
      sample.backendCpuMs =
        ((await processCpuSeconds(ready.pid)) - cpu0) * 1000;
      sample.clusterCpuMs = (await clusterCpuMs()) - simCpu0;
      sample.clusterRequests = (await clusterRequests()) - requests0;
      return sample;
    };

    // The Kubernetes tab's request: every cluster, every object type of the config.
    const peerView = (bound?: number) =>
      timed(async signal => {
        const res = await fetch(`${root}/kubernetes/services/${ENTITY_NAME}`, {
          method: 'POST',
          headers: { ...headers, 'Content-Type': 'application/json' },
          body: JSON.stringify({ entity }),
          signal,
        });
        const body = Buffer.from(await res.arrayBuffer());
        const sizes = {
          requests: 1,
          jsonBytes: body.length,
          gzipBytes: gzipSync(body).length,
        };
        if (res.status !== 200)
          return {
            ...sizes,
            error: `${res.status} ${body.toString().slice(0, 200)}`,
          };
        const items: Array<{
          errors: unknown[];
          resources: Array<{ type: string; resources: unknown[] }>;
        }> = JSON.parse(body.toString()).items;
        const podsOf = (item: (typeof items)[number]) =>
          item.resources.find(r => r.type === 'pods')?.resources.length ?? 0;
        const clustersWithPods = items.filter(i => podsOf(i) > 0).length;
        return {
          ...sizes,
          clustersWithPods,
          clusterErrors: items.filter(i => i.errors.length > 0).length,
          clusterError: JSON.stringify(
            items.find(i => i.errors.length > 0)?.errors[0],
          )?.slice(0, 300),
          pods: items.reduce((sum, i) => sum + podsOf(i), 0),
        };
      }, bound);

    // One load of Fleet's card, by the card's own code.
    const cardView = () =>
      timed(async signal => {
        let requests = 0;
        let jsonBytes = 0;
        let gzipBytes = 0;
        const client = new FleetClient({
          discoveryApi: { getBaseUrl: async () => `${root}/fleet` },
          fetchApi: {
            fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
              const res = await fetch(input, {
                ...init,
                headers: { ...init?.headers, ...headers },
                signal,
              });
              const body = Buffer.from(await res.arrayBuffer());
              requests += 1;
              jsonBytes += body.length;
              gzipBytes += gzipSync(body).length;
              return new Response(body, {
                status: res.status,
                headers: res.headers,
              });
            },
          },
        });
        const card = await loadDeploymentsCard(client, {
          entityRef: ENTITY_REF,
          named: [],
        });
        const error =
          card.deployments.length !== options.clusters ||
          card.clusters.length !== options.clusters
            ? `${card.deployments.length} deployments, ${card.clusters.length} clusters`
            : card.releasesError;
        return { requests, jsonBytes, gzipBytes, ...(error ? { error } : {}) };
      });

    // Warm-up, not counted: the plugin's first cluster list and connections, the card's.
    // The first view opens a connection to every cluster: bounded to 5 minutes.
    const first = await peerView(Math.max(boundMs, 300_000));
    const firstCard = await cardView();
    if (
      !first.answered ||
      first.error ||
      (first.clustersWithPods ?? 0) + (first.clusterErrors ?? 0) <
        options.clusters ||
      firstCard.error
    )
      throw new Error(
        `warm-up: the Kubernetes plugin ${
          first.answered
            ? first.error ??
              `found the component's pods on ${first.clustersWithPods} of ${options.clusters} clusters and errors on ${first.clusterErrors}: objects missing`
            : 'did not answer'
        }; the card ${firstCard.error ?? 'answered'}`,
      );
    const podsPerCluster =
      (first.pods ?? 0) / Math.max(1, first.clustersWithPods ?? 0);
    log(
      `  warm-up (not counted): the Kubernetes plugin ${ms(first.ms)}, ${
        first.clustersWithPods
      } clusters with the component's pods, ${first.pods} pods, ${
        first.clusterErrors
      } clusters answering an error${
        first.clusterError ? ` (e.g. ${first.clusterError})` : ''
      }; the card ${ms(firstCard.ms)}`,
    );

    const idleCpu0 = await processCpuSeconds(ready.pid);
    await new Promise(r => setTimeout(r, 10_000));
    const idleCpuMsPerS =
      ((await processCpuSeconds(ready.pid)) - idleCpu0) * 100;
    log(
      `  backend CPU with no page view (scheduler, catalog processing): ${idleCpuMsPerS.toFixed(
        0,
      )} ms/s over 10 s`,
    );

    const fleetStatuses = async () =>
      Object.fromEntries(
        (
          await knex('fleet_clusters')
            .select('status')
            .count({ n: '*' })
            .groupBy('status')
        ).map((r: any) => [r.status as string, Number(r.n)]),
      );
    const pluginClusters = async () => {
      const res = await fetch(`${root}/kubernetes/clusters`, { headers });
      return res.ok
        ? ((await res.json()) as { items: unknown[] }).items.length
        : -1;
    };
    const phase = async (
      label: string,
      hanging: number,
      requests: number,
    ): Promise<PeerPhase> => {
      const peer: PeerSample[] = [];
      const card: PeerSample[] = [];
      for (let i = 0; i < requests; i++) {
        peer.push(await peerView());
        card.push(await cardView());
      }
      const result: PeerPhase = {
        label,
        hanging,
        fleetStatuses: await fleetStatuses(),
        pluginClusters: await pluginClusters(),
        peer: side(peer),
        card: side(card),
      };
      for (const [name, s] of [
        ['Kubernetes plugin, POST /kubernetes/services/:id', result.peer],
        ["Fleet's card (its requests of one load)", result.card],
      ] as const) {
        const errors = s.samples.filter(x => x.error);
        log(
          `    ${name}: ${s.answered} of ${
            s.samples.length
          } answered within ${ms(boundMs)}; p50 ${peerMs(
            s.p50,
            boundMs,
          )}, p95 ${peerMs(s.p95, boundMs)}, max ${peerMs(s.max, boundMs)}; ${
            s.requests
          } request(s), ${(s.jsonBytes / 1024).toFixed(1)} KiB of JSON, ${(
            s.gzipBytes / 1024
          ).toFixed(1)} KiB gzipped; backend CPU ${ms(
            s.backendCpuMs,
          )} a view; the clusters: ${s.clusterRequests} requests, CPU ${ms(
            s.clusterCpuMs,
          )} a view${
            errors.length
              ? `; ${errors.length} wrong answers, e.g. ${errors[0].error}`
              : ''
          }`,
        );
      }
      const withPods = result.peer.samples.filter(s => s.answered);
      if (withPods.length)
        log(
          `    the Kubernetes plugin's answers: ${median(
            withPods.map(s => s.clustersWithPods ?? 0),
          )} clusters with the component's pods, ${median(
            withPods.map(s => s.clusterErrors ?? 0),
          )} clusters answering an error (medians)${
            withPods.find(s => s.clusterError)
              ? `, e.g. ${withPods.find(s => s.clusterError)!.clusterError}`
              : ''
          }`,
        );
      log(
        `    at the end: Fleet's clusters ${JSON.stringify(
          result.fleetStatuses,
        )}; the Kubernetes plugin is given ${
          result.pluginClusters
        }; load ${loadAverage()}`,
      );
      return result;
    };

    const phases: PeerPhase[] = [];
    log(`  -- every cluster answering: ${options.requests} page views of each`);
    phases.push(await phase('every cluster answering', 0, options.requests));
    const step = Math.round(1 / options.hangingFraction);
    const hanging = sim.names.filter((_, i) => (i + 1) % step === 0);
    await sim.setFault(hanging, { mode: 'timeout' });
    log(
      `  -- ${hanging.length} clusters hanging (timeout fault set just now, no health cycle since): ${options.faultRequests} page views of each`,
    );
    phases.push(
      await phase(
        `${hanging.length} clusters hanging, before Fleet finds them OFFLINE`,
        hanging.length,
        options.faultRequests,
      ),
    );
    return {
      clusters: options.clusters,
      podsPerCluster,
      requests: options.requests,
      faultRequests: options.faultRequests,
      boundMs,
      idleCpuMsPerS,
      phases,
    };
  } finally {
    await backend?.stop();
    await sim.stop();
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The summary table of the run. */
export function peerSummary(result: PeerResult): string {
  const kib = (bytes: number) =>
    Number.isFinite(bytes) ? `${(bytes / 1024).toFixed(1)} KiB` : 'n/a';
  const rows = result.phases.flatMap(p =>
    (
      [
        ['Kubernetes plugin: POST /kubernetes/services/:id', p.peer],
        ["Fleet's card: one load", p.card],
      ] as const
    ).map(([name, s]) => [
      p.hanging ? `${p.hanging} hanging` : 'none',
      name,
      `${s.answered} / ${s.samples.length}`,
      peerMs(s.p50, result.boundMs),
      peerMs(s.p95, result.boundMs),
      peerMs(s.max, result.boundMs),
      String(s.requests),
      kib(s.jsonBytes),
      kib(s.gzipBytes),
      ms(s.backendCpuMs),
      String(s.clusterRequests),
      ms(s.clusterCpuMs),
    ]),
  );
  return [
    `Fleet's card beside the Kubernetes plugin, ${result.clusters} clusters, ${
      result.podsPerCluster
    } pods per cluster, bound ${ms(
      result.boundMs,
    )} a page view; backend CPU with no page view ${result.idleCpuMsPerS.toFixed(
      0,
    )} ms/s:`,
    table(
      [
        'clusters hanging',
        'page view',
        'answered',
        'p50',
        'p95',
        'max',
        'requests',
        'JSON',
        'gzipped',
        'backend CPU',
        'cluster requests',
        'clusters CPU',
      ],
      rows,
    ),
  ].join('\n');
}
