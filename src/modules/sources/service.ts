import type { Kysely } from 'kysely';
import type { SourcesConfig } from '../../config.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError } from '../../http/errors.js';
import { createdRange } from '../../http/filters.js';
import { pageRequest, toPage, type Page } from '../../http/pagination.js';
import type { OperationContext } from '../../lib/actor.js';
import type { Clock } from '../../lib/clock.js';
import { isId } from '../../lib/ids.js';
import { nextUpdatedAt } from '../../lib/versioning.js';
import { diffChanges, type AuditWriter } from '../audit/writer.js';
import type { EventWriter } from '../events/writer.js';
import { chatbotRepository } from '../chatbots/repository.js';
import { knowledgeChunks } from '../knowledge/chunks.js';
import type { KnowledgeSearch } from '../knowledge/retrieval.js';
import { ingestJobRepository } from '../runtime/repository.js';
import { insertHandWritten, newSourceRow } from './hand-written.js';
import { queueIngestJob, type SourceConfigJson } from './ingestion.js';
import { detectFileKind } from './parsing/index.js';
import { expectedLanguages } from '../replies/language.js';
import { presentSource, presentSourceDocument } from './presenter.js';
import { createSourceQuota } from './quota.js';
import { sourceDocumentRepository, sourceRepository, type SourceRow } from './repository.js';
import type { CreateSourceJsonInput, KnowledgeHitView, ListDocumentsFilters, ListSourcesFilters, SourceDocumentView, SourceView } from './schema.js';

/** An uploaded file (multipart field `file`) and the optional `title` field. */
export interface Upload {
  filename: string;
  mediaType: string | null;
  bytes: Uint8Array;
  title?: string;
  /**
   * Gives back the room the upload's early quota check holds (upload.ts), called in the creating transaction
   * once the quota is judged, before commit: from then on the stored file counts, and a parallel upload's
   * early check must not count it twice (a spurious 409). Released early, a rolled-back creation only makes
   * that check count less, and the transaction decides anyway.
   */
  releaseAdmission?: () => void;
}

const AUDITED = ['type', 'title', 'url', 'status', 'sync_interval_hours'] as const;
// A deletion that meets its source's sync storing a document tries again this often, for at most this long.
const BUSY_RETRY_MS = 20;
const BUSY_WAIT_MS = 60_000;

/**
 * Knowledge sources of an agent. Text and Q&A sources are small and ingested inline, in the creating
 * transaction (ready at once, retrievable by the next question); websites and files get an ingest job in
 * that same transaction, run by the job runner (src/modules/runtime/reply-worker.ts).
 */
