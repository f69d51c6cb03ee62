import { Knex } from 'knex';
import fs from 'node:fs';
import { createTestDatabases } from '@cnp/fleet-harness';
import { DatabaseFleetStores } from './DatabaseFleetStores';

jest.setTimeout(60_000);

const migrationsDir = DatabaseFleetStores.migrationsDir;
const migrationFiles = fs
  .readdirSync(migrationsDir)
  .filter(f => f.endsWith('.js'))
  .sort();

async function indexNames(knex: Knex, table: string): Promise<string[]> {
  if (knex.client.config.client.includes('sqlite')) {
    const rows = await knex.raw(`PRAGMA index_list(??)`, [table]);
    return rows.map((r: { name: string }) => r.name);
  }
  const result = await knex.raw(
    'SELECT indexname FROM pg_indexes WHERE tablename = ?',
    [table],
  );
  return result.rows.map((r: { indexname: string }) => r.indexname);
}

async function migrateUntilBefore(knex: Knex, target: string): Promise<void> {
  const index = migrationFiles.indexOf(target);
  if (index === -1) throw new Error(`Unknown migration ${target}`);
  for (let i = 0; i < index; i++) {
    await knex.migrate.up({
      directory: migrationsDir,
      name: migrationFiles[i],
    });
  }
}

const databases = createTestDatabases();

