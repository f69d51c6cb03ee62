import { ConfigReader } from '@backstage/config';
import { readFleetConfig } from './FleetConfig';

describe('readFleetConfig', () => {
  it('has the defaults of the design', () => {
    expect(readFleetConfig(new ConfigReader({}), {})).toEqual({
      discovery: {
        kubeconfigPath: undefined,
        kubeconfigDir: undefined,
        allowedKubeconfigDirs: [],
        allowExecForManual: false,
      },
      clusters: { maxManual: 1000 },
      health: {
        intervalMs: 300_000,
        failureThreshold: 2,
        minOutageMs: 300_000,
        manualMinIntervalMs: 10_000,
        recoveryThreshold: 1,
        probeTimeoutMs: 5_000,
        concurrency: 16,
        massOutage: { minClusters: 3, fraction: 0.55 },
      },
      reconcile: { intervalMs: 60_000, concurrency: 8 },
      deploy: {
        namespace: 'default',
        defaultReplicas: 3,
        progressDeadlineMs: 600_000,
        rollbackWindowMs: 600_000,
        forbiddenNamespaces: ['kube-system', 'kube-public', 'kube-node-lease'],
        pollIntervalMs: 2_000,
      },
      events: { retentionMs: 90 * 24 * 3600_000 },
      database: { preparedStatements: true },
      signals: { enabled: true },
      notifications: {
        enabled: true,
        clusterAdmins: [],
        clusterNamespace: 'default',
      },
    });
  });

  it('tells the policy’s cluster admins unless notifications name others, refs without a kind being groups', () => {
    const read = (fleet: Record<string, any>) =>
      readFleetConfig(new ConfigReader({ fleet }), {}).notifications;
    expect(
      read({
        permissions: { clusterAdmins: ['platform', 'user:default/ops'] },
      }),
    ).toMatchObject({
      clusterAdmins: ['group:default/platform', 'user:default/ops'],
    });
    expect(
      read({
        permissions: { clusterAdmins: ['platform'] },
        notifications: { clusterAdmins: ['sre/oncall'], enabled: false },
        catalog: { namespace: 'infra' },
      }),
    ).toEqual({
      enabled: false,
      clusterAdmins: ['group:sre/oncall'],
      clusterNamespace: 'infra',
    });
    expect(() =>
      read({ notifications: { clusterAdmins: ['group:'] } }),
    ).toThrow(/Invalid fleet.notifications.clusterAdmins entry 'group:'/);
  });

  it('reads config and lets the environment variables win', () => {
    const config = new ConfigReader({
      fleet: {
        discovery: {
          kubeconfigDir: '/from/config',
          allowedKubeconfigDirs: ['/extra'],
          allowExecForManual: false,
        },
        health: {
          interval: { seconds: 60 },
          failureThreshold: 4,
          probeTimeout: { seconds: 2 },
          concurrency: 8,
        },
        deploy: { namespace: 'apps' },
      },
    });
    const env = {
      KUBECONFIG_DIR: '/from/env',
      KUBECONFIG_PATH: '/one/file',
      CLUSTER_HEALTH_INTERVAL: '30',
      CLUSTER_HEALTH_FAILURE_THRESHOLD: '3',
      K8S_TARGET_NAMESPACE: 'team-a',
    };
    const result = readFleetConfig(config, env);
    expect(result.discovery).toEqual({
      kubeconfigDir: '/from/env',
      kubeconfigPath: '/one/file',
      allowedKubeconfigDirs: ['/extra'],
      allowExecForManual: false,
    });
    expect(result.health).toMatchObject({
      intervalMs: 30_000,
      failureThreshold: 3,
      probeTimeoutMs: 2_000,
      concurrency: 8,
    });
    expect(result.deploy.namespace).toBe('team-a');
    expect(readFleetConfig(config, {}).health).toMatchObject({
      intervalMs: 60_000,
      failureThreshold: 4,
    });
  });

  it.each([
    ['CLUSTER_HEALTH_FAILURE_THRESHOLD', '0'],
    ['CLUSTER_HEALTH_FAILURE_THRESHOLD', 'abc'],
    ['CLUSTER_HEALTH_FAILURE_THRESHOLD', '2.5'],
    ['CLUSTER_HEALTH_FAILURE_THRESHOLD', '-1'],
    ['CLUSTER_HEALTH_INTERVAL', '0'],
    ['CLUSTER_HEALTH_INTERVAL', 'abc'],
    ['CLUSTER_HEALTH_INTERVAL', '5m'],
    ['K8S_TARGET_NAMESPACE', 'Not_A_Namespace'],
  ])('stops on %s=%s with a message naming the variable', (name, value) => {
    expect(() =>
      readFleetConfig(new ConfigReader({}), { [name]: value }),
    ).toThrow(
      new RegExp(
        `Invalid environment variable ${name}='${value.replace(
          /[.*+?^${}()|[\]\\]/g,
          '\\$&',
        )}'`,
      ),
    );
  });

  it('rejects nonsense config values naming the key', () => {
    expect(() =>
      readFleetConfig(
        new ConfigReader({ fleet: { health: { failureThreshold: 0 } } }),
        {},
      ),
    ).toThrow(/fleet\.health\.failureThreshold/);
    expect(() =>
      readFleetConfig(
        new ConfigReader({
          fleet: { health: { massOutage: { fraction: 1.5 } } },
        }),
        {},
      ),
    ).toThrow(/fleet\.health\.massOutage\.fraction/);
  });

  it('caps manual clusters at fleet.clusters.maxManual (default 1,000) and refuses a negative or fractional cap', () => {
    const maxManual = (value: unknown) =>
      readFleetConfig(
        new ConfigReader({ fleet: { clusters: { maxManual: value } } } as any),
        {},
      ).clusters.maxManual;
    expect(maxManual(undefined)).toBe(1000);
    expect(maxManual(5)).toBe(5);
    expect(maxManual(0)).toBe(0);
    for (const invalid of [-1, 2.5]) {
      expect(() => maxManual(invalid)).toThrow(/fleet\.clusters\.maxManual/);
    }
  });

  it('reads the event retention as a duration and refuses one that is not positive', () => {
    const retention = (value: unknown) =>
      readFleetConfig(
        new ConfigReader({ fleet: { events: { retention: value } } } as any),
        {},
      ).events.retentionMs;
    expect(retention({ days: 30 })).toBe(30 * 24 * 3600_000);
    expect(retention('2w')).toBe(14 * 24 * 3600_000);
    expect(retention('P1D')).toBe(24 * 3600_000);
    for (const invalid of [
      { days: 0 },
      { hours: -1 },
      0,
      'soon',
      { weeks: 'two' },
      { fortnights: 1 },
    ]) {
      expect(() => retention(invalid)).toThrow(
        /^Invalid config value fleet\.events\.retention: /,
      );
    }
  });

  it('reads minOutage (default: one health interval) and manualMinInterval (default 10 s), zero allowed, and stops on a bad one naming the key', () => {
    const health = (value: Record<string, unknown>, env = {}) =>
      readFleetConfig(
        new ConfigReader({ fleet: { health: value } } as any),
        env,
      ).health;
    expect(health({ interval: { minutes: 2 } })).toMatchObject({
      minOutageMs: 120_000,
      manualMinIntervalMs: 10_000,
    });
    expect(health({}, { CLUSTER_HEALTH_INTERVAL: '45' }).minOutageMs).toBe(
      45_000,
    );
    expect(
      health({ minOutage: '90s', manualMinInterval: { seconds: 30 } }),
    ).toMatchObject({ minOutageMs: 90_000, manualMinIntervalMs: 30_000 });
    expect(
      health({ minOutage: { seconds: 0 }, manualMinInterval: '0s' }),
    ).toMatchObject({ minOutageMs: 0, manualMinIntervalMs: 0 });
    for (const key of ['minOutage', 'manualMinInterval']) {
      for (const invalid of [{ seconds: -1 }, 'soon', { fortnights: 1 }]) {
        expect(() => health({ [key]: invalid })).toThrow(
          new RegExp(`^Invalid config value fleet\\.health\\.${key}: `),
        );
      }
    }
  });
});
