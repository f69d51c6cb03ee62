import { configGroupRef } from '../catalog/entityRefs';
import {
  readProjects,
  SYSTEM_NAMESPACES,
  type FleetProject,
} from '../tenancy/projects';
import { Config, ConfigReader } from '@backstage/config';
import { KubeconfigAccessPolicy } from '@cnp/plugin-fleet-node';
import { parseLabelSelector } from '../kubernetes/labelSelector';
import { readAllowedAddresses } from './prometheusAddresses';
import { readDefaultResources } from './defaultResources';
import { readFreezeWindows } from './freezeWindowsConfig';
import type { FreezeWindowSpec } from '../stages/freezeWindows';
import {
  DNS1123_LABEL,
  durationMsFromConfig,
  integerFromConfig,
  nonEmpty,
  positiveIntegerFromEnv,
} from './configValues';

/**
 * Fleet's settings, read once at startup from `fleet.*` config and the environment variables
 * of the original design, which win over the config file.
 */
export interface FleetConfig {
  discovery: {
    kubeconfigPath?: string;
    kubeconfigDir?: string;
    allowedKubeconfigDirs: string[];
    /** Whether a manual cluster's kubeconfig may run an `exec` credential plugin (default no). */
    allowExecForManual: boolean;
    /** Secrets on the hub cluster with these labels hold kubeconfigs to discover. */
    secretSelector?: string;
    /** Where those Secrets are listed (default: every namespace). */
    secretNamespace?: string;
  };
  /**
   * The hub: the cluster Fleet reads kubeconfig Secrets from (`secret:<namespace>/<name>`
   * references), and in-cluster, the cluster the backend runs in.
   */
  hub: {
    /** A kubeconfig file for the hub. */
    kubeconfigPath?: string;
    /** Its context (default: its current context). */
    context?: string;
    /**
     * Whether the backend uses in-cluster config (service account) for the hub: true when
     * `KUBERNETES_SERVICE_HOST` is set and no kubeconfig is configured, unless set.
     */
    inCluster: boolean;
    /** The name under which the cluster the backend runs in is registered (default in-cluster). */
    inClusterName: string;
    /** Whether that cluster is registered at all (default true). */
    registerInCluster: boolean;
    /** Prefix before /var/run/secrets/kubernetes.io/serviceaccount (default none). */
    serviceAccountPathPrefix: string;
  };
  clusters: {
    /** The most clusters `POST /clusters` registers by hand (default 1,000). */
    maxManual: number;
  };
  health: {
    intervalMs: number;
    failureThreshold: number;
    /** How long an outage must last, since its first failed probe, to be confirmed. */
    minOutageMs: number;
    /** Manual runs (`POST /health/run`) closer than this to the last cycle answer its summary. */
    manualMinIntervalMs: number;
    recoveryThreshold: number;
    probeTimeoutMs: number;
    concurrency: number;
    massOutage: { minClusters: number; fraction: number };
    /**
     * Set when `health.shards` is above 1: the clusters are split into that many shards, each
     * a lease that replicas claim and hold `leaseMs` at a time. Unset: one lease, one replica
     * probes every cluster per cycle.
     */
    sharding?: { shards: number; leaseMs: number };
  };
  reconcile: {
    intervalMs: number;
    concurrency: number;
    /** Live state from watches on the ONLINE clusters (false: every run reads every deployment). */
    watch: boolean;
    /** With watches, how often a run still compares every deployment. */
    resyncIntervalMs: number;
  };
  /** What each team's components may touch (the built-in `default` project when none is set). */
  projects: FleetProject[];
  deploy: {
    namespace: string;
    defaultReplicas: number;
    progressDeadlineMs: number;
    pollIntervalMs: number;
    /** A revision that fails within this long of its apply is rolled back automatically. */
    rollbackWindowMs: number;
    /** Namespaces an application may not deploy to. */
    forbiddenNamespaces: string[];
    /** Requests and limits for each resource an application sets none for. */
    defaultResources?: {
      requests?: Record<string, string>;
      limits?: Record<string, string>;
    };
    /** The preStop sleep of every container, in seconds (0: none). */
    preStopSleepSeconds?: number;
  };
  events: {
    /** Events older than this are removed by the daily retention task. */
    retentionMs: number;
  };
  database: {
    /** Hot reads use named prepared statements on PostgreSQL (off for an old PgBouncer). */
    preparedStatements: boolean;
  };
  signals: {
    /** Whether status changes are published as Backstage signals (default true). */
    enabled: boolean;
  };
  analysis: {
    prometheus: {
      /**
       * The Prometheus servers a release's analysis may query, normalised base URLs. Empty (the
       * default): no release with an analysis is accepted.
       */
      allowedAddresses: string[];
    };
  };
  release: {
    /** When releases to some clusters wait (`fleet.release.freezeWindows`; default none). */
    freezeWindows: FreezeWindowSpec[];
  };
  notifications: {
    /** Whether Fleet sends Backstage notifications (default true). */
    enabled: boolean;
    /** Who hears about clusters going OFFLINE and mass outages: full entity refs. */
    clusterAdmins: string[];
    /** The catalog namespace of the cluster entities, for the links. */
    clusterNamespace: string;
  };
}

