import {
  coreServices,
  createServiceFactory,
  type SchedulerService,
  type ServiceFactory,
} from '@backstage/backend-plugin-api';
import {
  mockCredentials,
  mockServices,
  startTestBackend,
  type TestDatabaseId,
} from '@backstage/backend-test-utils';
import type { Entity } from '@backstage/catalog-model';
import { ConfigReader } from '@backstage/config';
import type { EntityProviderConnection } from '@backstage/plugin-catalog-node';
import type { Cluster } from '@cnp/plugin-fleet-common';
import type { KubeSimulator } from '@cnp/kube-simulator';
import { createTestDatabases, startSimulator } from '@cnp/fleet-harness';
import catalogPlugin from '@backstage/plugin-catalog-backend';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { fleetDeploymentCreatePermission } from '@cnp/plugin-fleet-common';
// The test runs the module against the real fleet plugin, as an app's backend does.
// eslint-disable-next-line @backstage/no-mixed-plugin-imports
import fleetPlugin from '@cnp/plugin-fleet-backend';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import {
  createFleetDeploymentConditionalDecision,
  fleetDeploymentConditions,
} from './permissions/conditionExports';
import { catalogModuleFleetClusters } from './catalogModuleFleetClusters';
import {
  clusterToEntity,
  FleetClusterEntityProvider,
} from './FleetClusterEntityProvider';

jest.setTimeout(60_000);

const databases = createTestDatabases();

/** One database per plugin, as a real backend has, each a fresh one of `databaseId`. */
function databasePerPlugin(databaseId: TestDatabaseId): ServiceFactory {
  return createServiceFactory({
    service: coreServices.database,
    deps: {},
    async factory() {
      const client = await databases.init(databaseId);
      return { getClient: async () => client };
    },
  });
}

const cluster = (overrides: Partial<Cluster> = {}): Cluster => ({
  name: 'east',
  endpoint: 'https://10.0.0.1:6443',
  kubeconfigRef: '/etc/fleet/kubeconfigs/east.yaml',
  context: null,
  source: 'discovered',
  labels: {},
  status: 'ONLINE',
  statusReason: 'PROBE_SUCCEEDED: namespaces listed',
  consecutiveFailures: 0,
  consecutiveSuccesses: 3,
  failureThreshold: null,
  lastProbeAt: '2026-01-01T00:00:00.000Z',
  lastSuccessAt: '2026-01-01T00:00:00.000Z',
  lastTransitionAt: '2026-01-01T00:00:00.000Z',
  probeLatencyMs: 12,
  serverVersion: 'v1.31.0',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  ...overrides,
});

/** Reads until `ok` holds (the catalog processes entities asynchronously), for 20 s at most. */
async function eventually<T>(
  read: () => Promise<T>,
  ok: (value: T) => boolean,
): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise(resolve => setTimeout(resolve, 100));
  }
}

describe('clusterToEntity', () => {
  it('makes a kubernetes-cluster Resource with status, endpoint and labels, and nothing of the kubeconfig', () => {
    const entity = clusterToEntity(
      cluster({
        labels: {
          env: 'prod',
          'example.com/tier': 'gold',
          'bad key!': 'x',
          ok: 'not valid value!',
        },
      }),
      { namespace: 'default', owner: 'group:default/platform' },
    );
    expect(entity).toEqual({
      apiVersion: 'backstage.io/v1alpha1',
      kind: 'Resource',
      metadata: {
        name: 'east',
        namespace: 'default',
        title: 'east',
        description:
          'Kubernetes cluster at `https://10.0.0.1:6443` (discovered from a kubeconfig), tracked by Fleet.',
        labels: { env: 'prod', 'example.com/tier': 'gold' },
        annotations: {
          'backstage.io/managed-by-location': 'fleet:cluster/east',
          'backstage.io/managed-by-origin-location': 'fleet:cluster/east',
          'cnp.io/cluster-name': 'east',
          'cnp.io/cluster-status': 'ONLINE',
          'cnp.io/cluster-status-reason': 'PROBE_SUCCEEDED',
          'cnp.io/cluster-endpoint': 'https://10.0.0.1:6443',
          'cnp.io/cluster-source': 'discovered',
          'cnp.io/cluster-server-version': 'v1.31.0',
        },
        tags: ['kubernetes', 'fleet'],
      },
      spec: { type: 'kubernetes-cluster', owner: 'group:default/platform' },
    });
    expect(JSON.stringify(entity)).not.toContain('kubeconfigs/east.yaml');
  });

  it('puts the endpoint in the description as inert text: no Markdown link, image or HTML can come through', () => {
    const hostile =
      'https://a.example/`` [Reset your password](https://evil.example)\n# Urgent <img src=x>';
    const entity = clusterToEntity(cluster({ endpoint: hostile }), {
      namespace: 'default',
      owner: 'group:default/platform',
    });
    expect(entity.metadata.description).toBe(
      'Kubernetes cluster at `https://a.example/ [Reset your password](https://evil.example)# Urgent <img src=x>` (discovered from a kubeconfig), tracked by Fleet.',
    );
    // One code span: exactly two backticks, nothing after the span but the plain suffix.
    expect(entity.metadata.description!.split('`')).toHaveLength(3);
  });
});

