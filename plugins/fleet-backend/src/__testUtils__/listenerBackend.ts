import {
  coreServices,
  createBackendModule,
  createServiceFactory,
  type BackendFeature,
  type SchedulerService,
} from '@backstage/backend-plugin-api';
import {
  mockCredentials,
  mockServices,
  startTestBackend,
  type TestBackend,
} from '@backstage/backend-test-utils';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import knexFactory, { type Knex } from 'knex';
import { fleetPlugin } from '../plugin';

/*
 * A test backend with the real Fleet plugin next to the other real plugins a test names (the
 * notifications backend, a module listening to the events service). Fleet gets the test's
 * database (SQLite or PostgreSQL); every other plugin an in-memory SQLite of its own, as a
 * backend gives each plugin its own database.
 */

/** The catalog the notifications backend resolves recipients in: owners and their members. */
export function orgEntities(components: string[]) {
  const relation = (type: string, targetRef: string) => ({ type, targetRef });
  const group = (name: string, members: string[]) => ({
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Group',
    metadata: { name, namespace: 'default' },
    spec: { type: 'team', children: [] },
    relations: members.map(m => relation('hasMember', `user:default/${m}`)),
  });
  const user = (name: string) => ({
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'User',
    metadata: { name, namespace: 'default' },
    spec: {},
  });
  return [
    group('team-a', ['alice', 'dave']),
    group('admins', ['bob']),
    user('alice'),
    user('bob'),
    user('dave'),
    ...components.map(name => ({
      apiVersion: 'backstage.io/v1alpha1',
      kind: 'Component',
      metadata: { name, namespace: 'default', annotations: {} },
      spec: { type: 'service', lifecycle: 'production', owner: 'team-a' },
      relations: [relation('ownedBy', 'group:default/team-a')],
    })),
  ];
}

/** The other plugins' databases, closed once the test file is done. */
const others: Knex[] = [];
afterAll(async () => {
  await Promise.all(others.map(k => k.destroy()));
});

function databasePerPlugin(fleetKnex: Knex) {
  return createServiceFactory({
    service: coreServices.database,
    deps: { pluginMetadata: coreServices.pluginMetadata },
    factory: ({ pluginMetadata }) => {
      if (pluginMetadata.getId() === 'fleet') {
        return mockServices.database({ knex: fleetKnex });
      }
      const knex = knexFactory({
        client: 'better-sqlite3',
        connection: ':memory:',
        useNullAsDefault: true,
      });
      others.push(knex);
      return mockServices.database({ knex });
    },
  });
}

export async function startListenerBackend(options: {
  knex: Knex;
  kubeconfigDir: string;
  components: string[];
  fleet?: Record<string, unknown>;
  features?: Array<BackendFeature | Promise<{ default: BackendFeature }>>;
}): Promise<{
  backend: TestBackend;
  server: TestBackend['server'];
  scheduler: () => SchedulerService;
}> {
  let scheduler: SchedulerService | undefined;
  const backend = await startTestBackend({
    features: [
      fleetPlugin,
      // The scheduler the plugin got: the test runs its reconcile task by hand.
      createBackendModule({
        pluginId: 'fleet',
        moduleId: 'test-scheduler',
        register(env) {
          env.registerInit({
            deps: { s: coreServices.scheduler },
            async init({ s }) {
              scheduler = s;
            },
          });
        },
      }),
      databasePerPlugin(options.knex),
      mockServices.rootConfig.factory({
        data: {
          app: { baseUrl: 'http://localhost:3000' },
          fleet: {
            discovery: { kubeconfigDir: options.kubeconfigDir },
            health: {
              probeTimeout: { seconds: 2 },
              minOutage: { seconds: 0 },
              manualMinInterval: { seconds: 0 },
            },
            deploy: { pollInterval: { milliseconds: 100 } },
            permissions: { clusterAdmins: ['admins'] },
            ...options.fleet,
          },
        },
      }),
      catalogServiceMock.factory({
        entities: orgEntities(options.components),
      }),
      ...(options.features ?? []),
    ],
  });
  return {
    backend,
    server: backend.server,
    scheduler: () => scheduler!,
  };
}

/** The user's notifications, as the notifications backend lists them to that user. */
export function notificationsOf(user: string) {
  return mockCredentials.user.header(`user:default/${user}`);
}

export async function eventually<T>(
  what: string,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!done(value)) {
    if (Date.now() > deadline) {
      throw new Error(
        `Timed out waiting for ${what}; last: ${JSON.stringify(value)}`,
      );
    }
    await new Promise(resolve => setTimeout(resolve, 100));
    value = await read();
  }
  return value;
}
