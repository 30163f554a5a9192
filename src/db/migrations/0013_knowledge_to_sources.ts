import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';

interface StoredEntry {
  title?: unknown;
  content?: unknown;
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

// Ids as src/lib/ids.ts makes them (prefix_ + ULID), written out here so the migration never changes with app code.
function ulidId(prefix: string, ms: number): string {
  let time = '';
  for (let i = 0, value = ms; i < 10; i++, value = Math.floor(value / 32)) time = CROCKFORD[value % 32] + time;
  const random = [...randomBytes(16)].map((byte) => CROCKFORD[byte & 31]).join('');
  return `${prefix}_${time}${random}`;
}

/**
 * Every entry of an agent's `knowledge` field becomes a `text` source of origin 'knowledge' (issue 30),
 * queued for ingestion: the job runner chunks and indexes them once the service starts (a migration does
 * not run the application's parsing and analysis code, which keeps changing).
 */
export async function up(db: Kysely<any>): Promise<void> {
  const chatbots = await db.selectFrom('chatbots').select(['id', 'workspace_id', 'knowledge']).execute();
  const now = new Date();
  const at = now.toISOString();
  for (const chatbot of chatbots as Array<{ id: string; workspace_id: string; knowledge: string }>) {
    let entries: StoredEntry[] = [];
    try {
      const parsed: unknown = JSON.parse(chatbot.knowledge);
      if (Array.isArray(parsed)) entries = parsed as StoredEntry[];
    } catch {
      // A corrupt knowledge column is read as empty everywhere else too.
    }
    for (const entry of entries) {
      if (typeof entry?.title !== 'string' || typeof entry.content !== 'string') continue;
      const sourceId = ulidId('src', now.getTime());
      await db
        .insertInto('sources')
        .values({
          id: sourceId,
          workspace_id: chatbot.workspace_id,
          chatbot_id: chatbot.id,
          type: 'text',
          origin: 'knowledge',
          title: entry.title,
          url: null,
          config: JSON.stringify({ content: entry.content }),
          status: 'queued',
          documents: 0,
          chunks: 0,
          failed_documents: 0,
          error: null,
          sync_interval_hours: null,
          next_sync_at: null,
          last_synced_at: null,
          created_at: at,
          updated_at: at,
        })
        .execute();
      await db
        .insertInto('reply_jobs')
        .values({
          id: ulidId('rjob', now.getTime()),
          workspace_id: chatbot.workspace_id,
          kind: 'ingest',
          source_id: sourceId,
          conversation_id: null,
          message_id: null,
          state: 'pending',
          attempts: 0,
          run_after: at,
          locked_until: null,
          last_error: null,
          reply_message_id: null,
          created_at: at,
          updated_at: at,
        })
        .execute();
    }
  }
}

/** Removes the knowledge-origin sources (the `knowledge` field, which they mirror, is untouched). */
export async function down(db: Kysely<any>): Promise<void> {
  const ids = (await db.selectFrom('sources').select('id').where('origin', '=', 'knowledge').execute()).map((row: { id: string }) => row.id);
  if (ids.length === 0) return;
  await db.deleteFrom('reply_jobs').where('source_id', 'in', ids).execute();
  await db.deleteFrom('knowledge_chunks').where('source_id', 'in', ids).execute();
  await db.deleteFrom('source_documents').where('source_id', 'in', ids).execute();
  await db.deleteFrom('sources').where('id', 'in', ids).execute();
}
