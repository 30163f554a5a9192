import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { knowledgeChunks } from '../knowledge/chunks.js';
import { ingestJobRepository } from '../runtime/repository.js';
import { handWrittenDocument, prepareDocument, queueIngestJob, storeDocument } from './ingestion.js';
import { sourceDocumentRepository, sourceRepository, type SourceRow } from './repository.js';

/** One entry of an agent's `knowledge` field. */
export interface KnowledgeEntryInput {
  title: string;
  content: string;
}

/** How hand-written sources are stored: `embed` when chunks are embedded (EMBEDDINGS_PROVIDER is set). */
export interface HandWrittenOptions {
  embed: boolean;
}

/**
 * Stores a text or Q&A source and ingests its one document in the caller's transaction: these are small,
 * so they are ready (retrievable by full text) the moment the transaction commits. When chunks are embedded,
 * an ingest job is queued with it to embed them (no network call inside a transaction). Returns the row as stored.
 */
export async function insertHandWritten(trx: Transaction<Database>, clock: Clock, row: SourceRow, options: HandWrittenOptions): Promise<SourceRow> {
  await sourceRepository.insert(trx, { ...row, status: 'syncing' });
  const prepared = await prepareDocument(handWrittenDocument(row));
  await storeDocument(trx, clock, row, prepared);
  const stats = await sourceDocumentRepository.stats(trx, row.workspace_id, row.id);
  const ready = stats.failed === 0;
  const changes = {
    status: ready ? ('ready' as const) : ('failed' as const),
    error: ready ? null : prepared.error,
    documents: stats.documents,
    chunks: stats.chunks,
    failed_documents: stats.failed,
    last_synced_at: row.created_at,
    updated_at: row.updated_at,
  };
  await sourceRepository.update(trx, row.workspace_id, row.id, changes);
  if (options.embed && ready) await queueIngestJob(trx, row, row.created_at);
  return { ...row, ...changes };
}

/**
 * The agent's `knowledge` field was written: its knowledge-origin text sources (and their chunks) are
 * replaced by one per entry in the same transaction, so a reply never sees a stale index.
 */
export async function replaceKnowledgeSources(
  trx: Transaction<Database>,
  clock: Clock,
  workspaceId: string,
  chatbotId: string,
  entries: readonly KnowledgeEntryInput[],
  options: HandWrittenOptions,
): Promise<void> {
  for (const { id } of await sourceRepository.listKnowledgeOrigin(trx, workspaceId, chatbotId)) {
    await knowledgeChunks.deleteBySource(trx, workspaceId, id);
    await ingestJobRepository.deleteBySource(trx, workspaceId, id);
    await sourceRepository.delete(trx, workspaceId, id);
  }
  for (const entry of entries) {
    await insertHandWritten(trx, clock, newSourceRow(clock.now(), workspaceId, chatbotId, 'knowledge', {
      type: 'text',
      title: entry.title,
      url: null,
      config: JSON.stringify({ content: entry.content }),
    }), options);
  }
}

/** A new source's row, queued, with no documents yet; `fields` names what it is. */
export function newSourceRow(
  now: Date,
  workspaceId: string,
  chatbotId: string,
  origin: SourceRow['origin'],
  fields: Pick<SourceRow, 'type' | 'title' | 'url' | 'config'> & Partial<SourceRow>,
): SourceRow {
  const at = now.toISOString();
  return {
    id: newId('source', now.getTime()),
    workspace_id: workspaceId,
    chatbot_id: chatbotId,
    origin,
    status: 'queued',
    documents: 0,
    chunks: 0,
    failed_documents: 0,
    error: null,
    sync_interval_hours: null,
    next_sync_at: null,
    last_synced_at: null,
    sync_done: null,
    sync_found: null,
    created_at: at,
    updated_at: at,
    ...fields,
  };
}
