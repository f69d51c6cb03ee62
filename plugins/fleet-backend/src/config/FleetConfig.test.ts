import { defaultProject } from '../tenancy/projects';
import { ConfigReader } from '@backstage/config';
import type { JsonObject } from '@backstage/types';
import { readFleetConfig } from './FleetConfig';

describe('readFleetConfig', () => {
  it('has the defaults of the design', () => {
    expect(readFleetConfig(new ConfigReader({}), {})).toEqual({
      discovery: {
        kubeconfigPath: undefined,
        kubeconfigDir: undefined,
        allowedKubeconfigDirs: [],
        allowExecForManual: false,
        secretSelector: undefined,
        secretNamespace: undefined,
      },
      hub: {
        kubeconfigPath: undefined,
        context: undefined,
        inCluster: false,
        inClusterName: 'in-cluster',
        registerInCluster: true,
        serviceAccountPathPrefix: '',
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
      reconcile: {
        intervalMs: 60_000,
        concurrency: 8,
        watch: true,
        resyncIntervalMs: 600_000,
      },
      projects: [defaultProject('default')],
      deploy: {
        namespace: 'default',
        defaultReplicas: 3,
        progressDeadlineMs: 600_000,
        rollbackWindowMs: 600_000,
        forbiddenNamespaces: ['kube-system', 'kube-public', 'kube-node-lease'],
        pollIntervalMs: 2_000,
        defaultResources: undefined,
        preStopSleepSeconds: 5,
      },
      events: { retentionMs: 90 * 24 * 3600_000 },
      database: { preparedStatements: true },
      signals: { enabled: true },
      analysis: { prometheus: { allowedAddresses: [] } },
      release: { freezeWindows: [] },
      notifications: {
        enabled: true,
        clusterAdmins: [],
        clusterNamespace: 'default',
      },
    });
  });

  it('reads the allowed Prometheus addresses normalised, and stops at one that is not an http(s) base URL', () => {
    const read = (allowedAddresses: string[]) =>
      readFleetConfig(
        new ConfigReader({
          fleet: { analysis: { prometheus: { allowedAddresses } } },
        }),
        {},
      ).analysis.prometheus.allowedAddresses;
    expect(
      read([
        'HTTP://Prometheus.Monitoring.svc:9090/',
        'https://p.example:443/x/',
      ]),
    ).toEqual(['http://prometheus.monitoring.svc:9090', 'https://p.example/x']);
    expect(() => read(['ftp://p:21'])).toThrow(
      "Invalid config value fleet.analysis.prometheus.allowedAddresses[0]='ftp://p:21'",
    );
    expect(() => read(['http://p:9090/?x=1'])).toThrow(/without query/);
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

  it('reads health.shards (default 1: no sharding) and shardLease (default 30 s), and stops on a bad one naming the key', () => {
    const health = (value: Record<string, unknown>) =>
      readFleetConfig(new ConfigReader({ fleet: { health: value } } as any), {})
        .health;
    expect(health({}).sharding).toBeUndefined();
    expect(health({ shards: 1, shardLease: '10s' }).sharding).toBeUndefined();
    expect(health({ shards: 4 }).sharding).toEqual({
      shards: 4,
      leaseMs: 30_000,
    });
    expect(health({ shards: 8, shardLease: { seconds: 45 } }).sharding).toEqual(
      { shards: 8, leaseMs: 45_000 },
    );
    expect(() => health({ shards: 0 })).toThrow(/fleet\.health\.shards/);
    expect(() =>
      health({ shards: 4, shardLease: { milliseconds: 100 } }),
    ).toThrow(/fleet\.health\.shardLease: at least 1 second/);
    expect(() => health({ shards: 4, shardLease: 'soon' })).toThrow(
      /fleet\.health\.shardLease/,
    );
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

  describe('the hub, Secret discovery and the deploy defaults', () => {
    const read = (fleet: Record<string, unknown>, env = {}) =>
      readFleetConfig(new ConfigReader({ fleet } as JsonObject), env);
    const pod = {
      KUBERNETES_SERVICE_HOST: '10.96.0.1',
      KUBERNETES_SERVICE_PORT: '443',
    };

    it('uses in-cluster config in a pod when no kubeconfig is configured', () => {
      expect(read({}, pod).hub.inCluster).toBe(true);
      expect(read({}, {}).hub.inCluster).toBe(false);
      expect(
        read({ discovery: { kubeconfigDir: '/k' } }, pod).hub.inCluster,
      ).toBe(false);
      expect(read({}, { ...pod, KUBECONFIG_PATH: '/k' }).hub.inCluster).toBe(
        false,
      );
      expect(
        read({ hub: { kubeconfigPath: '/hub.yaml' } }, pod).hub,
      ).toMatchObject({ inCluster: false, kubeconfigPath: '/hub.yaml' });
      expect(read({ hub: { inCluster: false } }, pod).hub.inCluster).toBe(
        false,
      );
      expect(
        read({ hub: { inClusterName: 'mgmt', registerInCluster: false } }, pod)
          .hub,
      ).toMatchObject({ inClusterName: 'mgmt', registerInCluster: false });
    });

    it('refuses in-cluster config outside a pod, both hub sources, and a bad name', () => {
      expect(() => read({ hub: { inCluster: true } }, {})).toThrow(
        /KUBERNETES_SERVICE_HOST/,
      );
      expect(() =>
        read({ hub: { inCluster: true, kubeconfigPath: '/hub.yaml' } }, pod),
      ).toThrow(/give one of them/);
      expect(() => read({ hub: { inClusterName: 'In Cluster' } }, pod)).toThrow(
        /fleet\.hub\.inClusterName/,
      );
    });

    it('reads the Secret selector, and refuses one that is not a selector', () => {
      expect(
        read({
          discovery: {
            secretSelector: 'cnp.io/kubeconfig=true',
            secretNamespace: 'fleet-system',
          },
        }).discovery,
      ).toMatchObject({
        secretSelector: 'cnp.io/kubeconfig=true',
        secretNamespace: 'fleet-system',
      });
      expect(() => read({ discovery: { secretSelector: 'a b c ((' } })).toThrow(
        /fleet\.discovery\.secretSelector/,
      );
      expect(() =>
        read({ discovery: { secretNamespace: 'Fleet_System' } }),
      ).toThrow(/fleet\.discovery\.secretNamespace/);
    });

    it('reads default resources and the preStop sleep, and refuses nonsense', () => {
      const deploy = read({
        deploy: {
          defaultResources: {
            requests: { cpu: '100m', memory: '128Mi' },
            limits: { cpu: 1, memory: '1Gi' },
          },
          preStopSleep: { seconds: 10 },
        },
      }).deploy;
      expect(deploy.defaultResources).toEqual({
        requests: { cpu: '100m', memory: '128Mi' },
        limits: { cpu: '1', memory: '1Gi' },
      });
      expect(deploy.preStopSleepSeconds).toBe(10);
      expect(
        read({ deploy: { preStopSleep: { seconds: 0 } } }).deploy,
      ).toMatchObject({ preStopSleepSeconds: 0 });
      expect(() =>
        read({
          deploy: {
            defaultResources: {
              requests: { cpu: '2' },
              limits: { cpu: '500m' },
            },
          },
        }),
      ).toThrow(/cpu request 2 is above its limit 500m/);
      expect(() =>
        read({ deploy: { defaultResources: { requests: { gpu: '1' } } } }),
      ).toThrow(/requests\.gpu: only cpu and memory/);
      expect(() =>
        read({
          deploy: { defaultResources: { limits: { memory: 'lots' } } },
        }),
      ).toThrow(/limits\.memory='lots'/);
      expect(() =>
        read({ deploy: { preStopSleep: { milliseconds: 1500 } } }),
      ).toThrow(/fleet\.deploy\.preStopSleep/);
    });
  });

  describe('freeze windows', () => {
    const weekend = {
      name: 'weekend',
      clusterSelector: 'env=prod',
      cron: '0 18 * * 5',
      duration: '64h',
      timeZone: 'Europe/Paris',
    };
    const once = {
      name: 'once',
      start: '2026-12-24T18:00:00Z',
      duration: '2d',
    };
    const windows = (...list: JsonObject[]) =>
      readFleetConfig(
        new ConfigReader({ fleet: { release: { freezeWindows: list } } }),
        {},
      ).release.freezeWindows;

    it('reads them as given, a missing time zone being UTC', () => {
      expect(windows(weekend, once)).toEqual([
        weekend,
        { ...once, timeZone: 'UTC' },
      ]);
    });

    it.each([
      [{ ...weekend, start: once.start }, '[1]: give cron or start, not both'],
      [{ name: 'x', duration: '1h' }, '[1]: needs cron or start'],
      [{ ...weekend, cron: '0 18 * * FRI-' }, '[1].cron: '],
      [{ ...weekend, timeZone: 'Paris' }, "[1].timeZone: 'Paris' is not"],
      [{ ...once, name: 'x', start: '24/12/2026' }, "[1].start: '24/12/2026'"],
      [{ ...weekend, duration: '64 hours' }, "[1].duration: '64 hours'"],
      [{ ...weekend, duration: 64 }, '[1].duration: '],
      [{ ...weekend, cron: '0 9 * * *' }, "[1].name: 'weekend' is the name"],
      [{ ...weekend, clusterSelector: 'env=(prod' }, '[1].clusterSelector: '],
      [{ ...weekend, timezone: 'UTC' }, '[1].timezone: not a setting'],
      [{ cron: '0 9 * * *', duration: '1h' }, '[1].name: '],
    ] as Array<[JsonObject, string]>)(
      'stops on %j, naming the key and the index',
      (second, message) => {
        expect(() => windows(weekend, second)).toThrow(
          `Invalid config value fleet.release.freezeWindows${message}`,
        );
      },
    );
  });
});
