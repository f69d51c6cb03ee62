/*
 * Drift detection: what differs between the live objects and the desired ones, for deployments
 * that are OUT_OF_SYNC.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.alterTable('fleet_deployments', table => {
    table
      .text('sync_differences')
      .nullable()
      .comment(
        'JSON list of { kind, name, path } that differ, while OUT_OF_SYNC',
      );
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.alterTable('fleet_deployments', table => {
    table.dropColumn('sync_differences');
  });
};
