/*
 * Writers that must not overwrite each other: an application carries a version, bumped on every
 * write of its spec or placement (its ETag; a PATCH with If-Match writes only over the version it
 * names), and a lease carries a fencing token, bumped whenever a new holder takes it, so the
 * writes of a holder that lost it are refused.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.alterTable('fleet_applications', table => {
    table
      .integer('version')
      .notNullable()
      .defaultTo(1)
      .comment('Bumped on every write of spec or placement: the ETag');
  });
  await knex.schema.alterTable('fleet_locks', table => {
    table
      .bigInteger('token')
      .notNullable()
      .defaultTo(0)
      .comment('Fencing token: bumped whenever a new holder takes the lease');
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.alterTable('fleet_locks', table => {
    table.dropColumn('token');
  });
  await knex.schema.alterTable('fleet_applications', table => {
    table.dropColumn('version');
  });
};
