import type { Kysely } from 'kysely';

/**
 * Widget appearance per agent (issue 33, point 3). `chatbots.appearance`: a JSON object (colour, position,
 * launcher, avatar, title). `{}` means "all defaults": the presenter fills every absent member, so existing
 * agents keep the look the widget always had.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('chatbots').addColumn('appearance', 'text', (c) => c.notNull().defaultTo('{}')).execute();
}

/** Drops the column (every agent goes back to the default look). */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('chatbots').dropColumn('appearance').execute();
}
