/**
 * The tables of agents' knowledge (issue 30): sources and their documents and files, the retrievable
 * chunks with their full-text vocabulary, and the vector index. Part of `Database` (src/db/schema.ts).
 */
import type { Generated } from 'kysely';

/** A knowledge source of an agent: a website, an uploaded file, a text or a Q&A pair (issue 30). */
export interface SourcesTable {
  id: string;
  workspace_id: string;
  chatbot_id: string;
  type: 'website' | 'file' | 'text' | 'qa';
  /** 'knowledge': a text source mirroring one entry of the agent's `knowledge` field; 'api': any other. */
  origin: 'api' | 'knowledge';
  title: string | null;
  url: string | null;
  /** JSON: crawl limits, text content, question and answer, or file name and media type. */
  config: string;
  status: 'queued' | 'syncing' | 'ready' | 'failed';
  documents: number;
  chunks: number;
  failed_documents: number;
  error: string | null;
  /** Re-sync every this many hours; null: never on its own. */
  sync_interval_hours: number | null;
  next_sync_at: string | null;
  last_synced_at: string | null;
  /** While a sync runs: documents done in it, and found so far (a crawl finds more as it goes); else null. */
  sync_done: number | null;
  sync_found: number | null;
  created_at: string;
  updated_at: string;
}

/** The bytes of an uploaded file, kept so the source can be synced again. */
export interface SourceFilesTable {
  source_id: string;
  workspace_id: string;
  bytes: Uint8Array;
}

/** One page or file of a source; `content_hash` lets a re-sync skip what did not change. */
export interface SourceDocumentsTable {
  id: string;
  workspace_id: string;
  chatbot_id: string;
  source_id: string;
  url: string;
  title: string | null;
  status: 'pending' | 'ready' | 'failed';
  error: string | null;
  /** Why it failed, as a code (src/modules/sources/parsing/types.ts DocumentErrorCode); null when it did not, or failed before codes. */
  error_code: 'unreadable' | 'too_large_when_expanded' | 'took_too_long' | 'fetch_failed' | null;
  content_hash: string | null;
  chunks: number;
  created_at: string;
  updated_at: string;
}

/** A retrievable piece of a source's document, with its analysed index text (issue 30; src/modules/knowledge/chunks.ts). */
export interface KnowledgeChunksTable {
  id: Generated<number>;
  workspace_id: string;
  chatbot_id: string;
  source_id: string;
  document_id: string;
  /** Order of the chunk in its document. */
  position: number;
  title: string;
  url: string | null;
  /** JSON array of the headings above the chunk. */
  heading_path: string;
  content: string;
  /** Detected language: en, es, fr, de, pt or other. */
  language: string;
  /** Index text of the title and headings; `terms`: of the content (stemmed, folded, no stopwords). */
  title_terms: string;
  terms: string;
  created_at: string;
}

/** Per agent: the embedding model of its vectors and the inverted-file index over them (src/modules/knowledge/vectors.ts). */
export interface KnowledgeVectorIndexesTable {
  workspace_id: string;
  chatbot_id: string;
  model: string;
  dimensions: number;
  /** Bumped by each training; vectors of an older generation are in cells of older centroids. */
  generation: number;
  /** Number of cells (centroids); 0: not trained yet, a search reads every vector of the agent. */
  cells: number;
  /** How many vectors the agent had at the last training (it retrains when they double). */
  trained_vectors: number;
  updated_at: string;
}

/** The centroid (float32, unit length) of one cell of an agent's vector index. */
export interface KnowledgeVectorCellsTable {
  workspace_id: string;
  chatbot_id: string;
  cell: number;
  centroid: Buffer;
}

/** A chunk's embedding: int8-quantised with its scale (src/modules/knowledge/vector-math.ts), in its cell. */
export interface KnowledgeVectorsTable {
  chunk_id: number | string;
  workspace_id: string;
  chatbot_id: string;
  generation: number;
  cell: number;
  embedding: Buffer;
}

/** An agent's vocabulary: each folded word of its chunks, its index term, and in how many chunks it occurs. */
export interface KnowledgeTermsTable {
  workspace_id: string;
  chatbot_id: string;
  word: string;
  term: string;
  docs: number;
}

/** The deletion neighbourhood of the vocabulary: a word with up to two letters removed → the word (typo tolerance). */
export interface KnowledgeTermVariantsTable {
  workspace_id: string;
  chatbot_id: string;
  variant: string;
  word: string;
}
