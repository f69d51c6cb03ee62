/*
 * An Ingress host belongs to one application: a second application asking for it is refused.
 * The check before a write is not enough when two writes race, so each application's host is
 * also a row whose primary key is the host, written in the same transaction as the spec.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.createTable('fleet_ingress_hosts', table => {
    table.comment(
      'The Ingress host of each application: one application per host',
    );
    table.string('host', 253).primary();
    table
      .string('application_id', 36)
      .notNullable()
      .unique('fleet_ingress_hosts_application_uniq');
  });
  // Applications from before: the first registered keeps a host two of them name.
  const applications = await knex('fleet_applications')
    .select('id', 'spec')
    .orderBy([{ column: 'created_at' }, { column: 'id' }]);
  const taken = new Set();
  for (const { id, spec } of applications) {
    let host;
    try {
      host = JSON.parse(spec)?.ingress?.host;
    } catch {
      host = undefined;
    }
    if (typeof host !== 'string' || taken.has(host)) continue;
    taken.add(host);
    await knex('fleet_ingress_hosts').insert({ host, application_id: id });
  }
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.dropTable('fleet_ingress_hosts');
};
