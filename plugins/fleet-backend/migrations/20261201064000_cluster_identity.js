/*
 * A cluster's identity is its API server: the server URL (normalized) and the fingerprint of the
 * CA its kubeconfig trusts. A name is only a label for it: another API server that comes with a
 * cluster's name never takes over its deployments, labels or history. Clusters stored before
 * this migration get the server of their endpoint and an unknown CA (the kubeconfig is not read
 * here); discovery fills it the next time it finds the cluster at that server.
 */

/** The same normalization as `normalizeServer` in src/database/clusterIdentity.ts. */
function normalizeServer(server) {
  try {
    const url = new URL(String(server).trim());
    return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
  } catch {
    return String(server).trim().replace(/\/+$/, '');
  }
}

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.alterTable('fleet_clusters', table => {
    table
      .text('identity_server')
      .nullable()
      .comment('The API server URL, normalized: half of the identity');
    table
      .string('identity_ca', 80)
      .nullable()
      .comment(
        'sha256:<hex> of the CA the kubeconfig trusts, "none" for no CA, NULL when unknown',
      );
  });
  const rows = await knex('fleet_clusters').select('name', 'endpoint');
  for (const row of rows) {
    await knex('fleet_clusters')
      .where({ name: row.name })
      .update({ identity_server: normalizeServer(row.endpoint) });
  }
  // One cluster per (server, CA) where the CA is known; an unknown CA (NULL) is checked by Fleet.
  await knex.schema.alterTable('fleet_clusters', table => {
    table.unique(['identity_server', 'identity_ca'], {
      indexName: 'fleet_clusters_identity_uniq',
    });
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.alterTable('fleet_clusters', table => {
    table.dropUnique(
      ['identity_server', 'identity_ca'],
      'fleet_clusters_identity_uniq',
    );
  });
  // A plain DROP COLUMN: knex's SQLite column drop rebuilds the table, which the deployments'
  // foreign key refuses while deployments exist.
  await knex.raw('ALTER TABLE fleet_clusters DROP COLUMN identity_ca');
  await knex.raw('ALTER TABLE fleet_clusters DROP COLUMN identity_server');
};
