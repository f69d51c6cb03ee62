/*
 * Undeploy and placement that stops selecting a cluster: a deployment there is kept, marked as no
 * longer placed (never healed again), unless the application asks to prune it; an application
 * being removed is marked until its last deployment is gone.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.alterTable('fleet_deployments', table => {
    table
      .boolean('placed')
      .notNullable()
      .defaultTo(true)
      .comment('false once the placement no longer selects the cluster');
  });
  // A table of its own rather than a column of fleet_applications: on SQLite, dropping that
  // column again would rebuild the table, and inside the migration's transaction the rebuild
  // would cascade-delete every deployment.
  await knex.schema.createTable('fleet_application_removals', table => {
    table.comment(
      'Applications being removed, until their last deployment is gone',
    );
    table.string('application_id', 36).primary().notNullable();
    table.timestamp('requested_at', { useTz: true }).notNullable();
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('fleet_application_removals');
  await knex.schema.alterTable('fleet_deployments', table => {
    table.dropColumn('placed');
  });
};
