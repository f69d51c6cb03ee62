import {
  mockServices,
  TestDatabases,
  type TestDatabaseId,
} from '@backstage/backend-test-utils';
import type { Knex } from 'knex';
import { DatabaseFleetStores } from '../database/DatabaseFleetStores';

/** What a pooled SQLite connection is, for better-sqlite3 (`pragma`) and sqlite3 (`run`). */
interface SqliteConnection {
  pragma?: (source: string) => unknown;
  run?: (sql: string, callback: () => void) => void;
}

function foreignKeysOn(connection: SqliteConnection): void {
  if (typeof connection.pragma === 'function') {
    connection.pragma('foreign_keys = ON');
  } else {
    connection.run?.('PRAGMA foreign_keys = ON', () => undefined);
  }
}

/**
 * SQLite enforces foreign keys per connection, only while `PRAGMA foreign_keys` is on.
 * better-sqlite3 builds turn it on by default, and Backstage's test engine asks through sqlite3's
 * `run`, which better-sqlite3 connections do not have. Here every connection asks with its
 * driver's own call (the one knex holds now, and any it opens later), so the tests of foreign
 * keys do not rest on a build option.
 */
async function enforceForeignKeys(knex: Knex): Promise<void> {
  knex.client.pool.on(
    'createSuccess',
    (_eventId: unknown, connection: SqliteConnection) =>
      foreignKeysOn(connection),
  );
  await knex.raw('PRAGMA foreign_keys = ON');
}

/**
 * SQLite always, with foreign keys enforced as PostgreSQL enforces them; PostgreSQL when
 * BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING names a server (the README test command
 * sets it, starting a throw-away server when none answers).
 */
export function createTestDatabases(): TestDatabases {
  const databases = TestDatabases.create({
    ids: ['POSTGRES_15', 'SQLITE_3'],
    disableDocker: true,
  });
  const init = databases.init.bind(databases);
  databases.init = async id => {
    const knex = await init(id);
    if (id.startsWith('SQLITE')) await enforceForeignKeys(knex);
    return knex;
  };
  return databases;
}

/** Fleet's stores on a fresh database of `databaseId`, migrated as the plugin migrates it. */
export async function createTestStores(
  databases: TestDatabases,
  databaseId: TestDatabaseId,
) {
  const knex = await databases.init(databaseId);
  const stores = await DatabaseFleetStores.create({
    database: mockServices.database({ knex, migrations: { skip: false } }),
  });
  return { knex, stores };
}

/** Every row of every Fleet table, to prove that a refused request changed nothing. */
export async function snapshotFleetTables(knex: Knex): Promise<string> {
  const tables: Record<string, string> = {
    fleet_clusters: 'name',
    fleet_applications: 'id',
    fleet_deployments: 'id',
    fleet_revisions: 'id',
    fleet_application_removals: 'application_id',
    fleet_placement_exclusions: 'application_id',
    fleet_ingress_hosts: 'host',
    fleet_events: 'id',
    fleet_state: 'key',
    fleet_locks: 'name',
  };
  const snapshot: Record<string, unknown[]> = {};
  for (const [table, key] of Object.entries(tables)) {
    snapshot[table] = await knex(table).select().orderBy(key);
  }
  return JSON.stringify(snapshot);
}