describe('FleetClusterEntityProvider', () => {
  function setup(listClusters: jest.Mock, config: object = {}) {
    const scheduler = mockServices.scheduler.mock();
    const provider = FleetClusterEntityProvider.fromConfig(
      new ConfigReader(config),
      {
        client: { listClusters },
        logger: mockServices.logger.mock(),
        scheduler,
      },
    );
    const connection: jest.Mocked<EntityProviderConnection> = {
      applyMutation: jest.fn(),
      refresh: jest.fn(),
    };
    return { provider, scheduler, connection };
  }

  it('schedules its refresh, configurable, and replaces all its entities on each one', async () => {
    const listClusters = jest
      .fn()
      .mockResolvedValue([
        cluster(),
        cluster({ name: 'west', status: 'OFFLINE', source: 'manual' }),
      ]);
    const { provider, scheduler, connection } = setup(listClusters, {
      fleet: {
        catalog: {
          owner: 'platform-team',
          schedule: { frequency: { minutes: 2 }, timeout: { seconds: 50 } },
        },
      },
    });
    await provider.connect(connection);
    expect(scheduler.scheduleTask).toHaveBeenCalledWith(
      expect.objectContaining({
        id: 'fleet-clusters:refresh',
        scope: 'global',
        frequency: { minutes: 2 },
        timeout: { seconds: 50 },
      }),
    );
    await scheduler.scheduleTask.mock.calls[0][0].fn(
      new AbortController().signal,
    );
    expect(connection.applyMutation).toHaveBeenCalledWith({
      type: 'full',
      entities: [
        {
          entity: expect.objectContaining({
            metadata: expect.objectContaining({ name: 'east' }),
          }),
          locationKey: 'fleet-provider:fleet-clusters',
        },
        {
          entity: expect.objectContaining({
            metadata: expect.objectContaining({ name: 'west' }),
          }),
          locationKey: 'fleet-provider:fleet-clusters',
        },
      ],
    });
    const west =
      connection.applyMutation.mock.calls[0][0].type === 'full'
        ? (
            connection.applyMutation.mock.calls[0][0] as {
              entities: Array<{ entity: Entity }>;
            }
          ).entities[1].entity
        : undefined;
    expect(west?.spec).toEqual({
      type: 'kubernetes-cluster',
      owner: 'group:default/platform-team',
    });
    expect(west?.metadata.annotations?.['cnp.io/cluster-status']).toBe(
      'OFFLINE',
    );

    listClusters.mockResolvedValue([]);
    await provider.refresh();
    expect(connection.applyMutation).toHaveBeenLastCalledWith({
      type: 'full',
      entities: [],
    });
  });

  it('leaves the catalog as it is when Fleet does not answer', async () => {
    const listClusters = jest
      .fn()
      .mockRejectedValue(new Error('connect ECONNREFUSED'));
    const { provider, scheduler, connection } = setup(listClusters);
    await provider.connect(connection);
    expect(scheduler.scheduleTask).toHaveBeenCalledWith(
      expect.objectContaining({
        frequency: { seconds: 30 },
        initialDelay: { seconds: 10 },
      }),
    );
    await expect(
      scheduler.scheduleTask.mock.calls[0][0].fn(new AbortController().signal),
    ).rejects.toThrow(
      /Publishing Fleet clusters to the catalog failed.*ECONNREFUSED/,
    );
    expect(connection.applyMutation).not.toHaveBeenCalled();
  });

  it('refuses an invalid owner in config', () => {
    expect(() =>
      setup(jest.fn(), { fleet: { catalog: { owner: 'group:a:b/c/d' } } }),
    ).toThrow(/Invalid config value fleet.catalog.owner/);
  });
});

