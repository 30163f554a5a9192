import { sql, type Selectable, type Updateable } from 'kysely';
import { claimLocked, isPostgres, lockedForUpdate } from '../../db/dialect.js';
import { afterKeyset } from '../../db/keyset.js';
import type { Db, SourceDocumentsTable, SourcesTable } from '../../db/schema.js';
import type { PageRequest } from '../../http/pagination.js';

/** A source as stored. */
export type SourceRow = Selectable<SourcesTable>;
/** A document of a source as stored. */
export type SourceDocumentRow = Selectable<SourceDocumentsTable>;

const SOURCE_COLUMNS = [
  'id', 'workspace_id', 'chatbot_id', 'type', 'origin', 'title', 'url', 'config', 'status', 'documents', 'chunks', 'failed_documents',
  'error', 'sync_interval_hours', 'next_sync_at', 'last_synced_at', 'sync_done', 'sync_found', 'created_at', 'updated_at',
] as const;
const DOCUMENT_COLUMNS = ['id', 'workspace_id', 'chatbot_id', 'source_id', 'url', 'title', 'status', 'error', 'error_code', 'content_hash', 'chunks', 'created_at', 'updated_at'] as const;

/** All SQL of sources, their files and documents; the workspace id is in every query. */
export const sourceRepository = {
  async insert(db: Db, row: SourceRow): Promise<void> {
    await db.insertInto('sources').values(row).execute();
  },

  /** One source of an agent (locked for the rest of the transaction on PostgreSQL when asked). */
  async find(db: Db, workspaceId: string, chatbotId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<SourceRow | undefined> {
    const query = db.selectFrom('sources').select(SOURCE_COLUMNS).where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).where('id', '=', id);
    return (options.forUpdate ? lockedForUpdate(db, query) : query).executeTakeFirst();
  },

  /**
   * One source of an agent locked for a change that must not queue behind another transaction: on PostgreSQL
   * the row is skipped while a sync's document transaction holds it (`busy`: try again shortly), rather than
   * waited for under the statement timeout. On SQLite this transaction already holds the one writer.
   */
  async lockUnlessBusy(db: Db, workspaceId: string, chatbotId: string, id: string): Promise<SourceRow | 'busy' | undefined> {
    const query = db.selectFrom('sources').select(SOURCE_COLUMNS).where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).where('id', '=', id);
    const row = await claimLocked(db, query).executeTakeFirst();
    if (row || !isPostgres(db)) return row;
    return (await query.executeTakeFirst()) ? 'busy' : undefined;
  },

  /** What a workspace holds against its quotas: its sources (every agent's) and the bytes of their stored files. */
  async usage(db: Db, workspaceId: string): Promise<{ sources: number; bytes: number }> {
    const row = await db
      .selectFrom('sources as s')
      .leftJoin('source_files as f', (join) => join.onRef('f.source_id', '=', 's.id').onRef('f.workspace_id', '=', 's.workspace_id'))
      // length() of a blob / bytea is read from its header (SQLite's record, PostgreSQL's TOAST pointer), not its bytes.
      .select((eb) => [eb.fn.countAll<number | string>().as('sources'), eb.fn.coalesce(eb.fn.sum<number | string>(sql`length(f.bytes)`), eb.lit(0)).as('bytes')])
      .where('s.workspace_id', '=', workspaceId)
      .executeTakeFirstOrThrow();
    return { sources: Number(row.sources), bytes: Number(row.bytes) };
  },

  /** One source by id within a workspace (the ingestion job knows no agent yet). */
  async findInWorkspace(db: Db, workspaceId: string, id: string): Promise<SourceRow | undefined> {
    return db.selectFrom('sources').select(SOURCE_COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  },

  /** A page of an agent's sources, newest first. */
  async list(db: Db, workspaceId: string, chatbotId: string, filter: { createdAfter?: string; createdBefore?: string }, page: PageRequest): Promise<SourceRow[]> {
    let query = db.selectFrom('sources').select(SOURCE_COLUMNS).where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId);
    if (filter.createdAfter) query = query.where('created_at', '>', filter.createdAfter);
    if (filter.createdBefore) query = query.where('created_at', '<', filter.createdBefore);
    const keyset = afterKeyset(page, 'sources');
    if (keyset) query = query.where(keyset);
    return query.orderBy('created_at', page.order).orderBy('id', page.order).limit(page.limit + 1).execute();
  },

  /** The agent's sources that mirror its `knowledge` field. */
  async listKnowledgeOrigin(db: Db, workspaceId: string, chatbotId: string): Promise<Pick<SourceRow, 'id'>[]> {
    return db.selectFrom('sources').select('id').where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).where('origin', '=', 'knowledge').execute();
  },

  /** How many of the agent's own sources (not mirrors of its `knowledge` field) are ready to answer from. */
  async countReady(db: Db, workspaceId: string, chatbotId: string): Promise<number> {
    const row = await db.selectFrom('sources').select((e) => e.fn.countAll<number>().as('count'))
      .where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).where('status', '=', 'ready').where('origin', '!=', 'knowledge')
      .executeTakeFirst();
    return Number(row?.count ?? 0);
  },

  async update(db: Db, workspaceId: string, id: string, changes: Updateable<SourcesTable>): Promise<void> {
    await db.updateTable('sources').set(changes).where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
  },

  /** Removes a source with its file and documents (its chunks and jobs are removed by their own repositories). */
  async delete(db: Db, workspaceId: string, id: string): Promise<void> {
    await db.deleteFrom('source_documents').where('workspace_id', '=', workspaceId).where('source_id', '=', id).execute();
    await db.deleteFrom('source_files').where('workspace_id', '=', workspaceId).where('source_id', '=', id).execute();
    await db.deleteFrom('sources').where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
  },

  /** Sources of any workspace whose scheduled re-sync is due, at most `limit`. */
  async dueForSync(db: Db, now: string, limit: number): Promise<Pick<SourceRow, 'id' | 'workspace_id' | 'sync_interval_hours'>[]> {
    return db
      .selectFrom('sources')
      .select(['id', 'workspace_id', 'sync_interval_hours'])
      .where('next_sync_at', 'is not', null)
      .where('next_sync_at', '<=', now)
      .limit(limit)
      .execute();
  },

  async insertFile(db: Db, row: { source_id: string; workspace_id: string; bytes: Uint8Array }): Promise<void> {
    await db.insertInto('source_files').values(row).execute();
  },

  /** The stored bytes of a file source. */
  async findFile(db: Db, workspaceId: string, sourceId: string): Promise<Uint8Array | undefined> {
    const row = await db.selectFrom('source_files').select('bytes').where('workspace_id', '=', workspaceId).where('source_id', '=', sourceId).executeTakeFirst();
    return row ? new Uint8Array(row.bytes) : undefined;
  },
};

