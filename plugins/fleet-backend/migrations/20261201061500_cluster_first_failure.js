/*
 * An outage is confirmed by failureThreshold consecutive failed probes that also span
 * fleet.health.minOutage: the time of the first of them is stored with the cluster, so that the
 * rule holds across replicas and restarts. Existing rows start without it: a cluster already
 * failing starts its clock at its next failed probe.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.alterTable('fleet_clusters', table => {
    table
      .timestamp('first_failure_at', { useTz: true })
      .nullable()
      .comment('When the first of the consecutive failed probes ran');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  // Plain ALTER TABLE ... DROP COLUMN on both databases: knex's SQLite dropColumn rebuilds the
  // table, and dropping fleet_clusters is refused while deployments reference it.
  await knex.raw('ALTER TABLE ?? DROP COLUMN ??', [
    'fleet_clusters',
    'first_failure_at',
  ]);
};
