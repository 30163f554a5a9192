import { Type, type Static } from 'typebox';
import { IdOf, ListOf, Nullable, PageQuery, Timestamp } from '../../http/schemas.js';

export const SOURCE_TYPES = ['website', 'file', 'text', 'qa'] as const;
export const SOURCE_STATUSES = ['queued', 'syncing', 'ready', 'failed'] as const;
export const DOCUMENT_STATUSES = ['pending', 'ready', 'failed'] as const;
export const DOCUMENT_ERROR_CODES = ['unreadable', 'too_large_when_expanded', 'took_too_long', 'fetch_failed'] as const;

export type SourceType = (typeof SOURCE_TYPES)[number];
export type SourceStatus = (typeof SOURCE_STATUSES)[number];

/** A knowledge source of an AI Agent. */
export const Source = Type.Object(
  {
    id: IdOf('source'),
    object: Type.Literal('source'),
    chatbot_id: IdOf('chatbot'),
    type: Type.Enum(SOURCE_TYPES),
    title: Nullable(Type.String()),
    url: Nullable(Type.String({ description: 'The start URL of a website source; null for the other types.' })),
    status: Type.Enum(SOURCE_STATUSES, {
      description: '`queued` (an ingestion job waits), `syncing` (running), `ready` (retrievable), `failed` (no document could be read; see `error`).',
    }),
    stats: Type.Object({
      documents: Type.Integer({ description: 'Pages or files found so far.' }),
      chunks: Type.Integer({ description: 'Chunks retrievable now.' }),
      failed_documents: Type.Integer({ description: 'Documents that could not be read (each with its error).' }),
    }),
    progress: Nullable(
      Type.Object({
        done: Type.Integer({ description: 'Documents this sync has read (or skipped as unchanged).' }),
        found: Type.Integer({ description: 'Documents this sync has found so far; a crawl finds more as it goes, up to its page limit.' }),
      }, { description: 'While `syncing`: how far the sync has got. Null otherwise.' }),
    ),
    error: Nullable(Type.String({ description: 'Why the last sync failed, or why a crawl stopped early (its time or request limit: the pages read are kept and the source is `ready`); null otherwise.' })),
    sync_interval_hours: Nullable(Type.Integer({ description: 'Re-synced on its own every this many hours; null: only on request.' })),
    last_synced_at: Nullable(Timestamp),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Source' },
);
export type SourceView = Static<typeof Source>;

export const SourceList = ListOf(Source, 'SourceList');

/** One page or file of a source. */
export const SourceDocument = Type.Object(
  {
    id: IdOf('document'),
    object: Type.Literal('source_document'),
    source_id: IdOf('source'),
    url: Type.String({ description: 'The page URL, or `file:<name>` / `text:<source id>` for other sources.' }),
    title: Nullable(Type.String()),
    status: Type.Enum(DOCUMENT_STATUSES),
    error: Nullable(Type.String({ description: 'Why the document could not be read (a 404, a corrupt PDF, …).' })),
    error_code: Nullable(Type.Enum(DOCUMENT_ERROR_CODES, {
      description: 'Why, as a code: `unreadable` (corrupt, encrypted, empty), `too_large_when_expanded` (it unpacks or parses past the memory allowed), ' +
        '`took_too_long` (past the parse deadline), `fetch_failed` (the page could not be fetched). Null when the document was read.',
    })),
    chunks: Type.Integer(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'SourceDocument' },
);
export type SourceDocumentView = Static<typeof SourceDocument>;

export const SourceDocumentList = ListOf(SourceDocument, 'SourceDocumentList');

const GLOB = Type.String({ minLength: 1, maxLength: 200 });
const SyncInterval = Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 8760, description: 'Re-sync every this many hours (1 to 8760); null or absent: off.' })));

/** Crawl limits of a website source; absent fields take the defaults. */
export const CrawlOptions = Type.Object(
  {
    max_pages: Type.Optional(Type.Integer({ minimum: 1, description: 'Most pages (default 50; at most SOURCE_MAX_PAGES, 500 by default). 1: the start page only.' })),
    max_depth: Type.Optional(Type.Integer({ minimum: 0, maximum: 20, description: 'Most links followed from the start page (default 3).' })),
    include: Type.Optional(Type.Array(GLOB, { maxItems: 50, description: 'Path globs a page must match (e.g. `/docs/**`).' })),
    exclude: Type.Optional(Type.Array(GLOB, { maxItems: 50, description: 'Path globs of pages to skip.' })),
  },
  { additionalProperties: false, title: 'CrawlOptions' },
);

