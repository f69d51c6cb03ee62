/*
 * Fleet's initial schema: clusters, applications, deployments, their status history, the
 * fleet-level state (mass-outage warning, last cycle) and the lease that keeps health cycles
 * from overlapping across backend replicas.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable('fleet_clusters', table => {
    table.comment('Kubernetes clusters Fleet knows, with their health state');
    table.string('name', 63).primary().notNullable().comment('DNS-1123 label');
    table.text('endpoint').notNullable().comment('API server URL');
    table
      .text('kubeconfig_ref')
      .notNullable()
      .comment(
        'A kubeconfig file path or an opaque reference, never the contents',
      );
    table.string('context', 255).nullable().comment('Kubeconfig context name');
    table.string('source', 16).notNullable().comment('discovered | manual');
    table.text('labels').notNullable().defaultTo('{}').comment('JSON map');
    table.string('status', 16).notNullable().defaultTo('UNKNOWN');
    table.text('status_reason').nullable();
    table.integer('consecutive_failures').notNullable().defaultTo(0);
    table.integer('consecutive_successes').notNullable().defaultTo(0);
    table
      .integer('failure_threshold')
      .nullable()
      .comment('Per-cluster override');
    table
      .timestamp('cascade_held_at', { useTz: true })
      .nullable()
      .comment('Set when the mass-outage guard held this cluster cascade');
    table.timestamp('last_probe_at', { useTz: true }).nullable();
    table.timestamp('last_success_at', { useTz: true }).nullable();
    table.timestamp('last_transition_at', { useTz: true }).nullable();
    table.integer('probe_latency_ms').nullable();
    table.string('server_version', 64).nullable();
    table.timestamp('created_at', { useTz: true }).notNullable();
    table.timestamp('updated_at', { useTz: true }).notNullable();
    table.index(['status'], 'fleet_clusters_status_idx');
  });

  await knex.schema.createTable('fleet_applications', table => {
    table.comment('Catalog components that Fleet deploys');
    table.string('id', 36).primary().notNullable();
    table
      .string('entity_ref', 255)
      .notNullable()
      .unique('fleet_applications_entity_ref_uniq');
    table
      .string('name', 63)
      .notNullable()
      .comment('DNS-1123 name derived from the entity');
    table.string('origin', 16).nullable().comment('scaffolded | imported');
    table.text('spec').notNullable().comment('JSON application spec');
    table
      .text('placement')
      .notNullable()
      .defaultTo('{}')
      .comment('JSON placement');
    table.timestamp('created_at', { useTz: true }).notNullable();
    table.timestamp('updated_at', { useTz: true }).notNullable();
  });

  await knex.schema.createTable('fleet_deployments', table => {
    table.comment('One application on one cluster');
    table.string('id', 36).primary().notNullable();
    table
      .string('application_id', 36)
      .notNullable()
      .references('id')
      .inTable('fleet_applications')
      .onDelete('CASCADE');
    table
      .string('cluster', 63)
      .notNullable()
      .references('name')
      .inTable('fleet_clusters')
      .onDelete('RESTRICT');
    table.string('status', 16).notNullable();
    table.string('status_reason', 64).nullable();
    table.text('message').nullable();
    table.string('sync_status', 16).notNullable().defaultTo('UNKNOWN');
    table.text('image').nullable();
    table.integer('revision').notNullable().defaultTo(0);
    table.timestamp('last_applied_at', { useTz: true }).nullable();
    table.timestamp('last_synced_at', { useTz: true }).nullable();
    table.timestamp('created_at', { useTz: true }).notNullable();
    table.timestamp('updated_at', { useTz: true }).notNullable();
    table.unique(['application_id', 'cluster'], {
      indexName: 'fleet_deployments_app_cluster_uniq',
    });
    table.index(['cluster', 'status'], 'fleet_deployments_cluster_status_idx');
  });

  await knex.schema.createTable('fleet_events', table => {
    table.comment('Every status change of a cluster or a deployment');
    table.bigIncrements('id').primary();
    table
      .string('subject_kind', 16)
      .notNullable()
      .comment('cluster | deployment');
    table
      .string('subject', 63)
      .notNullable()
      .comment('Cluster name or deployment id');
    table
      .string('actor', 255)
      .notNullable()
      .comment('Who or what made the change');
    table.string('from_status', 16).nullable();
    table.string('to_status', 16).notNullable();
    table.string('reason', 64).nullable();
    table.text('message').nullable();
    table.timestamp('created_at', { useTz: true }).notNullable();
    table.index(['subject_kind', 'subject'], 'fleet_events_subject_idx');
  });

  await knex.schema.createTable('fleet_state', table => {
    table.comment('Fleet-level state, e.g. the mass-outage warning');
    table.string('key', 64).primary().notNullable();
    table.text('value').notNullable().comment('JSON');
    table.timestamp('updated_at', { useTz: true }).notNullable();
  });

  await knex.schema.createTable('fleet_locks', table => {
    table.comment('Leases that keep work from overlapping across replicas');
    table.string('name', 64).primary().notNullable();
    table.string('holder', 255).notNullable();
    table.timestamp('expires_at', { useTz: true }).notNullable();
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('fleet_locks');
  await knex.schema.dropTable('fleet_state');
  await knex.schema.dropTable('fleet_events');
  await knex.schema.dropTable('fleet_deployments');
  await knex.schema.dropTable('fleet_applications');
  await knex.schema.dropTable('fleet_clusters');
};
