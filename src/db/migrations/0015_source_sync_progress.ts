import type { Kysely } from 'kysely';

/**
 * A running sync's progress on its source (issue 30, the dashboard's progress bar): documents done in this
 * sync, and documents found so far (a crawl finds more as it goes). Both null when no sync runs.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sources').addColumn('sync_done', 'integer').execute();
  await db.schema.alterTable('sources').addColumn('sync_found', 'integer').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sources').dropColumn('sync_found').execute();
  await db.schema.alterTable('sources').dropColumn('sync_done').execute();
}
