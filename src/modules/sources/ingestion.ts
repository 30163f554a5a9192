import { hash } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { SourcesConfig } from '../../config.js';
import type { Database, Db } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { nextUpdatedAt } from '../../lib/versioning.js';
import type { OutboundPolicy } from '../../lib/outbound-fetch.js';
import { knowledgeChunks } from '../knowledge/chunks.js';
import type { Embedder } from '../knowledge/embedder.js';
import { embedChunks } from './embedding.js';
import { ingestJobRepository, replyJobRepository, type JobRow } from '../runtime/repository.js';
import type { IngestRunner, WorkerLog } from '../runtime/reply-worker.js';
import { crawlSite, emptyCrawlReport, type CrawlReport } from './crawler.js';
import { DocumentError, chunkDocument, detectFileKind, parseText, type DocumentErrorCode, type ParsedDocument } from './parsing/index.js';
import { createParseSandbox } from './parsing/sandbox.js';
import { sourceDocumentRepository, sourceRepository, type SourceRow } from './repository.js';
import { presentSource } from './presenter.js';
import { createEventWriter } from '../events/writer.js';

/** What a source's config column holds, by type. */
export interface SourceConfigJson {
  crawl?: { max_pages: number; max_depth: number; include: string[]; exclude: string[] };
  content?: string;
  question?: string;
  answer?: string;
  filename?: string;
  media_type?: string | null;
}

/**
 * One document met while syncing: its content hash and how to read it, or why it could not be fetched;
 * `found`: the documents the sync has found so far (a crawl's count grows; one for the other types).
 */
type Found =
  | { url: string; hash: string; read: () => Promise<ParsedDocument>; found?: number }
  | { url: string; error: string; errorCode: DocumentErrorCode; found?: number };

const DOCUMENT_ERROR_LENGTH = 500;
// How much of a file its type is judged by: a Word file's zip may name word/document.xml well past its first bytes.
const DETECTION_BYTES = 64 * 1024;

function sha256(data: Uint8Array | string): string {
  return hash('sha256', data, 'hex');
}

function configOf(source: SourceRow): SourceConfigJson {
  try {
    return JSON.parse(source.config) as SourceConfigJson;
  } catch {
    return {};
  }
}

/** The one document of a text or Q&A source (a Q&A chunk carries its question, so it is found by it). */
export function handWrittenDocument(source: SourceRow): Found {
  const config = configOf(source);
  if (source.type === 'qa') {
    const question = config.question ?? '';
    const content = `${question}\n\n${config.answer ?? ''}`;
    return { url: `qa:${source.id}`, hash: sha256(content), read: async () => parseText(question, content) };
  }
  const content = config.content ?? '';
  return { url: `text:${source.id}`, hash: sha256(`${source.title ?? ''}\n${content}`), read: async () => parseText(source.title, content) };
}

/** The outbound policy of crawls, from the configuration. */
export function outboundPolicy(config: SourcesConfig, userAgent: string): OutboundPolicy {
  return {
    allowPrivateHosts: config.allowPrivateHosts,
    timeoutMs: config.fetchTimeoutMs,
    maxResponseBytes: config.maxResponseBytes,
    maxRedirects: config.maxRedirects,
    userAgent,
  };
}

/** Records an ingest job for a source (in the caller's transaction). */
export async function queueIngestJob(trx: Db, source: Pick<SourceRow, 'id' | 'workspace_id'>, now: string): Promise<void> {
  await replyJobRepository.insert(trx, {
    id: newId('replyJob', Date.parse(now)),
    workspace_id: source.workspace_id,
    kind: 'ingest',
    source_id: source.id,
    conversation_id: null,
    message_id: null,
    state: 'pending',
    attempts: 0,
    run_after: now,
    locked_until: null,
    last_error: null,
    reply_message_id: null,
    created_at: now,
    updated_at: now,
  });
}

/** How far a running sync has got: documents done, and found so far. */
export interface SyncProgress {
  done: number;
  found: number;
}

/** How a document ended: stored (new or changed), unchanged (same hash: skipped), failed, or its source is gone. */
type Outcome = 'stored' | 'unchanged' | 'failed' | 'gone';

/** A document read and ready to store (parsing happens before its transaction, which then stays short). */
export interface PreparedDocument {
  url: string;
  hash: string | null;
  parsed: ParsedDocument | null;
  error: string | null;
  errorCode: DocumentErrorCode | null;
}