/**
 * Reads and validates Fleet's configuration. A nonsense value stops the backend at startup with
 * a message naming the variable, instead of running with it.
 */
export function readFleetConfig(
  rootConfig: Config,
  env: NodeJS.ProcessEnv = process.env,
): FleetConfig {
  const config = rootConfig.getOptionalConfig('fleet') ?? new ConfigReader({});
  return readFleetSection(config, env);
}

function readFleetSection(config: Config, env: NodeJS.ProcessEnv): FleetConfig {
  const envNamespace = env.K8S_TARGET_NAMESPACE?.trim();
  if (
    envNamespace !== undefined &&
    envNamespace !== '' &&
    !DNS1123_LABEL.test(envNamespace)
  ) {
    throw new Error(
      `Invalid environment variable K8S_TARGET_NAMESPACE='${envNamespace}': expected a DNS-1123 label (lower case letters, digits and '-', at most 63 characters)`,
    );
  }
  const namespace =
    envNamespace || config.getOptionalString('deploy.namespace') || 'default';
  if (!DNS1123_LABEL.test(namespace) || namespace.length > 63) {
    throw new Error(
      `Invalid config value fleet.deploy.namespace='${namespace}': expected a DNS-1123 label`,
    );
  }

  const discovery = readDiscovery(config, env);
  return {
    discovery,
    hub: readHub(config, env, discovery),
    clusters: {
      maxManual: integerFromConfig(config, 'clusters.maxManual', 1000, {
        min: 0,
        max: 1_000_000,
      }),
    },
    health: readHealth(config, env),
    reconcile: {
      intervalMs: durationMsFromConfig(config, 'reconcile.interval', {
        seconds: 60,
      }),
      concurrency: integerFromConfig(config, 'reconcile.concurrency', 8, {
        max: 1000,
      }),
      watch: config.getOptionalBoolean('reconcile.watch') ?? true,
      resyncIntervalMs: durationMsFromConfig(
        config,
        'reconcile.resyncInterval',
        { minutes: 10 },
      ),
    },
    projects: readProjects(config, namespace),
    deploy: readDeploy(config, namespace),
    events: {
      retentionMs: durationMsFromConfig(config, 'events.retention', {
        days: 90,
      }),
    },
    database: {
      preparedStatements:
        config.getOptionalBoolean('database.preparedStatements') ?? true,
    },
    signals: {
      enabled: config.getOptionalBoolean('signals.enabled') ?? true,
    },
    analysis: {
      prometheus: {
        allowedAddresses: readAllowedAddresses(
          config.getOptionalStringArray(
            'analysis.prometheus.allowedAddresses',
          ) ?? [],
        ),
      },
    },
    release: { freezeWindows: readFreezeWindows(config) },
    notifications: {
      enabled: config.getOptionalBoolean('notifications.enabled') ?? true,
      clusterAdmins: (
        config.getOptionalStringArray('notifications.clusterAdmins') ??
        config.getOptionalStringArray('permissions.clusterAdmins') ??
        []
      ).map(ref => configGroupRef(ref, 'fleet.notifications.clusterAdmins')),
      clusterNamespace:
        config.getOptionalString('catalog.namespace') ?? 'default',
    },
  };
}

function readHealth(
  config: Config,
  env: NodeJS.ProcessEnv,
): FleetConfig['health'] {
  const intervalSeconds = positiveIntegerFromEnv(
    env,
    'CLUSTER_HEALTH_INTERVAL',
    {
      max: 7 * 24 * 3600,
    },
  );
  const failureThreshold =
    positiveIntegerFromEnv(env, 'CLUSTER_HEALTH_FAILURE_THRESHOLD', {
      max: 100,
    }) ?? integerFromConfig(config, 'health.failureThreshold', 2, { max: 100 });

  const fraction =
    config.getOptionalNumber('health.massOutage.fraction') ?? 0.55;
  if (!(fraction > 0 && fraction <= 1)) {
    throw new Error(
      `Invalid config value fleet.health.massOutage.fraction=${fraction}: expected a number in (0, 1]`,
    );
  }

  const healthIntervalMs =
    intervalSeconds !== undefined
      ? intervalSeconds * 1000
      : durationMsFromConfig(config, 'health.interval', { seconds: 300 });

  const shards = integerFromConfig(config, 'health.shards', 1, { max: 1024 });
  const shardLeaseMs = durationMsFromConfig(config, 'health.shardLease', {
    seconds: 30,
  });
  // Each replica renews its shards every third of a lease: below a second, that is a stream of
  // database writes.
  if (shardLeaseMs < 1000) {
    throw new Error(
      'Invalid config value fleet.health.shardLease: at least 1 second',
    );
  }

  return {
    intervalMs: healthIntervalMs,
    failureThreshold,
    minOutageMs: durationMsFromConfig(
      config,
      'health.minOutage',
      { milliseconds: healthIntervalMs },
      { allowZero: true },
    ),
    manualMinIntervalMs: durationMsFromConfig(
      config,
      'health.manualMinInterval',
      { seconds: 10 },
      { allowZero: true },
    ),
    recoveryThreshold: integerFromConfig(
      config,
      'health.recoveryThreshold',
      1,
      { max: 100 },
    ),
    probeTimeoutMs: durationMsFromConfig(config, 'health.probeTimeout', {
      seconds: 5,
    }),
    concurrency: integerFromConfig(config, 'health.concurrency', 16, {
      max: 1000,
    }),
    massOutage: {
      minClusters: integerFromConfig(
        config,
        'health.massOutage.minClusters',
        3,
        { max: 100000 },
      ),
      fraction,
    },
    sharding: shards > 1 ? { shards, leaseMs: shardLeaseMs } : undefined,
  };
}