const CreateWebsite = Type.Object(
  {
    type: Type.Literal('website'),
    url: Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 }),
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    crawl: Type.Optional(CrawlOptions),
    sync_interval_hours: SyncInterval,
  },
  { additionalProperties: false, title: 'CreateWebsiteSource' },
);
const CreateText = Type.Object(
  {
    type: Type.Literal('text'),
    title: Type.String({ minLength: 1, maxLength: 200 }),
    content: Type.String({ minLength: 1, maxLength: 200_000 }),
  },
  { additionalProperties: false, title: 'CreateTextSource' },
);
const CreateQa = Type.Object(
  {
    type: Type.Literal('qa'),
    question: Type.String({ minLength: 1, maxLength: 1000 }),
    answer: Type.String({ minLength: 1, maxLength: 20_000 }),
  },
  { additionalProperties: false, title: 'CreateQaSource' },
);

/** JSON body of POST /chatbots/{id}/sources: a website, a text or a Q&A pair. */
export const CreateSourceJson = Type.Union([CreateWebsite, CreateText, CreateQa], { title: 'CreateSource' });
export type CreateSourceJsonInput = Static<typeof CreateSourceJson>;

/**
 * The multipart form of a file upload. The route reads the parts before validation and hands the file on
 * beside the body; `file` is then validated as `sha256:<hex>;name=<file name>`, so the idempotency
 * fingerprint covers the file's content.
 */
export const UploadForm = Type.Object(
  {
    file: Type.String({ format: 'binary', description: 'A PDF, DOCX, Markdown, plain text or HTML file (at most SOURCE_MAX_FILE_MB, 20 MB by default).' }),
    title: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Defaults to the file name.' })),
  },
  { additionalProperties: false, title: 'UploadSourceFile' },
);

/** `{id}/sources/{source_id}` in a path. */
export const SourceParams = Type.Object({
  id: Type.String({ description: 'The AI Agent id.' }),
  source_id: Type.String({ description: 'The source id.' }),
});

export const ListSourcesQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });
export type ListSourcesFilters = Static<typeof ListSourcesQuery>;

export const ListDocumentsQuery = Type.Object({ limit: PageQuery.limit, cursor: PageQuery.cursor }, { additionalProperties: false });
export type ListDocumentsFilters = Static<typeof ListDocumentsQuery>;

/** Query of GET /chatbots/{id}/knowledge/search. */
export const KnowledgeSearchQuery = Type.Object(
  {
    q: Type.String({ minLength: 1, maxLength: 1000, description: 'The question, as a visitor would ask it.' }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, default: 5, description: 'Most chunks (1 to 50, default 5).' })),
  },
  { additionalProperties: false },
);

/** One retrieved chunk. */
export const KnowledgeHit = Type.Object(
  {
    source_id: IdOf('source'),
    document_id: IdOf('document'),
    title: Type.String(),
    url: Nullable(Type.String()),
    content: Type.String(),
    score: Type.Number({ description: 'Relative rank: higher is better, in (0, 1], the search\'s best hit scoring 1 whatever it holds.' }),
    confidence: Type.Number({
      minimum: 0,
      maximum: 1,
      description:
        'Absolute: how much of the question the chunk holds, in [0, 1], comparable across questions (the share of the question\'s words, ' +
        'weighted by rarity, found in it; a misspelt word matched through its correction counts a little less). The builtin answer states ' +
        'a sentence from about 0.4, offers pages that may help from 0.25, and declines below. With embeddings, the cosine similarity to the question when that is more.',
    }),
  },
  { title: 'KnowledgeHit' },
);
export type KnowledgeHitView = Static<typeof KnowledgeHit>;

export const KnowledgeSearchResult = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(KnowledgeHit) },
  { title: 'KnowledgeSearchResult' },
);

/** Body of POST …/sources: JSON (a website, a text, a Q&A pair) or the multipart form of a file. */
export const CreateSourceBody = Type.Unsafe<CreateSourceJsonInput | { file: string; title?: string }>({
  content: { 'application/json': { schema: CreateSourceJson }, 'multipart/form-data': { schema: UploadForm } },
});