/** Reads a found document; a DocumentError (corrupt PDF, empty page, …) becomes that document's error. */
export async function prepareDocument(found: Found): Promise<PreparedDocument> {
  if ('error' in found) return { url: found.url, hash: null, parsed: null, error: found.error, errorCode: found.errorCode };
  try {
    const parsed = await found.read();
    if (parsed.blocks.length === 0) throw new DocumentError('The document has no readable text.');
    return { url: found.url, hash: found.hash, parsed, error: null, errorCode: null };
  } catch (cause) {
    if (!(cause instanceof DocumentError)) throw cause;
    return { url: found.url, hash: null, parsed: null, error: cause.message, errorCode: cause.code };
  }
}

/** True when the document at this URL is stored, ready, with this very content (nothing to do). */
async function unchanged(db: Db, source: SourceRow, found: Found): Promise<boolean> {
  if (!('hash' in found)) return false;
  const existing = await sourceDocumentRepository.findByUrl(db, source.workspace_id, source.id, found.url);
  return existing?.status === 'ready' && existing.content_hash === found.hash;
}

/**
 * Stores one document in `trx`: its chunks replace the document's previous ones, its row records status,
 * hash and error, and the source's counts follow, so GET shows progress while a sync runs.
 */
export async function storeDocument(trx: Transaction<Database>, clock: Clock, source: SourceRow, document: PreparedDocument, progress: SyncProgress | null = null): Promise<Outcome> {
  const current = await sourceRepository.find(trx, source.workspace_id, source.chatbot_id, source.id, { forUpdate: true });
  if (!current) return 'gone';
  const existing = await sourceDocumentRepository.findByUrl(trx, source.workspace_id, source.id, document.url);
  const now = clock.now().toISOString();
  const documentId = existing?.id ?? newId('document', Date.parse(now));
  const { parsed, error } = document;
  if (existing) await knowledgeChunks.deleteByDocument(trx, source.workspace_id, documentId);
  const title = parsed?.title ?? existing?.title ?? null;
  let chunkCount = 0;
  if (parsed && error === null) {
    const chunks = chunkDocument(parsed);
    chunkCount = await knowledgeChunks.insert(
      trx,
      chunks.map((chunk) => ({
        workspaceId: source.workspace_id,
        chatbotId: source.chatbot_id,
        sourceId: source.id,
        documentId,
        position: chunk.position,
        title: title ?? source.title ?? document.url,
        url: /^https?:/.test(document.url) ? document.url : null,
        headingPath: chunk.headingPath,
        content: chunk.content,
      })),
    );
  }
  const row = {
    title,
    status: error === null ? ('ready' as const) : ('failed' as const),
    error: error === null ? null : error.slice(0, DOCUMENT_ERROR_LENGTH),
    error_code: error === null ? null : (document.errorCode ?? 'unreadable'),
    content_hash: error === null ? document.hash : null,
    chunks: chunkCount,
  };
  if (existing) await sourceDocumentRepository.update(trx, source.workspace_id, documentId, { ...row, updated_at: nextUpdatedAt(existing.updated_at, clock.now()) });
  else await sourceDocumentRepository.insert(trx, { id: documentId, workspace_id: source.workspace_id, chatbot_id: source.chatbot_id, source_id: source.id, url: document.url, ...row, created_at: now, updated_at: now });
  await refreshCounts(trx, clock, current, progress ? { sync_done: progress.done, sync_found: progress.found } : {});
  return error === null ? 'stored' : 'failed';
}

async function refreshCounts(trx: Db, clock: Clock, source: SourceRow, extra: Partial<SourceRow> = {}): Promise<void> {
  const stats = await sourceDocumentRepository.stats(trx, source.workspace_id, source.id);
  await sourceRepository.update(trx, source.workspace_id, source.id, {
    documents: stats.documents,
    chunks: stats.chunks,
    failed_documents: stats.failed,
    ...extra,
    updated_at: nextUpdatedAt(source.updated_at, clock.now()),
  });
}

/** What the ingest runner is built from. */
export interface IngestionDeps {
  db: Kysely<Database>;
  clock: Clock;
  config: SourcesConfig;
  log: WorkerLog;
  userAgent: string;
  /** Embeds the chunks of each synced source (hybrid retrieval); null: full text alone. */
  embedder?: Embedder | null;
}

/**
 * Runs ingest jobs: finds the source's documents (a crawl, the stored file, the hand-written text), stores
 * each in its own transaction, removes documents a finished crawl no longer met, and settles the source:
 * ready when a document could be read, failed (with the first error) when none could.
 */
