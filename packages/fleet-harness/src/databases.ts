import { TestDatabases } from '@backstage/backend-test-utils';

/**
 * SQLite always; PostgreSQL when BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING names a
 * server (the README test command sets it whenever 127.0.0.1:5432 answers).
 */
export function createTestDatabases(): TestDatabases {
  return TestDatabases.create({
    ids: ['POSTGRES_15', 'SQLITE_3'],
    disableDocker: true,
  });
}
