import type { Db } from '../../db/schema.js';
import { knowledgeChunks, type KnowledgeHit, type SearchOptions } from './chunks.js';
import type { Embedder } from './embedder.js';
import { knowledgeVectors, type VectorHit } from './vectors.js';

/** What the agent retrieves for a question: its sources' best chunks, best first. */
export interface KnowledgeSearch {
  search(db: Db, workspaceId: string, chatbotId: string, question: string, limit: number, options?: SearchOptions): Promise<KnowledgeHit[]>;
  /** True when chunks are embedded (EMBEDDINGS_PROVIDER is set): ingestion then embeds what it stores. */
  readonly embedder: Embedder | null;
}

/** Where a failed question embedding is reported (search then answers with full text alone). */
export interface RetrievalLog {
  warn(details: object, message: string): void;
}

// Each ranking contributes this many candidates to the fusion, whatever the limit asked for.
const FUSED_CANDIDATES = 20;
// A question is embedded at once or not at all: full text answers rather than keep a visitor waiting.
const QUESTION_TIMEOUT_MS = 5000;
// Reciprocal rank fusion's constant (Cormack et al. 2009): damps the weight of the very first ranks.
const RRF_K = 60;

/**
 * Full text counts twice in the fusion: it reads the question's language, frame and typos, and its own rank
 * is what the answer step trusts; the vectors add the paraphrases it misses (docs/decisions/0021).
 */
const FULL_TEXT_WEIGHT = 2;

/**
 * Weighted reciprocal rank fusion: a chunk scores Σ weight / (RRF_K + rank) over the rankings that hold it,
 * so a chunk that both full text and vectors rank well comes first, and one ranking alone still counts.
 */
export function fuseRankings(rankings: readonly { ids: readonly number[]; weight: number }[]): Map<number, number> {
  const fused = new Map<number, number>();
  for (const { ids, weight } of rankings) {
    ids.forEach((chunkId, rank) => fused.set(chunkId, (fused.get(chunkId) ?? 0) + weight / (RRF_K + rank + 1)));
  }
  return fused;
}

/**
 * Retrieval: full text (ranked, multilingual, typo-tolerant: chunks.ts), fused with the nearest vectors when
 * an embedder is configured (hybrid). A question that cannot be embedded (the endpoint is down) is answered
 * by full text alone.
 */
export function createKnowledgeSearch(embedder: Embedder | null, log: RetrievalLog): KnowledgeSearch {
  return {
    embedder,
    async search(db, workspaceId, chatbotId, question, limit, options = {}) {
      if (limit <= 0) return [];
      if (!embedder) return knowledgeChunks.search(db, workspaceId, chatbotId, question, limit, options);
      const candidates = Math.max(limit, FUSED_CANDIDATES);
      const [fullText, nearest] = await Promise.all([
        knowledgeChunks.search(db, workspaceId, chatbotId, question, candidates, options),
        nearestChunks(db, embedder, log, workspaceId, chatbotId, question, candidates),
      ]);
      if (nearest.length === 0) return fullText.slice(0, limit);
      const fused = fuseRankings([
        { ids: fullText.map((hit) => hit.chunkId), weight: FULL_TEXT_WEIGHT },
        { ids: nearest.map((hit) => hit.chunkId), weight: 1 },
      ]);
      const similarity = new Map(nearest.map((hit) => [hit.chunkId, hit.similarity]));
      const known = new Map(fullText.map((hit) => [hit.chunkId, hit]));
      const ranked = [...fused].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, limit);
      const missing = ranked.map(([id]) => id).filter((id) => !known.has(id));
      for (const hit of await knowledgeChunks.byIds(db, workspaceId, chatbotId, missing)) known.set(hit.chunkId, hit);
      const best = ranked[0]?.[1] ?? 1;
      // A chunk found by meaning is as sure as its cosine similarity to the question, when that is more.
      return ranked.filter(([id]) => known.has(id)).map(([id, score]) => {
        const hit = known.get(id)!;
        return { ...hit, score: score / best, confidence: Math.max(hit.confidence, similarity.get(id) ?? 0) };
      });
    },
  };
}

async function nearestChunks(db: Db, embedder: Embedder, log: RetrievalLog, workspaceId: string, chatbotId: string, question: string, limit: number): Promise<VectorHit[]> {
  // No embedding request for an agent that has no vectors of this model (yet).
  if ((await knowledgeVectors.model(db, workspaceId, chatbotId)) !== embedder.model) return [];
  let query: Float32Array | undefined;
  try {
    [query] = await embedder.embed([question], { retries: 0, timeoutMs: QUESTION_TIMEOUT_MS });
  } catch (error) {
    log.warn({ err: error, chatbot_id: chatbotId }, 'the question could not be embedded; full-text retrieval alone');
    return [];
  }
  if (!query) return [];
  return knowledgeVectors.nearest(db, workspaceId, chatbotId, embedder.model, query, limit);
}
