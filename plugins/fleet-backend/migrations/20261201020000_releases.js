/*
 * Fleet releases: one request that makes a new revision on every cluster an application is
 * placed on (or the named ones). The release keeps what was asked, which clusters it targeted
 * with which revision, and which it skipped; the progress of each cluster is read from its
 * deployment. `strategy` and `phase` hold the progressive delivery state when a release has a
 * strategy.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable('fleet_releases', table => {
    table.comment('Fleet releases of an application, with their targets');
    table.string('id', 36).primary().notNullable();
    table.string('application_id', 36).notNullable();
    table.string('created_by', 255).notNullable();
    table.timestamp('created_at', { useTz: true }).notNullable();
    table
      .text('request')
      .notNullable()
      .comment('JSON: image, replicas, env as asked');
    table.text('strategy').nullable().comment('JSON strategy, when one is set');
    table
      .string('phase', 32)
      .nullable()
      .comment('where a release with a strategy stands');
    table
      .text('targets')
      .notNullable()
      .comment('JSON list of { cluster, deploymentId, revision }');
    table
      .text('skipped')
      .notNullable()
      .comment('JSON list of { cluster, reason }');
    table.index(['application_id'], 'fleet_releases_application_idx');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('fleet_releases');
};
