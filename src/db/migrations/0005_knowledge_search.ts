import type { Kysely } from 'kysely';
import { addFullTextIndex, withSerialId } from '../dialect.js';

interface StoredEntry {
  title?: unknown;
  content?: unknown;
}

/**
 * Knowledge entries of AI Agents, one row each, with a full-text index (FTS5 on SQLite, a tsvector with a
 * GIN index on PostgreSQL) so an agent can find the entries that answer a question. The agent's
 * `knowledge` JSON stays the source of truth; these rows are rewritten with it in the same transaction.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withSerialId(db, db.schema.createTable('knowledge_entries'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('chatbot_id', 'text', (c) => c.notNull().references('chatbots.id'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addUniqueConstraint('knowledge_entries_chatbot_position', ['workspace_id', 'chatbot_id', 'position'])
    .execute();
  await addFullTextIndex(db, 'knowledge_entries');

  // Backfill the agents that exist already (the triggers or the generated column index them).
  const chatbots = await db.selectFrom('chatbots').select(['id', 'workspace_id', 'knowledge']).execute();
  for (const chatbot of chatbots as Array<{ id: string; workspace_id: string; knowledge: string }>) {
    let entries: StoredEntry[] = [];
    try {
      const parsed: unknown = JSON.parse(chatbot.knowledge);
      if (Array.isArray(parsed)) entries = parsed as StoredEntry[];
    } catch {
      // A corrupt knowledge column is read as empty everywhere else too.
    }
    const rows = entries
      .filter((entry) => typeof entry?.title === 'string' && typeof entry.content === 'string')
      .map((entry, position) => ({ workspace_id: chatbot.workspace_id, chatbot_id: chatbot.id, position, title: entry.title, content: entry.content }));
    if (rows.length > 0) await db.insertInto('knowledge_entries').values(rows).execute();
  }
}

/** Drops the knowledge index. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('knowledge_entries_fts').ifExists().execute();
  await db.schema.dropTable('knowledge_entries').ifExists().execute();
}
