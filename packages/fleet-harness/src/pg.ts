/*
 * Throw-away PostgreSQL databases for the benchmarks and the chaos suite: one fresh database per
 * run, created on the local server and dropped at the end (also on Ctrl-C, see cleanup.ts).
 */
import { randomBytes } from 'node:crypto';
import knexFactory, { Knex } from 'knex';
import { onCleanup } from './cleanup';

/** The server: FLEET_BENCH_PG, else the test databases' variable, else 127.0.0.1:5432. */
export const PG_URL =
  process.env.FLEET_BENCH_PG ??
  process.env.BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING ??
  'postgresql://postgres@127.0.0.1:5432';

function serverUrl(database: string): string {
  const url = new URL(PG_URL);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
    throw new Error(
      `Refusing to use PostgreSQL at ${url.hostname}: the benchmarks only target loopback`,
    );
  }
  url.pathname = `/${database}`;
  return url.toString();
}

export interface TempDatabase {
  name: string;
  connection: string;
  /** A new knex pool on the database (each "backend replica" gets its own). */
  knex(options?: { poolMax?: number }): Knex;
  /** Destroys the pools made by `knex()` and drops the database. */
  drop(): Promise<void>;
}

export async function createTempDatabase(
  prefix: string,
): Promise<TempDatabase> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`bad database name ${name}`);
  const admin = knexFactory({
    client: 'pg',
    connection: serverUrl('postgres'),
    pool: { min: 0, max: 1 },
  });
  try {
    await admin.raw(`CREATE DATABASE ${name}`);
  } finally {
    await admin.destroy();
  }
  const connection = serverUrl(name);
  const pools: Knex[] = [];
  let dropped = false;
  const drop = async () => {
    if (dropped) return;
    dropped = true;
    await Promise.all(pools.map(p => p.destroy().catch(() => undefined)));
    const dropper = knexFactory({
      client: 'pg',
      connection: serverUrl('postgres'),
      pool: { min: 0, max: 1 },
    });
    try {
      await dropper.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    } finally {
      await dropper.destroy();
    }
  };
  onCleanup(drop);
  return {
    name,
    connection,
    knex(options = {}) {
      const pool = knexFactory({
        client: 'pg',
        connection,
        pool: { min: 0, max: options.poolMax ?? 10 },
      });
      pools.push(pool);
      return pool;
    },
    drop,
  };
}

/** True when the PostgreSQL server answers (used to fail early with a clear message). */
export async function postgresAnswers(): Promise<boolean> {
  const admin = knexFactory({
    client: 'pg',
    connection: serverUrl('postgres'),
    pool: { min: 0, max: 1 },
    acquireConnectionTimeout: 5_000,
  });
  try {
    await admin.raw('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await admin.destroy();
  }
}
