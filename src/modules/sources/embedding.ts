import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { EMBEDDING_BATCH, type Embedder } from '../knowledge/embedder.js';
import { knowledgeVectors } from '../knowledge/vectors.js';
import type { WorkerLog } from '../runtime/reply-worker.js';
import type { SourceRow } from './repository.js';

// The index is checked for retraining every this many batches (and at the end): a count of the agent's vectors.
const TRAIN_CHECK_EVERY = 16;

/** The text a chunk is embedded from: what names it, then what it says. */
export function embeddingText(chunk: { title: string; heading_path: string; content: string }): string {
  const headings = (JSON.parse(chunk.heading_path) as string[]).join(' > ');
  return [chunk.title, headings, chunk.content].filter(Boolean).join('\n');
}

/**
 * Embeds the source's chunks that have no vector yet, a batch per request, and keeps the agent's vector index
 * trained. When the endpoint fails (after the SDK's retries), the rest stay unembedded: full text still finds
 * them, and the next sync embeds them. Chunks of another model's index are embedded again.
 */
export async function embedChunks(deps: { db: Kysely<Database>; log: WorkerLog }, source: SourceRow, embedder: Embedder, signal: AbortSignal): Promise<void> {
  const { db, log } = deps;
  await knowledgeVectors.useModel(db, source.workspace_id, source.chatbot_id, embedder.model);
  let embedded = 0;
  for (let batch = 1; ; batch++) {
    const chunks = await knowledgeVectors.missing(db, source.workspace_id, source.chatbot_id, source.id, EMBEDDING_BATCH);
    if (chunks.length === 0) break;
    if (signal.aborted) throw new Error('ingestion interrupted: the process is shutting down');
    let vectors: Float32Array[];
    try {
      vectors = await embedder.embed(chunks.map(embeddingText), { signal });
      if (vectors.length !== chunks.length) throw new Error(`the endpoint returned ${vectors.length} embeddings for ${chunks.length} inputs`);
    } catch (error) {
      if (signal.aborted) throw error;
      log.warn({ err: error, source_id: source.id, embedded }, 'chunks could not be embedded; full text finds them until the next sync');
      return;
    }
    await knowledgeVectors.add(db, source.workspace_id, source.chatbot_id, embedder.model, chunks.map((chunk, i) => ({ chunkId: chunk.id, vector: vectors[i]! })));
    embedded += chunks.length;
    if (batch % TRAIN_CHECK_EVERY === 0) await knowledgeVectors.trainIfDue(db, source.workspace_id, source.chatbot_id);
  }
  await knowledgeVectors.trainIfDue(db, source.workspace_id, source.chatbot_id);
}
