/*
 * Revisions: each deployment keeps its own desired state, an immutable snapshot per change, so a
 * deploy to one cluster never changes what another cluster should run. Every existing deployment's
 * current state becomes its revision 1: its image, and the application's replicas, env and
 * resources as they are now; its outcome DEPLOYED when the deployment is DEPLOYED (or DEGRADED by
 * its cluster or workload after reaching it), FAILED when it failed, none while it rolls out.
 */

/** A migrated revision's outcome: DEPLOYED when its rollout got there, FAILED, or none yet. */
function outcomeOf(reached, status) {
  if (reached) return 'DEPLOYED';
  return status === 'FAILED' ? 'FAILED' : null;
}

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable('fleet_revisions', table => {
    table.comment(
      'What one deployment should run, one immutable row per change',
    );
    table.bigIncrements('id').primary();
    table
      .string('deployment_id', 36)
      .notNullable()
      .comment(
        'Kept when the deployment is undeployed: its history stays readable',
      );
    table.string('application_id', 36).notNullable();
    table.string('cluster', 63).notNullable();
    table.integer('revision').notNullable().comment('1, 2, … per deployment');
    table.text('image').notNullable();
    table.integer('replicas').nullable().comment('null: the default replicas');
    table.text('env').nullable().comment('JSON map');
    table.text('resources').nullable().comment('JSON { requests, limits }');
    table
      .string('namespace', 63)
      .nullable()
      .comment('null: the configured default namespace');
    table
      .string('cause', 16)
      .notNullable()
      .comment('deploy | release | placement | rollback | auto-rollback');
    table.string('created_by', 255).notNullable();
    table.timestamp('created_at', { useTz: true }).notNullable();
    table
      .string('outcome', 16)
      .nullable()
      .comment('DEPLOYED or FAILED once known');
    table.string('outcome_reason', 64).nullable();
    table.timestamp('outcome_at', { useTz: true }).nullable();
    table.unique(['deployment_id', 'revision'], {
      indexName: 'fleet_revisions_deployment_revision_uniq',
    });
    table.index(['application_id'], 'fleet_revisions_application_idx');
  });

  const deployments = await knex('fleet_deployments as d')
    .join('fleet_applications as a', 'a.id', 'd.application_id')
    .select(
      'd.id',
      'd.application_id',
      'd.cluster',
      'd.status',
      'd.status_reason',
      'd.image',
      'd.last_applied_at',
      'd.created_at',
      'd.updated_at',
      'a.spec',
    );
  const rows = deployments.map(d => {
    let spec = {};
    try {
      spec = JSON.parse(d.spec) || {};
    } catch {
      spec = {};
    }
    // DEGRADED because of the cluster or the workload: its rollout had reached DEPLOYED.
    const reached =
      d.status === 'DEPLOYED' ||
      (d.status === 'DEGRADED' &&
        (d.status_reason === 'CLUSTER_OFFLINE' ||
          d.status_reason === 'WORKLOAD_UNHEALTHY'));
    const final = reached || d.status === 'FAILED';
    return {
      deployment_id: d.id,
      application_id: d.application_id,
      cluster: d.cluster,
      revision: 1,
      image: d.image || spec.image || '',
      replicas: typeof spec.replicas === 'number' ? spec.replicas : null,
      env: spec.env ? JSON.stringify(spec.env) : null,
      resources: spec.resources ? JSON.stringify(spec.resources) : null,
      namespace: null,
      cause: 'deploy',
      created_by: 'fleet-migration',
      created_at: d.last_applied_at || d.created_at,
      outcome: outcomeOf(reached, d.status),
      outcome_reason: d.status === 'FAILED' ? d.status_reason : null,
      outcome_at: final ? d.updated_at : null,
    };
  });
  if (rows.length > 0) await knex.batchInsert('fleet_revisions', rows, 200);
  await knex('fleet_deployments').update({ revision: 1 });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('fleet_revisions');
};
