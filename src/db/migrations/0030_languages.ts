import type { Kysely } from 'kysely';

/**
 * The visitor's language and the agent's words per language: `conversations.locale` is the browser's language
 * tag the widget sends when it starts a conversation (null: not given, and every conversation before this
 * migration), so declines and handoffs answer in it; `chatbots.translations` holds the welcome message and the
 * suggested questions per language (JSON, `{}` for none).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('conversations').addColumn('locale', 'text').execute();
  await db.schema.alterTable('chatbots').addColumn('translations', 'text', (c) => c.notNull().defaultTo('{}')).execute();
}

/** Drops what up() added. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('chatbots').dropColumn('translations').execute();
  await db.schema.alterTable('conversations').dropColumn('locale').execute();
}
