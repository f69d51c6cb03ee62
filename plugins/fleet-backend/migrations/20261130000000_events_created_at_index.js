/*
 * Event retention: an index on the events' time, so that the daily clean-up finds the old events
 * without reading the whole table.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.alterTable('fleet_events', table => {
    table.index(['created_at'], 'fleet_events_created_at_idx');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.alterTable('fleet_events', table => {
    table.dropIndex(['created_at'], 'fleet_events_created_at_idx');
  });
};
