import { createTestDatabases } from '../testing/databases';
import { isUniqueViolation } from './dialect';
import {
  indexNames,
  migrateUntilBefore,
  migrationsDir,
} from './migrationSteps';

jest.setTimeout(60_000);

const databases = createTestDatabases();

describe.each(databases.eachSupportedId())(
  'cluster identity migration (%s)',
  databaseId => {
    it('20261201064000_cluster_identity.js gives every cluster the server of its endpoint and an unknown CA, makes a known (server, CA) unique, and goes back down keeping every cluster', async () => {
      const knex = await databases.init(databaseId);
      const name = '20261201064000_cluster_identity.js';
      await migrateUntilBefore(knex, name);
      const at = new Date('2026-12-01T10:00:00.000Z');
      const cluster = (row: Record<string, unknown>) => ({
        kubeconfig_ref: '/k/c.yaml',
        source: 'discovered',
        labels: '{"env":"prod"}',
        status: 'ONLINE',
        consecutive_failures: 0,
        consecutive_successes: 3,
        created_at: at,
        updated_at: at,
        ...row,
      });
      // Two names for one server were allowed before: both stay.
      await knex('fleet_clusters').insert([
        cluster({ name: 'prod', endpoint: 'https://Prod.example:443/' }),
        cluster({ name: 'prod-copy', endpoint: 'https://prod.example' }),
        cluster({
          name: 'lab',
          endpoint: 'https://10.0.0.1:6443/clusters/lab/',
        }),
      ]);

      await knex.migrate.up({ directory: migrationsDir, name });
      const rows = await knex('fleet_clusters')
        .select('name', 'identity_server', 'identity_ca', 'labels')
        .orderBy('name');
      expect(rows).toEqual([
        {
          name: 'lab',
          identity_server: 'https://10.0.0.1:6443/clusters/lab',
          identity_ca: null,
          labels: '{"env":"prod"}',
        },
        {
          name: 'prod',
          identity_server: 'https://prod.example',
          identity_ca: null,
          labels: '{"env":"prod"}',
        },
        {
          name: 'prod-copy',
          identity_server: 'https://prod.example',
          identity_ca: null,
          labels: '{"env":"prod"}',
        },
      ]);
      expect(await indexNames(knex, 'fleet_clusters')).toContain(
        'fleet_clusters_identity_uniq',
      );
      await knex('fleet_clusters')
        .where({ name: 'prod' })
        .update({ identity_ca: 'sha256:aa' });
      // The same known identity twice is refused by the database itself.
      const refused = await knex('fleet_clusters')
        .where({ name: 'prod-copy' })
        .update({ identity_ca: 'sha256:aa' })
        .then(
          () => undefined,
          error => error,
        );
      expect(isUniqueViolation(refused)).toBe(true);

      await knex.migrate.down({ directory: migrationsDir });
      const back = await knex('fleet_clusters').orderBy('name');
      expect(back.map(r => r.name)).toEqual(['lab', 'prod', 'prod-copy']);
      expect(back[1]).not.toHaveProperty('identity_server');
      expect(back[1]).not.toHaveProperty('identity_ca');
      expect(back[1]).toMatchObject({
        endpoint: 'https://Prod.example:443/',
        labels: '{"env":"prod"}',
      });
      expect(await indexNames(knex, 'fleet_clusters')).not.toContain(
        'fleet_clusters_identity_uniq',
      );
    });
    it('20261206000000_cluster_identity_aliases.js writes stored identities in the form that takes host aliases as one server, leaving a twin registered before it as it was', async () => {
      const knex = await databases.init(databaseId);
      const name = '20261206000000_cluster_identity_aliases.js';
      await migrateUntilBefore(knex, name);
      const at = new Date('2026-12-01T10:00:00.000Z');
      const cluster = (row: Record<string, unknown>) => ({
        kubeconfig_ref: '/k/c.yaml',
        source: 'manual',
        labels: '{}',
        status: 'ONLINE',
        consecutive_failures: 0,
        consecutive_successes: 0,
        created_at: at,
        updated_at: at,
        ...row,
      });
      await knex('fleet_clusters').insert([
        cluster({
          name: 'a-local',
          endpoint: 'https://localhost:6550//clusters/sim-1',
          identity_server: 'https://localhost:6550//clusters/sim-1',
          identity_ca: 'sha256:aa',
        }),
        cluster({
          name: 'b-loopback',
          endpoint: 'https://127.0.0.1:6550/clusters/sim-1',
          identity_server: 'https://127.0.0.1:6550/clusters/sim-1',
          identity_ca: 'sha256:aa',
        }),
        cluster({
          name: 'c-mapped',
          endpoint: 'https://[::ffff:127.0.0.1]:6550/clusters/sim-2',
          identity_server: 'https://[::ffff:7f00:1]:6550/clusters/sim-2',
          identity_ca: null,
        }),
      ]);
      await knex.migrate.up({ directory: migrationsDir, name });
      const rows = await knex('fleet_clusters')
        .select('name', 'identity_server')
        .orderBy('name');
      expect(rows).toEqual([
        // Its new form is b-loopback's (server, CA): it keeps the old one.
        {
          name: 'a-local',
          identity_server: 'https://localhost:6550//clusters/sim-1',
        },
        {
          name: 'b-loopback',
          identity_server: 'https://127.0.0.1:6550/clusters/sim-1',
        },
        {
          name: 'c-mapped',
          identity_server: 'https://127.0.0.1:6550/clusters/sim-2',
        },
      ]);
      await knex.migrate.down({ directory: migrationsDir });
      expect(
        await knex('fleet_clusters').select('name').orderBy('name'),
      ).toHaveLength(3);
    });
  },
);