describe.each(databases.eachSupportedId())('migrations (%s)', databaseId => {
  it('20261129000000_init.js goes up and down, keeping the rows it is given', async () => {
    const knex = await databases.init(databaseId);
    await migrateUntilBefore(knex, '20261129000000_init.js');
    await knex.migrate.up({
      directory: migrationsDir,
      name: '20261129000000_init.js',
    });

    const now = new Date();
    await knex('fleet_clusters').insert({
      name: 'c1',
      endpoint: 'https://127.0.0.1:6443',
      kubeconfig_ref: '/etc/kube/c1.yaml',
      source: 'discovered',
      created_at: now,
      updated_at: now,
    });
    await knex('fleet_applications').insert({
      id: 'a1',
      entity_ref: 'component:default/payments',
      name: 'payments',
      spec: '{}',
      created_at: now,
      updated_at: now,
    });
    await knex('fleet_deployments').insert({
      id: 'd1',
      application_id: 'a1',
      cluster: 'c1',
      status: 'DEPLOYED',
      created_at: now,
      updated_at: now,
    });
    const cluster = await knex('fleet_clusters').where({ name: 'c1' }).first();
    expect(cluster).toMatchObject({
      status: 'UNKNOWN',
      consecutive_failures: 0,
      labels: '{}',
    });
    // A deployment on a cluster that does not exist is refused by the foreign key, on both
    // databases. Matched by its message: the driver's error class may come from another test
    // file's module registry (a native module is loaded once per worker), so it is not an
    // `instanceof Error` here and `toThrow` would not see it.
    await expect(
      knex('fleet_deployments').insert({
        id: 'd2',
        application_id: 'a1',
        cluster: 'no-such-cluster',
        status: 'DEPLOYED',
        created_at: now,
        updated_at: now,
      }),
    ).rejects.toMatchObject({
      message: expect.stringMatching(
        /FOREIGN KEY constraint failed|foreign key constraint/i,
      ),
    });
    expect(
      await knex('fleet_deployments').where({ id: 'd2' }).first(),
    ).toBeUndefined();

    await knex.migrate.down({ directory: migrationsDir });
    for (const table of [
      'fleet_clusters',
      'fleet_applications',
      'fleet_deployments',
      'fleet_events',
      'fleet_state',
      'fleet_locks',
    ]) {
      expect(await knex.schema.hasTable(table)).toBe(false);
    }
    await knex.destroy();
  });
  it('20261129100000_sync_differences.js adds and removes the differences column, keeping deployments', async () => {
    const knex = await databases.init(databaseId);
    await migrateUntilBefore(knex, '20261129100000_sync_differences.js');
    const now = new Date();
    await knex('fleet_clusters').insert({
      name: 'c1',
      endpoint: 'https://c1',
      kubeconfig_ref: '/k',
      source: 'manual',
      created_at: now,
      updated_at: now,
    });
    await knex('fleet_applications').insert({
      id: 'a1',
      entity_ref: 'component:default/web',
      name: 'web',
      spec: '{}',
      created_at: now,
      updated_at: now,
    });
    await knex('fleet_deployments').insert({
      id: 'd1',
      application_id: 'a1',
      cluster: 'c1',
      status: 'DEPLOYED',
      created_at: now,
      updated_at: now,
    });

    await knex.migrate.up({
      directory: migrationsDir,
      name: '20261129100000_sync_differences.js',
    });
    expect(
      await knex('fleet_deployments').where({ id: 'd1' }).first(),
    ).toMatchObject({ status: 'DEPLOYED', sync_differences: null });
    await knex('fleet_deployments').where({ id: 'd1' }).update({
      sync_differences: '[{"kind":"Service","name":"web","path":"/"}]',
    });

    await knex.migrate.down({ directory: migrationsDir });
    expect(
      await knex.schema.hasColumn('fleet_deployments', 'sync_differences'),
    ).toBe(false);
    expect(
      await knex('fleet_deployments').where({ id: 'd1' }).first(),
    ).toMatchObject({ status: 'DEPLOYED' });
    await knex.destroy();
  });
  it('20261130000000_events_created_at_index.js adds and drops the index on the events time, keeping events', async () => {
    const knex = await databases.init(databaseId);
    await migrateUntilBefore(knex, '20261130000000_events_created_at_index.js');
    const createdAt = new Date('2026-11-29T10:00:00.000Z');
    await knex('fleet_events').insert({
      subject_kind: 'cluster',
      subject: 'c1',
      actor: 'test',
      to_status: 'ONLINE',
      created_at: createdAt,
    });
    expect(await indexNames(knex, 'fleet_events')).not.toContain(
      'fleet_events_created_at_idx',
    );

    await knex.migrate.up({
      directory: migrationsDir,
      name: '20261130000000_events_created_at_index.js',
    });
    expect(await indexNames(knex, 'fleet_events')).toContain(
      'fleet_events_created_at_idx',
    );
    expect(
      await knex('fleet_events')
        .where('created_at', '<', new Date(createdAt.getTime() + 1))
        .select('subject'),
    ).toEqual([{ subject: 'c1' }]);

    await knex.migrate.down({ directory: migrationsDir });
    expect(await indexNames(knex, 'fleet_events')).not.toContain(
      'fleet_events_created_at_idx',
    );
    expect(await indexNames(knex, 'fleet_events')).toContain(
      'fleet_events_subject_idx',
    );
    expect(await knex('fleet_events').select('subject', 'to_status')).toEqual([
      { subject: 'c1', to_status: 'ONLINE' },
    ]);
    await knex.destroy();
  });

  it("20261201000000_revisions.js makes each deployment's current state its revision 1, nothing lost, and goes back down", async () => {
    const knex = await databases.init(databaseId);
    await migrateUntilBefore(knex, '20261201000000_revisions.js');
    const at = new Date('2026-11-30T10:00:00.000Z');
    await knex('fleet_clusters').insert(
      ['east', 'west'].map(name => ({
        name,
        endpoint: `https://${name}:6443`,
        kubeconfig_ref: `/k/${name}.yaml`,
        source: 'discovered',
        labels: '{}',
        status: 'ONLINE',
        created_at: at,
        updated_at: at,
      })),
    );
    await knex('fleet_applications').insert({
      id: 'a1',
      entity_ref: 'component:default/payments',
      name: 'payments',
      spec: JSON.stringify({
        image: 'pay:2.0.0',
        replicas: 4,
        env: { MODE: 'live' },
        resources: { requests: { cpu: '250m' } },
      }),
      placement: '{}',
      created_at: at,
      updated_at: at,
    });
    await knex('fleet_deployments').insert([
      {
        id: 'd-east',
        application_id: 'a1',
        cluster: 'east',
        status: 'DEPLOYED',
        sync_status: 'SYNCED',
        image: 'pay:1.9.0',
        revision: 7,
        last_applied_at: at,
        created_at: at,
        updated_at: at,
      },
      {
        id: 'd-west',
        application_id: 'a1',
        cluster: 'west',
        status: 'FAILED',
        status_reason: 'PROGRESS_DEADLINE_EXCEEDED',
        sync_status: 'UNKNOWN',
        image: 'pay:2.0.0',
        revision: 2,
        created_at: at,
        updated_at: at,
      },
    ]);

    await knex.migrate.up({
      directory: migrationsDir,
      name: '20261201000000_revisions.js',
    });
    const revisions = await knex('fleet_revisions')
      .orderBy('deployment_id')
      .select(
        'deployment_id',
        'application_id',
        'cluster',
        'revision',
        'image',
        'replicas',
        'env',
        'resources',
        'namespace',
        'cause',
        'outcome',
        'outcome_reason',
      );
    expect(revisions).toEqual([
      {
        deployment_id: 'd-east',
        application_id: 'a1',
        cluster: 'east',
        revision: 1,
        image: 'pay:1.9.0',
        replicas: 4,
        env: JSON.stringify({ MODE: 'live' }),
        resources: JSON.stringify({ requests: { cpu: '250m' } }),
        namespace: null,
        cause: 'deploy',
        outcome: 'DEPLOYED',
        outcome_reason: null,
      },
      {
        deployment_id: 'd-west',
        application_id: 'a1',
        cluster: 'west',
        revision: 1,
        image: 'pay:2.0.0',
        replicas: 4,
        env: JSON.stringify({ MODE: 'live' }),
        resources: JSON.stringify({ requests: { cpu: '250m' } }),
        namespace: null,
        cause: 'deploy',
        outcome: 'FAILED',
        outcome_reason: 'PROGRESS_DEADLINE_EXCEEDED',
      },
    ]);
    expect(
      await knex('fleet_deployments')
        .orderBy('id')
        .select('id', 'status', 'image', 'revision'),
    ).toEqual([
      { id: 'd-east', status: 'DEPLOYED', image: 'pay:1.9.0', revision: 1 },
      { id: 'd-west', status: 'FAILED', image: 'pay:2.0.0', revision: 1 },
    ]);

    await knex.migrate.down({ directory: migrationsDir });
    expect(await knex.schema.hasTable('fleet_revisions')).toBe(false);
    expect(
      await knex('fleet_deployments').orderBy('id').select('id', 'image'),
    ).toEqual([
      { id: 'd-east', image: 'pay:1.9.0' },
      { id: 'd-west', image: 'pay:2.0.0' },
    ]);
    await knex.destroy();
  });

  it('20261201010000_deployment_placed.js adds placed (true for every row) and the removals table, and goes back down keeping every row', async () => {
    const knex = await databases.init(databaseId);
    await migrateUntilBefore(knex, '20261201010000_deployment_placed.js');
    const at = new Date('2026-12-01T10:00:00.000Z');
    await knex('fleet_clusters').insert({
      name: 'east',
      endpoint: 'https://east:6443',
      kubeconfig_ref: '/k/east.yaml',
      source: 'manual',
      labels: '{}',
      status: 'ONLINE',
      created_at: at,
      updated_at: at,
    });
    await knex('fleet_applications').insert({
      id: 'a1',
      entity_ref: 'component:default/web',
      name: 'web',
      spec: '{}',
      placement: '{}',
      created_at: at,
      updated_at: at,
    });
    await knex('fleet_deployments').insert({
      id: 'd1',
      application_id: 'a1',
      cluster: 'east',
      status: 'DEPLOYED',
      revision: 1,
      created_at: at,
      updated_at: at,
    });

    await knex.migrate.up({
      directory: migrationsDir,
      name: '20261201010000_deployment_placed.js',
    });
    const deployment = await knex('fleet_deployments')
      .where({ id: 'd1' })
      .first();
    expect(!!deployment.placed).toBe(true);
    expect(deployment.status).toBe('DEPLOYED');
    await knex('fleet_application_removals').insert({
      application_id: 'a1',
      requested_at: at,
    });

    await knex.migrate.down({ directory: migrationsDir });
    expect(await knex.schema.hasColumn('fleet_deployments', 'placed')).toBe(
      false,
    );
    expect(await knex.schema.hasTable('fleet_application_removals')).toBe(
      false,
    );
    expect(await knex('fleet_applications').select('id')).toEqual([
      { id: 'a1' },
    ]);
    expect(
      await knex('fleet_deployments').select('id', 'status', 'revision'),
    ).toEqual([{ id: 'd1', status: 'DEPLOYED', revision: 1 }]);
    await knex.destroy();
  });

  it('20261201020000_releases.js adds the releases table and drops it again', async () => {
    const knex = await databases.init(databaseId);
    await migrateUntilBefore(knex, '20261201020000_releases.js');
    expect(await knex.schema.hasTable('fleet_releases')).toBe(false);
    await knex.migrate.up({
      directory: migrationsDir,
      name: '20261201020000_releases.js',
    });
    await knex('fleet_releases').insert({
      id: 'r1',
      application_id: 'a1',
      created_by: 'test',
      created_at: new Date('2026-12-01T10:00:00.000Z'),
      request: JSON.stringify({ image: 'x:2' }),
      targets: JSON.stringify([
        { cluster: 'east', deploymentId: 'd1', revision: 2 },
      ]),
      skipped: '[]',
    });
    expect(
      await knex('fleet_releases').select('id', 'phase', 'strategy'),
    ).toEqual([{ id: 'r1', phase: null, strategy: null }]);
    await knex.migrate.down({ directory: migrationsDir });
    expect(await knex.schema.hasTable('fleet_releases')).toBe(false);
    await knex.destroy();
  });

  it("20261201030000_revision_port.js gives every revision its application's port (8000 by default) and drops it again", async () => {
    const knex = await databases.init(databaseId);
    await migrateUntilBefore(knex, '20261201030000_revision_port.js');
    const at = new Date('2026-12-01T10:00:00.000Z');
    await knex('fleet_applications').insert([
      {
        id: 'a-port',
        entity_ref: 'component:default/with-port',
        name: 'with-port',
        spec: JSON.stringify({ image: 'x:1', port: 9000 }),
        placement: '{}',
        created_at: at,
        updated_at: at,
      },
      {
        id: 'a-none',
        entity_ref: 'component:default/no-port',
        name: 'no-port',
        spec: '{}',
        placement: '{}',
        created_at: at,
        updated_at: at,
      },
    ]);
    await knex('fleet_revisions').insert(
      ['a-port', 'a-none'].map(applicationId => ({
        deployment_id: `d-${applicationId}`,
        application_id: applicationId,
        cluster: 'east',
        revision: 1,
        image: 'x:1',
        cause: 'deploy',
        created_by: 'test',
        created_at: at,
      })),
    );
    await knex.migrate.up({
      directory: migrationsDir,
      name: '20261201030000_revision_port.js',
    });
    expect(
      await knex('fleet_revisions')
        .orderBy('application_id')
        .select('application_id', 'port'),
    ).toEqual([
      { application_id: 'a-none', port: 8000 },
      { application_id: 'a-port', port: 9000 },
    ]);
    await knex.migrate.down({ directory: migrationsDir });
    expect(await knex.schema.hasColumn('fleet_revisions', 'port')).toBe(false);
    expect(await knex('fleet_revisions').count({ n: '*' })).toEqual([
      { n: expect.anything() },
    ]);
    expect(
      Number((await knex('fleet_revisions').count({ n: '*' }).first())!.n),
    ).toBe(2);
    await knex.destroy();
  });

  it('20261201040000_placement_exclusions.js adds the exclusions table and drops it again', async () => {
    const knex = await databases.init(databaseId);
    await migrateUntilBefore(knex, '20261201040000_placement_exclusions.js');
    await knex.migrate.up({
      directory: migrationsDir,
      name: '20261201040000_placement_exclusions.js',
    });
    await knex('fleet_placement_exclusions').insert({
      application_id: 'a1',
      cluster: 'east',
      created_by: 'test',
      created_at: new Date('2026-12-01T10:00:00.000Z'),
    });
    await expect(
      knex('fleet_placement_exclusions').insert({
        application_id: 'a1',
        cluster: 'east',
        created_by: 'again',
        created_at: new Date('2026-12-01T10:00:00.000Z'),
      }),
    ).rejects.toMatchObject({
      message: expect.stringMatching(/unique|duplicate/i),
    });
    await knex.migrate.down({ directory: migrationsDir });
    expect(await knex.schema.hasTable('fleet_placement_exclusions')).toBe(
      false,
    );
    await knex.destroy();
  });
});
