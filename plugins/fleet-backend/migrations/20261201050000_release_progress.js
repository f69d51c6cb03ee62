/*
 * Progressive releases: a release with a strategy is a state machine that survives restarts. Its
 * state (waves, each cluster's step and weight, analysis, why it aborted) is one JSON document,
 * written with a version so that two writers (the scheduled task and a promote or abort through
 * the API on another replica) never overwrite each other.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.alterTable('fleet_releases', table => {
    table
      .text('progress')
      .nullable()
      .comment('JSON: the running state of a release with a strategy');
    table
      .integer('version')
      .notNullable()
      .defaultTo(0)
      .comment('Bumped on every progress write');
    table.timestamp('updated_at', { useTz: true }).nullable();
    table.index(['phase'], 'fleet_releases_phase_idx');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.alterTable('fleet_releases', table => {
    table.dropIndex(['phase'], 'fleet_releases_phase_idx');
    table.dropColumn('progress');
    table.dropColumn('version');
    table.dropColumn('updated_at');
  });
};
