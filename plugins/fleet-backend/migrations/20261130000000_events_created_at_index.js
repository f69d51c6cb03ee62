/*
 * Event retention: an index on the events' time, so that the daily clean-up finds the old events
 * without reading the whole table.
 *
 * On PostgreSQL the index is built CONCURRENTLY, outside a transaction: a plain CREATE INDEX
 * blocks every write to fleet_events (so every health transition, deploy and audit event) while it
 * reads what can be a very large table at upgrade. A build that fails half-way leaves an invalid
 * index behind and the migration unrecorded; the next start drops it and builds it again.
 */

exports.config = { transaction: false };

const INDEX = 'fleet_events_created_at_idx';

/** @param {import('knex').Knex} knex */
const isPostgres = knex => knex.client.dialect === 'postgresql';

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  if (isPostgres(knex)) {
    await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS ??', [INDEX]);
    await knex.raw('CREATE INDEX CONCURRENTLY ?? ON ?? (??)', [
      INDEX,
      'fleet_events',
      'created_at',
    ]);
    return;
  }
  await knex.schema.alterTable('fleet_events', table => {
    table.index(['created_at'], INDEX);
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  if (isPostgres(knex)) {
    await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS ??', [INDEX]);
    return;
  }
  await knex.schema.alterTable('fleet_events', table => {
    table.dropIndex(['created_at'], INDEX);
  });
};