describe.each(databases.eachSupportedId())(
  'catalogModuleFleetClusters with the real catalog (%s)',
  databaseId => {
    let sim: KubeSimulator;
    let entitiesFile: string;
    beforeAll(async () => {
      sim = await startSimulator({ clusters: ['east', 'west'] });
      entitiesFile = path.join(
        await fs.mkdtemp(path.join(os.tmpdir(), 'fleet-catalog-')),
        'components.yaml',
      );
      const component = (name: string, annotations: string) =>
        `apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata:\n  name: ${name}\n  annotations: {${annotations}}\nspec: { type: service, lifecycle: production, owner: group:default/guests }\n`;
      await fs.writeFile(
        entitiesFile,
        [
          component('with-image', "'cnp.io/image': 'nginx:1.27'"),
          component('without-image', ''),
        ].join('---\n'),
      );
    });
    afterAll(async () => {
      await fs.rm(path.dirname(entitiesFile), { recursive: true, force: true });
    });

    it('publishes the clusters as entities; status changes and removals reach the catalog', async () => {
      const scheduler = mockServices.scheduler() as SchedulerService & {
        factory(options?: { skipTaskRunOnStartup?: boolean }): ServiceFactory;
      };
      const { server } = await startTestBackend({
        features: [
          fleetPlugin,
          catalogPlugin,
          catalogModuleFleetClusters,
          databasePerPlugin(databaseId),
          scheduler.factory({ skipTaskRunOnStartup: true }),
          mockServices.rootConfig.factory({
            data: {
              fleet: {
                discovery: { kubeconfigDir: sim.kubeconfigDir },
                // Cycles back to back: no minOutage nor manualMinInterval.
                health: {
                  probeTimeout: { seconds: 2 },
                  minOutage: { seconds: 0 },
                  manualMinInterval: { seconds: 0 },
                },
                catalog: { owner: 'group:default/guests' },
              },
              catalog: {
                rules: [{ allow: ['Component', 'Resource', 'Location'] }],
                locations: [{ type: 'file', target: entitiesFile }],
              },
            },
          }),
        ],
      });
      const refresh = () =>
        scheduler.triggerTask(FleetClusterEntityProvider.taskId);
      const catalogEntity = async (
        name: string,
      ): Promise<Entity | undefined> => {
        const res = await request(server).get(
          `/api/catalog/entities/by-name/resource/default/${name}`,
        );
        return res.status === 200 ? res.body : undefined;
      };
      const status = (entity?: Entity) =>
        entity?.metadata.annotations?.['cnp.io/cluster-status'];

      // Appear: the discovered clusters, UNKNOWN until probed.
      await refresh();
      const east = await eventually(
        () => catalogEntity('east'),
        e => e !== undefined,
      );
      expect(east).toMatchObject({
        kind: 'Resource',
        spec: { type: 'kubernetes-cluster', owner: 'group:default/guests' },
        metadata: {
          annotations: {
            'cnp.io/cluster-status': 'UNKNOWN',
            'cnp.io/cluster-endpoint': sim.endpoint('east'),
          },
        },
      });
      expect(
        status(
          await eventually(
            () => catalogEntity('west'),
            e => e !== undefined,
          ),
        ),
      ).toBe('UNKNOWN');

      // Change: a health cycle makes them ONLINE, an outage makes west OFFLINE.
      await request(server).post('/api/fleet/health/run').expect(200);
      sim.setFault('west', { mode: 'down' });
      await request(server).post('/api/fleet/health/run').expect(200);
      await request(server).post('/api/fleet/health/run').expect(200);
      await request(server)
        .post('/api/fleet/clusters')
        .send({
          name: 'manual-1',
          endpoint: 'https://10.0.0.1:6443',
          kubeconfigRef: 'vault:manual-1',
          labels: { env: 'staging' },
        })
        .expect(201);
      await refresh();
      expect(
        status(
          await eventually(
            () => catalogEntity('west'),
            e => status(e) === 'OFFLINE',
          ),
        ),
      ).toBe('OFFLINE');
      expect(
        status(
          await eventually(
            () => catalogEntity('east'),
            e => status(e) === 'ONLINE',
          ),
        ),
      ).toBe('ONLINE');
      const manual = await eventually(
        () => catalogEntity('manual-1'),
        e => e !== undefined,
      );
      expect(manual?.metadata.labels).toEqual({ env: 'staging' });
      expect(manual?.metadata.annotations?.['cnp.io/cluster-source']).toBe(
        'manual',
      );

      // Disappear: a deleted cluster leaves the catalog.
      await request(server).delete('/api/fleet/clusters/manual-1').expect(204);
      await refresh();
      expect(
        await eventually(
          () => catalogEntity('manual-1'),
          e => e === undefined,
        ),
      ).toBeUndefined();
      expect(status(await catalogEntity('west'))).toBe('OFFLINE');
      sim.setFault('west', { mode: 'ok' });
    });

    it('evaluates the conditions Fleet exports for fleet.deployment.create, its own rule included', async () => {
      const { server } = await startTestBackend({
        features: [
          catalogPlugin,
          catalogModuleFleetClusters,
          databasePerPlugin(databaseId),
          mockServices.scheduler.factory({ skipTaskRunOnStartup: true }),
          mockServices.rootConfig.factory({
            data: {
              catalog: { locations: [{ type: 'file', target: entitiesFile }] },
            },
          }),
        ],
      });
      const metadata = await request(server)
        .get('/api/catalog/.well-known/backstage/permissions/metadata')
        .expect(200);
      expect(metadata.body.rules.map((r: { name: string }) => r.name)).toEqual(
        expect.arrayContaining(['IS_FLEET_DEPLOYABLE', 'IS_ENTITY_OWNER']),
      );
      for (const name of ['with-image', 'without-image']) {
        const res = await eventually(
          async () =>
            request(server).get(
              `/api/catalog/entities/by-name/component/default/${name}`,
            ),
          r => r.status === 200,
        );
        expect(res.status).toBe(200);
      }

      const decide = async (
        decision: ReturnType<typeof createFleetDeploymentConditionalDecision>,
        resourceRef: string,
      ) => {
        expect(decision).toMatchObject({
          result: AuthorizeResult.CONDITIONAL,
          pluginId: 'catalog',
          resourceType: 'catalog-entity',
        });
        const res = await request(server)
          .post(
            '/api/catalog/.well-known/backstage/permissions/apply-conditions',
          )
          .set('Authorization', mockCredentials.service.header())
          .send({
            items: [
              {
                id: '1',
                resourceRef,
                resourceType: 'catalog-entity',
                conditions: decision.conditions,
              },
            ],
          })
          .expect(200);
        return res.body.items[0].result;
      };
      const deployable = createFleetDeploymentConditionalDecision(
        fleetDeploymentCreatePermission,
        fleetDeploymentConditions.isFleetDeployable(),
      );
      expect(await decide(deployable, 'component:default/with-image')).toBe(
        AuthorizeResult.ALLOW,
      );
      expect(await decide(deployable, 'component:default/without-image')).toBe(
        AuthorizeResult.DENY,
      );
      const owner = (claims: string[]) =>
        createFleetDeploymentConditionalDecision(
          fleetDeploymentCreatePermission,
          fleetDeploymentConditions.isEntityOwner({ claims }),
        );
      expect(
        await decide(
          owner(['user:default/guest', 'group:default/guests']),
          'component:default/without-image',
        ),
      ).toBe(AuthorizeResult.ALLOW);
      expect(
        await decide(
          owner(['user:default/mallory']),
          'component:default/without-image',
        ),
      ).toBe(AuthorizeResult.DENY);
    });
  },
);
