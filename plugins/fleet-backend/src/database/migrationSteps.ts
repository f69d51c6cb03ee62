import { Knex } from 'knex';
import fs from 'node:fs';
import { DatabaseFleetStores } from './DatabaseFleetStores';

/*
 * Stepping through Fleet's migrations one file at a time, for the migration tests: up to the one
 * under test, then that one up and down.
 */

export const migrationsDir = DatabaseFleetStores.migrationsDir;
export const migrationFiles = fs
  .readdirSync(migrationsDir)
  .filter(f => f.endsWith('.js'))
  .sort();

export async function indexNames(knex: Knex, table: string): Promise<string[]> {
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

export async function migrateUntilBefore(
  knex: Knex,
  target: string,
): Promise<void> {
  const index = migrationFiles.indexOf(target);
  if (index === -1) throw new Error(`Unknown migration ${target}`);
  for (let i = 0; i < index; i++) {
    await knex.migrate.up({
      directory: migrationsDir,
      name: migrationFiles[i],
    });
  }
}

/**
 * Runs, one batch each, the migrations after `target`: a test of an older migration uses the
 * stores, which read and write today's tables. `undoAfter` takes them back down, newest first.
 */
export async function migrateAfter(knex: Knex, target: string): Promise<void> {
  const index = migrationFiles.indexOf(target);
  if (index === -1) throw new Error(`Unknown migration ${target}`);
  for (const name of migrationFiles.slice(index + 1)) {
    await knex.migrate.up({ directory: migrationsDir, name });
  }
}

export async function undoAfter(knex: Knex, target: string): Promise<void> {
  const index = migrationFiles.indexOf(target);
  if (index === -1) throw new Error(`Unknown migration ${target}`);
  for (const name of migrationFiles.slice(index + 1).reverse()) {
    await knex.migrate.down({ directory: migrationsDir, name });
  }
}
