/**
 * The options of a KubeSimulator, their checks, and the shapes its library API takes.
 */
import { isDns1123Label } from './metaValidation';
import { KNOWN_CRDS } from './resources';
import { DEFAULT_WATCH_SETTINGS, WatchSettings } from './watch';

/** A change made behind Fleet's back: a JSON merge patch, or a deletion. */
export interface DriftChange {
  kind: string;
  namespace?: string;
  name: string;
  patch?: Record<string, unknown>;
  delete?: boolean;
}

export interface KubeSimulatorOptions {
  /** N → clusters 'sim-1'...'sim-N'; or explicit DNS-1123 label names. */
  clusters: number | string[];
  /** Where kubeconfigs are written (default: a fresh temporary directory, removed by stop()). */
  outDir?: string;
  /** Default 0: a random free port. The listener binds 127.0.0.1 only. */
  port?: number;
  /** Delay before a Deployment's replicas become available (default 200 ms). */
  readyDelayMs?: number;
  /**
   * The clock every cluster's controllers read (default `Date.now`): ready delays, a
   * LoadBalancer's or an Ingress's address, a Job's run, timestamps. A test moves it on instead
   * of sleeping, so that a loaded machine cannot make "not ready yet" ready.
   */
  now?: () => number;
  /**
   * Default true: HTTP/2 is offered by ALPN beside HTTP/1.1, as kube-apiserver does. False
   * serves HTTP/1.1 only, as an API server behind a proxy that speaks only 1.1.
   */
  http2?: boolean;
  /**
   * Installed CRDs per cluster, replacing that cluster's default
   * (`['rollouts.argoproj.io']`): e.g. `{ 'sim-2': [], 'sim-3':
   * ['rollouts.argoproj.io', 'virtualservices.networking.istio.io'] }`.
   * Names: 'rollouts.argoproj.io', 'virtualservices.networking.istio.io',
   * 'httproutes.gateway.networking.k8s.io'.
   */
  crds?: Record<string, string[]>;
  /**
   * The Kubernetes version a cluster serves (`GET /version`), per cluster: e.g. `{ 'sim-2':
   * 'v1.29.4' }`; the others serve v1.30.0. Below 1.30 a pod's `sleep` lifecycle handler is
   * refused, as such a server does.
   */
  serverVersions?: Record<string, string>;
  /** Starts the Prometheus query endpoint on a random free port (see `prometheusUrl`). */
  prometheus?: boolean;
  /** Starts the Prometheus query endpoint on this port (0: a random free port). */
  prometheusPort?: number;
  /**
   * One of `clusters` that is also served at the listener's root (`https://127.0.0.1:PORT/api`),
   * as a real API server is: what in-cluster config (`KUBERNETES_SERVICE_HOST`/`PORT`, no
   * path) reaches. Its control API stays under `/clusters/<name>/_sim`.
   */
  rootCluster?: string;
  /** Watch tuning (tests shorten the server's timers); see `WatchOptions`. */
  watch?: WatchOptions;
}

/** Watch settings; every field is optional and defaults to the API server's behaviour. */
export interface WatchOptions extends Partial<WatchSettings> {
  /**
   * Changes kept per cluster for watches that resume from a resourceVersion (default 1,000):
   * a watch from an older one gets 410 Expired, as after an etcd compaction.
   */
  historyLimit?: number;
}

/** CRDs a cluster has unless told otherwise. */
export const DEFAULT_CRDS: readonly string[] = ['rollouts.argoproj.io'];

const DEFAULT_READY_DELAY_MS = 200;

/** The cluster names, port, readiness delay and clock of `options`, checked before any start. */
export function checkStartOptions(options: KubeSimulatorOptions) {
  const names = resolveNames(options.clusters).map(checkClusterName);
  if (new Set(names).size !== names.length)
    throw new Error('cluster names must be unique');
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`port must be an integer between 0 and 65535, got ${port}`);
  }
  const readyDelayMs = options.readyDelayMs ?? DEFAULT_READY_DELAY_MS;
  if (
    typeof readyDelayMs !== 'number' ||
    !Number.isFinite(readyDelayMs) ||
    readyDelayMs < 0
  ) {
    throw new Error(
      `readyDelayMs must be a non-negative number, got ${readyDelayMs}`,
    );
  }
  const now = options.now ?? Date.now;
  if (typeof now !== 'function')
    throw new Error('now must be a function answering milliseconds');
  return { names, port, readyDelayMs, now };
}

/** The watch settings of `options` (defaults for the rest), and the history limit if set. */
export function checkWatchOptions(options: WatchOptions): {
  settings: WatchSettings;
  historyLimit?: number;
} {
  const { historyLimit, ...settings } = options;
  for (const [key, value] of Object.entries(settings)) {
    if (!(key in DEFAULT_WATCH_SETTINGS))
      throw new Error(`unknown watch option ${key}`);
    if (
      value !== undefined &&
      (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    )
      throw new Error(`watch.${key} must be a positive number, got ${value}`);
  }
  if (
    historyLimit !== undefined &&
    (!Number.isInteger(historyLimit) || historyLimit < 1)
  )
    throw new Error(
      `watch.historyLimit must be a positive integer, got ${historyLimit}`,
    );
  return {
    settings: {
      ...DEFAULT_WATCH_SETTINGS,
      ...Object.fromEntries(
        Object.entries(settings).filter(([, v]) => v !== undefined),
      ),
    },
    historyLimit,
  };
}

export function resolveNames(clusters: number | string[]): string[] {
  if (typeof clusters === 'number') {
    if (!Number.isInteger(clusters) || clusters < 0 || clusters > 10000) {
      throw new Error(
        `clusters must be an integer between 0 and 10000, got ${clusters}`,
      );
    }
    return Array.from({ length: clusters }, (_, i) => `sim-${i + 1}`);
  }
  if (!Array.isArray(clusters))
    throw new Error('clusters must be a number or an array of names');
  return [...clusters];
}

export function checkCrd(name: unknown): string {
  if (!(KNOWN_CRDS as readonly unknown[]).includes(name)) {
    throw new Error(
      `unknown CRD ${JSON.stringify(name)}: expected one of ${KNOWN_CRDS.join(
        ', ',
      )}`,
    );
  }
  return name as string;
}

export function checkClusterName(name: unknown): string {
  if (typeof name !== 'string' || !isDns1123Label(name)) {
    throw new Error(
      `invalid cluster name ${JSON.stringify(name)}: must be a DNS-1123 label`,
    );
  }
  return name;
}
