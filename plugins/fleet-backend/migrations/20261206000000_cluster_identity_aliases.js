/*
 * A cluster's identity server is normalized further, so that another spelling of a known API
 * server is that server: a host name's trailing dot dropped, an IPv4-mapped IPv6 address as
 * IPv4, `localhost` and `[::1]` as `127.0.0.1`, repeated slashes collapsed and percent-escapes
 * of unreserved characters decoded (the path keeps its case). Stored identities are written
 * again in that form; a cluster whose new form is another cluster's (server, CA) already (two
 * spellings registered before this) keeps its old form, and the two stay as they were.
 */

/** The same normalization as `normalizeServer` in src/database/clusterIdentity.ts. */
function normalizeServer(server) {
  try {
    const url = new URL(String(server).trim());
    let hostname = url.hostname.replace(/\.$/, '');
    const mapped = /^\[::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/.exec(
      hostname,
    );
    if (mapped) {
      const high = parseInt(mapped[1], 16);
      const low = parseInt(mapped[2], 16);
      hostname = [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
    }
    if (['localhost', '[::1]', '127.0.0.1'].includes(hostname))
      hostname = '127.0.0.1';
    const host = url.port ? `${hostname}:${url.port}` : hostname;
    const path = url.pathname
      .replace(/%([0-9a-fA-F]{2})/g, (_, hex) => {
        const char = String.fromCharCode(parseInt(hex, 16));
        return /[A-Za-z0-9\-._~]/.test(char) ? char : `%${hex.toUpperCase()}`;
      })
      .replace(/\/{2,}/g, '/')
      .replace(/\/+$/, '');
    return `${url.protocol}//${host}${path}`;
  } catch {
    return String(server).trim().replace(/\/+$/, '');
  }
}

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  const rows = await knex('fleet_clusters')
    .select('name', 'identity_server', 'identity_ca', 'endpoint')
    .orderBy('name');
  const taken = new Set(
    rows
      .filter(row => row.identity_ca !== null)
      .map(row => `${row.identity_server}#${row.identity_ca}`),
  );
  for (const row of rows) {
    const server = normalizeServer(row.identity_server ?? row.endpoint);
    if (server === row.identity_server) continue;
    if (row.identity_ca !== null) {
      // One cluster per known (server, CA): an earlier spelling of the same one keeps it.
      if (taken.has(`${server}#${row.identity_ca}`)) continue;
      taken.delete(`${row.identity_server}#${row.identity_ca}`);
      taken.add(`${server}#${row.identity_ca}`);
    }
    await knex('fleet_clusters')
      .where({ name: row.name })
      .update({ identity_server: server });
  }
};

/**
 * Nothing to undo: the earlier normalization reads the new form as it is.
 *
 * @param {import('knex').Knex} _knex
 */
exports.down = async function down(_knex) {};
