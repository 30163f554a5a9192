import type { Kysely } from 'kysely';
import { up as createKnowledgeEntries } from './0005_knowledge_search.js';

/**
 * Drops the knowledge_entries index (0005): since 0013 the agent's `knowledge` field is mirrored as text
 * sources, which retrieval reads, and nothing read this index any more while every knowledge edit still
 * rewrote it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  // SQLite's FTS5 table first (its triggers go with knowledge_entries); PostgreSQL's tsvector goes with the table.
  await db.schema.dropTable('knowledge_entries_fts').ifExists().execute();
  await db.schema.dropTable('knowledge_entries').execute();
}

/** Recreates the index from the agents' `knowledge` fields, as 0005 built it. */
export async function down(db: Kysely<any>): Promise<void> {
  await createKnowledgeEntries(db);
}
