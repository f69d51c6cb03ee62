/*
 * The container port is part of what a revision asks a cluster to run: changing the
 * application's default port then changes later revisions only, like every other default. Each
 * existing revision gets the port its application has now (8000 when it names none).
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  await knex.schema.alterTable('fleet_revisions', table => {
    table.integer('port').nullable().comment('the container port');
  });
  const applications = await knex('fleet_applications').select('id', 'spec');
  for (const application of applications) {
    let spec = {};
    try {
      spec = JSON.parse(application.spec) || {};
    } catch {
      spec = {};
    }
    await knex('fleet_revisions')
      .where({ application_id: application.id })
      .update({ port: typeof spec.port === 'number' ? spec.port : 8000 });
  }
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  await knex.schema.alterTable('fleet_revisions', table => {
    table.dropColumn('port');
  });
};
