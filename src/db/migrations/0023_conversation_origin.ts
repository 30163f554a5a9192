import type { Kysely } from 'kysely';

/**
 * `conversations.origin`: the website a widget conversation started on (its normalized origin), or null
 * (the hosted page, the API, the dashboard; conversations from before this migration). The home page's
 * "Put it on your website" step ticks on the first conversation from a website (issue 33, point 7).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('conversations').addColumn('origin', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('conversations').dropColumn('origin').execute();
}