function readDeploy(config: Config, namespace: string): FleetConfig['deploy'] {
  const preStopSleepMs = durationMsFromConfig(
    config,
    'deploy.preStopSleep',
    { seconds: 5 },
    { allowZero: true },
  );
  if (preStopSleepMs % 1000 !== 0 || preStopSleepMs > 300_000) {
    throw new Error(
      'Invalid config value fleet.deploy.preStopSleep: expected whole seconds, at most 5 minutes',
    );
  }

  return {
    namespace,
    defaultReplicas: integerFromConfig(config, 'deploy.defaultReplicas', 3, {
      max: 1000,
    }),
    progressDeadlineMs: durationMsFromConfig(
      config,
      'deploy.progressDeadline',
      { seconds: 600 },
    ),
    pollIntervalMs: durationMsFromConfig(config, 'deploy.pollInterval', {
      seconds: 2,
    }),
    rollbackWindowMs: durationMsFromConfig(config, 'deploy.rollbackWindow', {
      minutes: 10,
    }),
    forbiddenNamespaces:
      config.getOptionalStringArray('deploy.forbiddenNamespaces') ??
      SYSTEM_NAMESPACES,
    defaultResources: readDefaultResources(config),
    preStopSleepSeconds: preStopSleepMs / 1000,
  };
}

function readDiscovery(
  config: Config,
  env: NodeJS.ProcessEnv,
): FleetConfig['discovery'] {
  const discovery: FleetConfig['discovery'] = {
    ...KubeconfigAccessPolicy.locationsFromConfig(config, env),
    allowExecForManual:
      config.getOptionalBoolean('discovery.allowExecForManual') ?? false,
    secretSelector: nonEmpty(
      config.getOptionalString('discovery.secretSelector'),
    ),
    secretNamespace: nonEmpty(
      config.getOptionalString('discovery.secretNamespace'),
    ),
  };
  if (
    discovery.secretSelector &&
    !parseLabelSelector(discovery.secretSelector)
  ) {
    throw new Error(
      `Invalid config value fleet.discovery.secretSelector='${discovery.secretSelector}': expected a label selector such as cnp.io/kubeconfig=true`,
    );
  }
  if (
    discovery.secretNamespace &&
    !DNS1123_LABEL.test(discovery.secretNamespace)
  ) {
    throw new Error(
      `Invalid config value fleet.discovery.secretNamespace='${discovery.secretNamespace}': expected a DNS-1123 label`,
    );
  }

  return discovery;
}

function readHub(
  config: Config,
  env: NodeJS.ProcessEnv,
  discovery: FleetConfig['discovery'],
): FleetConfig['hub'] {
  const hubKubeconfigPath = nonEmpty(
    config.getOptionalString('hub.kubeconfigPath'),
  );
  // In a pod, with no kubeconfig configured at all, the backend's own cluster is the hub.
  const inCluster =
    config.getOptionalBoolean('hub.inCluster') ??
    (!!nonEmpty(env.KUBERNETES_SERVICE_HOST) &&
      !hubKubeconfigPath &&
      !discovery.kubeconfigPath &&
      !discovery.kubeconfigDir);
  if (inCluster && hubKubeconfigPath) {
    throw new Error(
      'Invalid config: fleet.hub.inCluster is true and fleet.hub.kubeconfigPath is set; give one of them',
    );
  }
  if (
    inCluster &&
    (!nonEmpty(env.KUBERNETES_SERVICE_HOST) ||
      !nonEmpty(env.KUBERNETES_SERVICE_PORT))
  ) {
    throw new Error(
      'Invalid config: fleet.hub.inCluster is true but KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not both set (they are in a pod)',
    );
  }
  const inClusterName =
    config.getOptionalString('hub.inClusterName') ?? 'in-cluster';
  if (!DNS1123_LABEL.test(inClusterName) || inClusterName.length > 63) {
    throw new Error(
      `Invalid config value fleet.hub.inClusterName='${inClusterName}': expected a DNS-1123 label`,
    );
  }
  return {
    kubeconfigPath: hubKubeconfigPath,
    context: nonEmpty(config.getOptionalString('hub.context')),
    inCluster,
    inClusterName,
    registerInCluster:
      config.getOptionalBoolean('hub.registerInCluster') ?? true,
    serviceAccountPathPrefix:
      config.getOptionalString('hub.serviceAccountPathPrefix') ?? '',
  };
}
