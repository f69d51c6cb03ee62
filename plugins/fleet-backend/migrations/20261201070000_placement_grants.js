/*
 * Who may put an application on which clusters, when no user is there to ask: a placement by
 * selector or by the component's annotations is acted on by the reconcile, in the background.
 * The decision of the user who last registered, changed or deployed the application on
 * `fleet.cluster.deploy` is kept (ALLOW, DENY, or the policy's conditions, evaluated on each
 * cluster the placement selects), with the clusters the reconcile refused because of it.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable('fleet_placement_grants', table => {
    table.comment(
      'Per application: the fleet.cluster.deploy decision of its last writer, and the clusters its placement was refused',
    );
    table.string('application_id', 36).primary();
    table
      .text('decision')
      .nullable()
      .comment(
        'JSON policy decision: ALLOW, DENY or CONDITIONAL with conditions',
      );
    table.string('granted_by', 255).nullable();
    table.timestamp('granted_at', { useTz: true }).nullable();
    table
      .text('refused')
      .nullable()
      .comment(
        'JSON [{ cluster, reason }]: clusters the placement selects but may not use',
      );
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('fleet_placement_grants');
};
