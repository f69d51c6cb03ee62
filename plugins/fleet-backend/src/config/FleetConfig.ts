import { parseEntityRef, stringifyEntityRef } from '@backstage/catalog-model';
import {
  Config,
  ConfigReader,
  readDurationFromConfig,
} from '@backstage/config';
import { durationToMilliseconds, HumanDuration } from '@backstage/types';
import { asError } from '../util/errors';

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
  };
  reconcile: {
    intervalMs: number;
    concurrency: number;
  };
  deploy: {
    namespace: string;
    defaultReplicas: number;
    progressDeadlineMs: number;
    pollIntervalMs: number;
    /** A revision that fails within this long of its apply is rolled back automatically. */
    rollbackWindowMs: number;
    /** Namespaces an application may not deploy to. */
    forbiddenNamespaces: string[];
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
  notifications: {
    /** Whether Fleet sends Backstage notifications (default true). */
    enabled: boolean;
    /** Who hears about clusters going OFFLINE and mass outages: full entity refs. */
    clusterAdmins: string[];
    /** The catalog namespace of the cluster entities, for the links. */
    clusterNamespace: string;
  };
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function positiveIntegerFromEnv(
  env: NodeJS.ProcessEnv,
  name: string,
  { min = 1, max = Number.MAX_SAFE_INTEGER } = {},
): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const trimmed = raw.trim();
  const value = Number(trimmed);
  if (
    !/^\d+$/.test(trimmed) ||
    !Number.isSafeInteger(value) ||
    value < min ||
    value > max
  ) {
    throw new Error(
      `Invalid environment variable ${name}='${raw}': expected an integer between ${min} and ${max}`,
    );
  }
  return value;
}

function integerFromConfig(
  config: Config,
  key: string,
  fallback: number,
  { min = 1, max = Number.MAX_SAFE_INTEGER } = {},
): number {
  const value = config.getOptionalNumber(key);
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(
      `Invalid config value fleet.${key}=${value}: expected an integer between ${min} and ${max}`,
    );
  }
  return value;
}

function durationMsFromConfig(
  config: Config,
  key: string,
  fallback: HumanDuration,
  { allowZero = false } = {},
): number {
  let duration: HumanDuration;
  try {
    duration = config.has(key)
      ? readDurationFromConfig(config, { key })
      : fallback;
  } catch (error) {
    throw new Error(
      `Invalid config value fleet.${key}: ${asError(error).message}`,
    );
  }
  const ms = durationToMilliseconds(duration);
  if (allowZero ? !(ms >= 0) : !(ms > 0)) {
    throw new Error(
      `Invalid config value fleet.${key}: the duration must be ${
        allowZero ? 'zero or more' : 'positive'
      }`,
    );
  }
  return ms;
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

  const fraction =
    config.getOptionalNumber('health.massOutage.fraction') ?? 0.55;
  if (!(fraction > 0 && fraction <= 1)) {
    throw new Error(
      `Invalid config value fleet.health.massOutage.fraction=${fraction}: expected a number in (0, 1]`,
    );
  }

  const nonEmpty = (value: string | undefined) =>
    value !== undefined && value.trim() !== '' ? value.trim() : undefined;

  const healthIntervalMs =
    intervalSeconds !== undefined
      ? intervalSeconds * 1000
      : durationMsFromConfig(config, 'health.interval', { seconds: 300 });

  return {
    discovery: {
      kubeconfigPath:
        nonEmpty(env.KUBECONFIG_PATH) ??
        nonEmpty(config.getOptionalString('discovery.kubeconfigPath')),
      kubeconfigDir:
        nonEmpty(env.KUBECONFIG_DIR) ??
        nonEmpty(config.getOptionalString('discovery.kubeconfigDir')),
      allowedKubeconfigDirs:
        config.getOptionalStringArray('discovery.allowedKubeconfigDirs') ?? [],
      allowExecForManual:
        config.getOptionalBoolean('discovery.allowExecForManual') ?? false,
    },
    clusters: {
      maxManual: integerFromConfig(config, 'clusters.maxManual', 1000, {
        min: 0,
        max: 1_000_000,
      }),
    },
    health: {
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
    },
    reconcile: {
      intervalMs: durationMsFromConfig(config, 'reconcile.interval', {
        seconds: 60,
      }),
      concurrency: integerFromConfig(config, 'reconcile.concurrency', 8, {
        max: 1000,
      }),
    },
    deploy: {
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
      forbiddenNamespaces: config.getOptionalStringArray(
        'deploy.forbiddenNamespaces',
      ) ?? ['kube-system', 'kube-public', 'kube-node-lease'],
    },
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
    notifications: {
      enabled: config.getOptionalBoolean('notifications.enabled') ?? true,
      clusterAdmins: (
        config.getOptionalStringArray('notifications.clusterAdmins') ??
        config.getOptionalStringArray('permissions.clusterAdmins') ??
        []
      ).map(ref => groupRef(ref, 'fleet.notifications.clusterAdmins')),
      clusterNamespace:
        config.getOptionalString('catalog.namespace') ?? 'default',
    },
  };
}

/** A full entity ref; one without a kind is a group, without a namespace in `default`. */
function groupRef(ref: string, key: string): string {
  try {
    return stringifyEntityRef(
      parseEntityRef(ref, {
        defaultKind: 'group',
        defaultNamespace: 'default',
      }),
    );
  } catch (error) {
    throw new Error(
      `Invalid ${key} entry '${ref}': ${(error as Error).message}`,
    );
  }
}