export function createSourceService(db: Kysely<Database>, clock: Clock, audit: AuditWriter, events: EventWriter, config: SourcesConfig, knowledge: KnowledgeSearch, wake: () => void = () => undefined) {
  const quota = createSourceQuota(db, config.quota);

  async function agent(ctx: OperationContext, chatbotId: string, executor = ctx.trx ?? db) {
    const chatbot = isId('chatbot', chatbotId) ? await chatbotRepository.find(executor, ctx.actor.workspaceId, chatbotId) : undefined;
    if (!chatbot) throw AppError.notFound('AI Agent', chatbotId);
    return chatbot;
  }

  async function load(ctx: OperationContext, chatbotId: string, id: string, executor = ctx.trx ?? db, forUpdate = false): Promise<SourceRow> {
    await agent(ctx, chatbotId, executor);
    const row = isId('source', id) ? await sourceRepository.find(executor, ctx.actor.workspaceId, chatbotId, id, { forUpdate }) : undefined;
    if (!row) throw AppError.notFound('source', id);
    return row;
  }

  function crawlSettings(input: Extract<CreateSourceJsonInput, { type: 'website' }>): SourceConfigJson['crawl'] {
    const crawl = input.crawl ?? {};
    const maxPages = crawl.max_pages ?? config.crawlDefaults.maxPages;
    if (maxPages > config.maxPages) {
      throw AppError.validation(`crawl.max_pages is at most ${config.maxPages} on this service (SOURCE_MAX_PAGES).`, [
        { pointer: '/crawl/max_pages', message: `must be at most ${config.maxPages}` },
      ]);
    }
    return { max_pages: maxPages, max_depth: crawl.max_depth ?? config.crawlDefaults.maxDepth, include: crawl.include ?? [], exclude: crawl.exclude ?? [] };
  }

  function newSource(ctx: OperationContext, chatbotId: string, fields: Pick<SourceRow, 'type' | 'title' | 'url' | 'config'> & Partial<SourceRow>): SourceRow {
    return newSourceRow(clock.now(), ctx.actor.workspaceId, chatbotId, 'api', fields);
  }

  function rowFor(ctx: OperationContext, chatbotId: string, input: CreateSourceJsonInput | Upload): SourceRow {
    if ('bytes' in input) {
      return newSource(ctx, chatbotId, { type: 'file', title: input.title ?? input.filename, url: null, config: JSON.stringify({ filename: input.filename, media_type: input.mediaType }) });
    }
    if (input.type === 'website') {
      const interval = input.sync_interval_hours ?? null;
      return newSource(ctx, chatbotId, {
        type: 'website',
        title: input.title ?? new URL(input.url).hostname,
        url: input.url,
        config: JSON.stringify({ crawl: crawlSettings(input) }),
        sync_interval_hours: interval,
        next_sync_at: interval === null ? null : new Date(clock.now().getTime() + interval * 3_600_000).toISOString(),
      });
    }
    if (input.type === 'text') return newSource(ctx, chatbotId, { type: 'text', title: input.title, url: null, config: JSON.stringify({ content: input.content }) });
    return newSource(ctx, chatbotId, { type: 'qa', title: input.question, url: null, config: JSON.stringify({ question: input.question, answer: input.answer }) });
  }

  return {
    /** Adds a source to an agent: text and Q&A are ready at once; websites and files are queued for ingestion. */
    async create(ctx: OperationContext, chatbotId: string, input: CreateSourceJsonInput | Upload): Promise<SourceView> {
      if ('bytes' in input && !detectFileKind(input.filename, input.mediaType, input.bytes.subarray(0, 512))) {
        throw new AppError('unsupported_media_type', 'The file is not a PDF, DOCX, Markdown, plain text or HTML file.');
      }
      const row = rowFor(ctx, chatbotId, input);
      const created = await inTransaction(db, ctx, async (trx) => {
        const chatbot = await agent(ctx, chatbotId, trx);
        if (chatbot.status === 'archived') throw new AppError('chatbot_archived', 'This AI Agent is archived and can no longer be changed.');
        let stored = row;
        if (row.type === 'text' || row.type === 'qa') {
          stored = await insertHandWritten(trx, clock, row, { embed: knowledge.embedder !== null });
        } else {
          await sourceRepository.insert(trx, row);
          if ('bytes' in input) await sourceRepository.insertFile(trx, { source_id: row.id, workspace_id: row.workspace_id, bytes: input.bytes });
          await queueIngestJob(trx, row, row.created_at);
        }
        // After the insert: the writing (a file's bytes, a text's chunks) runs beside other creations; only
        // the count and what follows it to commit are serialised per workspace.
        await quota.checkWithNew(trx, ctx.actor.workspaceId, 'bytes' in input ? input.bytes.byteLength : 0);
        if ('bytes' in input) input.releaseAdmission?.();
        const view = presentSource(stored);
        await audit.record(trx, ctx, { action: 'source.created', target: { type: 'source', id: row.id }, changes: diffChanges(null, view, AUDITED) });
        // Text and Q&A are synced in this transaction; websites and files when their ingest job settles.
        if (view.status === 'ready' || view.status === 'failed') await events.emit(trx, row.workspace_id, 'source.synced', view);
        return view;
      });
      if (created.status === 'queued' || knowledge.embedder) wake();
      return created;
    },

    /**
     * Before an upload's body is read: 404 for an unknown agent, 409 quota_exceeded when a file of at least
     * `fileBytes` cannot fit beside what the workspace stores and is uploading. Returns the release of the
     * room it holds, called once the upload is answered.
     */
    async admitUpload(ctx: OperationContext, chatbotId: string, fileBytes: number): Promise<() => void> {
      await agent(ctx, chatbotId);
      return quota.admitUpload(ctx.actor.workspaceId, fileBytes);
    },

    /** One source of an agent. */
    async get(ctx: OperationContext, chatbotId: string, id: string): Promise<SourceView> {
      return presentSource(await load(ctx, chatbotId, id));
    },

    /** A page of an agent's sources, newest first. */
    async list(ctx: OperationContext, chatbotId: string, query: ListSourcesFilters): Promise<Page<SourceView>> {
      await agent(ctx, chatbotId);
      const filters = { list: `sources:${chatbotId}`, ...createdRange(query) };
      const page = pageRequest(query, filters);
      const rows = await sourceRepository.list(db, ctx.actor.workspaceId, chatbotId, filters, page);
      return toPage(rows, page, filters, presentSource);
    },

    /** A page of a source's documents, in the order they were found. */
    async documents(ctx: OperationContext, chatbotId: string, id: string, query: ListDocumentsFilters): Promise<Page<SourceDocumentView>> {
      await load(ctx, chatbotId, id);
      const filters = { list: `source_documents:${id}` };
      const page = pageRequest(query, filters, 'asc');
      const rows = await sourceDocumentRepository.list(db, ctx.actor.workspaceId, id, page);
      return toPage(rows, page, filters, presentSourceDocument);
    },

    /**
     * Removes a source, its documents and its chunks (they leave retrieval in the same transaction), and its
     * ingest job. While a sync is storing one of its documents, the deletion does not queue behind that
     * transaction under the statement timeout: it tries again once it has ended (between documents), and
     * the sync's next document finds the source gone and the job ends.
     */
    async remove(ctx: OperationContext, chatbotId: string, id: string): Promise<void> {
      const deadline = clock.monotonicMs() + BUSY_WAIT_MS;
      for (;;) {
        const removed = await inTransaction(db, ctx, async (trx) => {
          await agent(ctx, chatbotId, trx);
          const row = isId('source', id) ? await sourceRepository.lockUnlessBusy(trx, ctx.actor.workspaceId, chatbotId, id) : undefined;
          if (row === 'busy') return false;
          if (!row) throw AppError.notFound('source', id);
          await ingestJobRepository.deleteBySource(trx, ctx.actor.workspaceId, id);
          await knowledgeChunks.deleteBySource(trx, ctx.actor.workspaceId, id);
          await sourceRepository.delete(trx, ctx.actor.workspaceId, id);
          await audit.record(trx, ctx, { action: 'source.deleted', target: { type: 'source', id }, changes: { type: { before: row.type, after: null }, title: { before: row.title, after: null } } });
          return true;
        });
        if (removed) return;
        if (clock.monotonicMs() > deadline) throw new AppError('service_unavailable', 'The source is busy syncing a large document; retry shortly.', {}, { 'Retry-After': '5' });
        await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
      }
    },

    /** Queues a re-sync now (none is added while one waits or runs); the source shows `queued`. */
    async sync(ctx: OperationContext, chatbotId: string, id: string): Promise<SourceView> {
      const view = await inTransaction(db, ctx, async (trx) => {
        const row = await load(ctx, chatbotId, id, trx, true);
        if (await ingestJobRepository.findOpen(trx, ctx.actor.workspaceId, id)) return presentSource(row);
        const now = clock.now();
        const next: SourceRow = { ...row, status: 'queued', updated_at: nextUpdatedAt(row.updated_at, now) };
        await sourceRepository.update(trx, ctx.actor.workspaceId, id, { status: next.status, updated_at: next.updated_at });
        await queueIngestJob(trx, row, now.toISOString());
        await audit.record(trx, ctx, { action: 'source.sync_requested', target: { type: 'source', id }, changes: diffChanges(presentSource(row), presentSource(next), ['status']) });
        return presentSource(next);
      });
      wake();
      return view;
    },

    /** What the agent would retrieve for a question, best first. */
    async search(ctx: OperationContext, chatbotId: string, question: string, limit: number): Promise<{ object: 'list'; data: KnowledgeHitView[] }> {
      const chatbot = await agent(ctx, chatbotId);
      const hits = await knowledge.search(db, ctx.actor.workspaceId, chatbotId, question, limit, { languages: expectedLanguages({ agent: chatbot.language, locale: null }) });
      return {
        object: 'list',
        data: hits.map((hit) => ({ source_id: hit.sourceId, document_id: hit.documentId, title: hit.title, url: hit.url, content: hit.content, score: hit.score, confidence: Math.round(hit.confidence * 1000) / 1000 })),
      };
    },
  };
}

export type SourceService = ReturnType<typeof createSourceService>;
