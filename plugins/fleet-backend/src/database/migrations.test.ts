import { createTestDatabases } from '../testing/databases';
import {
  indexNames,
  migrateUntilBefore,
  migrationsDir,
} from './migrationSteps';

jest.setTimeout(60_000);

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
});
