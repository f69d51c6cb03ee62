/*
 * A release to a stage that requires approvals, or one touching a cluster inside a freeze
 * window, waits before it starts. Each release records the stage it goes to and its gate: the
 * approvals its stage requires, every decision taken on it, the freeze window it waits for, and
 * when and by whom the gate opened. Releases that started at once leave both empty. A
 * release's events name the gate's phases, so an event's statuses take up to 32 characters.
 */

/**
 * @param {import('knex').Knex} knex
 */
exports.up = async function up(knex) {
  // A release's events name its gate phases (WAITING_FOR_APPROVAL is 20 characters).
  await knex.schema.alterTable('fleet_events', table => {
    table.string('from_status', 32).nullable().alter();
    table.string('to_status', 32).notNullable().alter();
  });
  await knex.schema.alterTable('fleet_releases', table => {
    table
      .string('stage', 63)
      .nullable()
      .comment('The application stage the release goes to');
    table
      .text('gate')
      .nullable()
      .comment(
        'JSON { approvals, decisions, window, openedAt, openedBy }: what the release waits for',
      );
  });
};

/**
 * @param {import('knex').Knex} knex
 */
exports.down = async function down(knex) {
  // A release still waiting would be started by nothing once the gates are gone: it is
  // recorded as rejected, so that it never applies.
  await knex('fleet_releases')
    .whereIn('phase', ['WAITING_FOR_APPROVAL', 'WAITING_FOR_WINDOW'])
    .update({ phase: 'REJECTED' });
  // Events of the gate phases keep their place in the history, under a shorter name.
  for (const column of ['from_status', 'to_status']) {
    await knex('fleet_events')
      .whereIn(column, ['WAITING_FOR_APPROVAL', 'WAITING_FOR_WINDOW'])
      .update({ [column]: 'WAITING' });
  }
  await knex.schema.alterTable('fleet_events', table => {
    table.string('from_status', 16).nullable().alter();
    table.string('to_status', 16).notNullable().alter();
  });
  await knex.schema.alterTable('fleet_releases', table => {
    table.dropColumn('gate');
    table.dropColumn('stage');
  });
};
