/*
 * An explicit undeploy sticks: the cluster is excluded from the application's placement until
 * someone deploys it there again, so the reconcile does not place it back at its next run.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable('fleet_placement_exclusions', table => {
    table.comment(
      'Clusters an application was undeployed from by hand: the placement skips them',
    );
    table.string('application_id', 36).notNullable();
    table.string('cluster', 63).notNullable();
    table.string('created_by', 255).notNullable();
    table.timestamp('created_at', { useTz: true }).notNullable();
    table.primary(['application_id', 'cluster']);
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('fleet_placement_exclusions');
};
