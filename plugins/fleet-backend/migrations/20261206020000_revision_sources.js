/*
 * A component may bring its own Kubernetes manifests from its repository. Each revision of such a
 * component records where its objects came from (the URL, the version asked for, the commit it
 * resolved to and a digest) and the objects it rendered for its cluster, so that a rollback
 * applies exactly those objects again and a later revision knows what to prune. Revisions of
 * Fleet's generated workload leave both empty.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.alterTable('fleet_revisions', table => {
    table
      .text('source')
      .nullable()
      .comment('JSON { url, version, commit, digest, objectCount }');
    table
      .text('objects')
      .nullable()
      .comment('JSON array of the objects rendered for the cluster');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.alterTable('fleet_revisions', table => {
    table.dropColumn('objects');
    table.dropColumn('source');
  });
};
