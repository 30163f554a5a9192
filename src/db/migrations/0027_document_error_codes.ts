import type { Kysely } from 'kysely';

/**
 * Why a document could not be read, as a stable code beside the message: `unreadable`,
 * `too_large_when_expanded`, `took_too_long` (the parse sandbox's limits) or `fetch_failed` (a crawled page).
 * Documents that failed before this migration keep their message and have no code.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('source_documents').addColumn('error_code', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('source_documents').dropColumn('error_code').execute();
}