/** SQL of the documents (pages, files) of sources. */
export const sourceDocumentRepository = {
  /** A page of a source's documents, oldest first (crawl order). */
  async list(db: Db, workspaceId: string, sourceId: string, page: PageRequest): Promise<SourceDocumentRow[]> {
    let query = db.selectFrom('source_documents').select(DOCUMENT_COLUMNS).where('workspace_id', '=', workspaceId).where('source_id', '=', sourceId);
    const keyset = afterKeyset(page, 'source_documents');
    if (keyset) query = query.where(keyset);
    return query.orderBy('created_at', page.order).orderBy('id', page.order).limit(page.limit + 1).execute();
  },

  /** The document of a source at a URL, locked for the document's transaction on PostgreSQL. */
  async findByUrl(db: Db, workspaceId: string, sourceId: string, url: string): Promise<SourceDocumentRow | undefined> {
    return lockedForUpdate(
      db,
      db.selectFrom('source_documents').select(DOCUMENT_COLUMNS).where('workspace_id', '=', workspaceId).where('source_id', '=', sourceId).where('url', '=', url),
    ).executeTakeFirst();
  },

  async insert(db: Db, row: SourceDocumentRow): Promise<void> {
    await db.insertInto('source_documents').values(row).execute();
  },

  async update(db: Db, workspaceId: string, id: string, changes: Updateable<SourceDocumentsTable>): Promise<void> {
    await db.updateTable('source_documents').set(changes).where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
  },

  /** Documents of a source that this sync did not meet (pages gone from the site), to be removed. */
  async listNotIn(db: Db, workspaceId: string, sourceId: string, keep: ReadonlySet<string>): Promise<Pick<SourceDocumentRow, 'id' | 'url'>[]> {
    const rows = await db.selectFrom('source_documents').select(['id', 'url']).where('workspace_id', '=', workspaceId).where('source_id', '=', sourceId).execute();
    return rows.filter((row) => !keep.has(row.url));
  },

  async delete(db: Db, workspaceId: string, id: string): Promise<void> {
    await db.deleteFrom('source_documents').where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
  },

  /** The counts a source shows: documents, chunks and failed documents. */
  async stats(db: Db, workspaceId: string, sourceId: string): Promise<{ documents: number; chunks: number; failed: number }> {
    const row = await db
      .selectFrom('source_documents')
      .select((eb) => [
        eb.fn.countAll<number | string>().as('documents'),
        eb.fn.coalesce(eb.fn.sum<number | string>('chunks'), eb.lit(0)).as('chunks'),
        eb.fn.sum<number | string>(eb.case().when('status', '=', 'failed').then(1).else(0).end()).as('failed'),
      ])
      .where('workspace_id', '=', workspaceId)
      .where('source_id', '=', sourceId)
      .executeTakeFirstOrThrow();
    return { documents: Number(row.documents), chunks: Number(row.chunks), failed: Number(row.failed ?? 0) };
  },
};