export function createIngestRunner(deps: IngestionDeps): IngestRunner {
  const { db, clock, config, log } = deps;
  const policy = outboundPolicy(config, deps.userAgent);
  const events = createEventWriter(clock);
  // Untrusted files and pages are parsed in child processes with memory and time limits, never here.
  const sandbox = createParseSandbox({ memoryMb: config.parse.memoryMb, timeoutMs: config.parse.timeoutMs, maxExpandedBytes: config.maxExpandedBytes, size: config.ingestConcurrency });

  /** Settles the source's status and counts, and tells integrations (`source.synced`), in one transaction. */
  async function finish(trx: Transaction<Database>, current: SourceRow, changes: Partial<SourceRow>): Promise<void> {
    await refreshCounts(trx, clock, current, changes);
    const settled = await sourceRepository.find(trx, current.workspace_id, current.chatbot_id, current.id);
    if (settled) await events.emit(trx, settled.workspace_id, 'source.synced', presentSource(settled));
  }

  async function* documentsOf(source: SourceRow, crawlReport: CrawlReport): AsyncGenerator<Found> {
    const settings = configOf(source);
    if (source.type === 'text' || source.type === 'qa') {
      yield handWrittenDocument(source);
      return;
    }
    if (source.type === 'file') {
      const bytes = await sourceRepository.findFile(db, source.workspace_id, source.id);
      const name = settings.filename ?? 'file';
      const kind = bytes ? detectFileKind(name, settings.media_type ?? null, bytes.subarray(0, DETECTION_BYTES)) : null;
      if (!bytes || !kind) {
        yield { url: `file:${name}`, error: 'The file is missing or of an unsupported type.', errorCode: 'unreadable' };
        return;
      }
      yield { url: `file:${name}`, hash: sha256(bytes), read: () => sandbox.parse(bytes, kind) };
      return;
    }
    const crawl = settings.crawl ?? { max_pages: config.crawlDefaults.maxPages, max_depth: config.crawlDefaults.maxDepth, include: [], exclude: [] };
    const limits = { maxPages: Math.min(crawl.max_pages, config.maxPages), maxDepth: crawl.max_depth, include: crawl.include, exclude: crawl.exclude, maxMs: config.maxCrawlMs };
    for await (const page of crawlSite(source.url ?? '', limits, policy, crawlReport, sandbox.links)) {
      if (!page.ok) {
        yield { url: page.url, error: page.error, errorCode: 'fetch_failed', found: page.found };
        continue;
      }
      const body = page.body;
      const path = new URL(page.url).pathname;
      const kind = /html/i.test(page.contentType ?? '') ? 'html' : detectFileKind(path, page.contentType, body.subarray(0, DETECTION_BYTES));
      // Not a page or a document we read (a feed, sitemap.xml, an image a link pointed at): not part of the knowledge.
      if (!kind) continue;
      yield { url: page.url, hash: sha256(body), read: () => sandbox.parse(body, kind), found: page.found };
    }
  }

  /** `stopped`: why a crawl ended early (its time or request limit), kept as the source's error even when ready. */
  async function settle(source: SourceRow, outcomes: Outcome[], firstError: string | null, stopped: string | null): Promise<void> {
    await inTransaction(db, {}, async (trx) => {
      const current = await sourceRepository.find(trx, source.workspace_id, source.chatbot_id, source.id, { forUpdate: true });
      if (!current) return;
      const stats = await sourceDocumentRepository.stats(trx, source.workspace_id, source.id);
      const readable = stats.documents - stats.failed > 0;
      const now = clock.now();
      const interval = current.sync_interval_hours === null ? null : Number(current.sync_interval_hours);
      await finish(trx, current, {
        status: readable ? 'ready' : 'failed',
        error: stopped ?? (readable ? null : (firstError ?? (outcomes.length === 0 ? 'No document was found.' : 'No document could be read.'))),
        last_synced_at: now.toISOString(),
        sync_done: null,
        sync_found: null,
        next_sync_at: interval === null ? null : new Date(now.getTime() + interval * 3_600_000).toISOString(),
      });
    });
  }

  async function sync(source: SourceRow, signal: AbortSignal): Promise<void> {
    await inTransaction(db, {}, (trx) => sourceRepository.update(trx, source.workspace_id, source.id, { status: 'syncing', sync_done: 0, sync_found: null, updated_at: nextUpdatedAt(source.updated_at, clock.now()) }));
    const progress: SyncProgress = { done: 0, found: 0 };
    const met = new Set<string>();
    // The same content met under another address (a page that is also /index.html, a copy at a second URL) is one document.
    const contents = new Set<string>();
    const outcomes: Outcome[] = [];
    let firstError: string | null = null;
    const crawlReport = emptyCrawlReport();
    for await (const found of documentsOf(source, crawlReport)) {
      if (signal.aborted) throw new Error('ingestion interrupted: the process is shutting down');
      if (met.has(found.url) || ('hash' in found && contents.has(found.hash))) continue;
      met.add(found.url);
      if ('hash' in found) contents.add(found.hash);
      progress.done++;
      progress.found = Math.max(progress.done, found.found ?? 0);
      if (await unchanged(db, source, found)) {
        outcomes.push('unchanged');
        await sourceRepository.update(db, source.workspace_id, source.id, { sync_done: progress.done, sync_found: progress.found });
        continue;
      }
      const prepared = await prepareDocument(found);
      const outcome = await inTransaction(db, {}, (trx) => storeDocument(trx, clock, source, prepared, progress));
      if (outcome === 'gone') return;
      if (outcome === 'failed') firstError ??= `${prepared.url}: ${prepared.error ?? 'could not be read'}`;
      outcomes.push(outcome);
    }
    // Pages the finished crawl no longer met leave retrieval (a page removed from the site); a crawl cut short
    // by its limits did not finish, and the pages it did not reach stay.
    const stale = crawlReport.stopped ? [] : await sourceDocumentRepository.listNotIn(db, source.workspace_id, source.id, met);
    for (const document of stale) {
      await inTransaction(db, {}, async (trx) => {
        await knowledgeChunks.deleteByDocument(trx, source.workspace_id, document.id);
        await sourceDocumentRepository.delete(trx, source.workspace_id, document.id);
      });
    }
    log.info({ source_id: source.id, documents: outcomes.length, unchanged: outcomes.filter((o) => o === 'unchanged').length }, 'source synced');
    if (deps.embedder) await embedChunks(deps, source, deps.embedder, signal);
    await settle(source, outcomes, firstError, crawlReport.stopped);
  }

  return {
    async run(job: JobRow, signal: AbortSignal): Promise<void> {
      const source = job.source_id ? await sourceRepository.findInWorkspace(db, job.workspace_id, job.source_id) : undefined;
      if (!source) return;
      try {
        await sync(source, signal);
      } catch (error) {
        // Not one document's fault (the database, an unexpected bug): the source says so; a retry of the job
        // sets it syncing again. An interrupted sync (shutdown) is resumed as it is.
        if (!signal.aborted) {
          const message = `The sync stopped: ${error instanceof Error ? error.message : String(error)}`.slice(0, DOCUMENT_ERROR_LENGTH);
          const exists = await inTransaction(db, {}, async (trx) => {
            const current = await sourceRepository.find(trx, source.workspace_id, source.chatbot_id, source.id, { forUpdate: true });
            if (current) await finish(trx, current, { status: 'failed', error: message });
            return current !== undefined;
          }).catch((cause: unknown) => {
            log.warn({ err: cause, source_id: source.id }, 'could not record a failed sync');
            return true;
          });
          // Deleted while it synced (its deletion's transaction outlasted a wait of this one): the job ends.
          if (!exists) return;
        }
        throw error;
      }
    },

    close: () => sandbox.close(),

    async giveUp(job: JobRow, reason: string): Promise<void> {
      if (!job.source_id) return;
      const message = `The sync was given up after ${job.attempts} attempts: each time, the process running it stopped before it finished (${reason}). Sync again to retry.`;
      const sourceId = job.source_id;
      await inTransaction(db, {}, async (trx) => {
        const source = await sourceRepository.findInWorkspace(trx, job.workspace_id, sourceId);
        const current = source && await sourceRepository.find(trx, job.workspace_id, source.chatbot_id, sourceId, { forUpdate: true });
        if (current) await finish(trx, current, { status: 'failed', error: message, sync_done: null, sync_found: null });
      }).catch((error: unknown) => log.warn({ err: error, source_id: job.source_id }, 'could not record a given-up sync'));
    },

    async queueDue(now: string): Promise<number> {
      const due = await sourceRepository.dueForSync(db, now, 100);
      let queued = 0;
      for (const source of due) {
        await inTransaction(db, {}, async (trx) => {
          // The next slot is set now, so a source is queued once per interval whatever the job takes.
          const next = new Date(Date.parse(now) + Number(source.sync_interval_hours ?? 24) * 3_600_000).toISOString();
          await sourceRepository.update(trx, source.workspace_id, source.id, { next_sync_at: next });
          if (await ingestJobRepository.findOpen(trx, source.workspace_id, source.id)) return;
          await queueIngestJob(trx, source, now);
          queued++;
        });
      }
      return queued;
    },
  };
}
