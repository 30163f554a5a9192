import type { Kysely } from 'kysely';
import type { Database } from '../src/db/schema.js';
import type { Embedder } from '../src/modules/knowledge/embedder.js';
import { knowledgeVectors } from '../src/modules/knowledge/vectors.js';
import { unit } from '../src/modules/knowledge/vector-math.js';

/**
 * Synthetic embeddings for the hybrid benchmark: unit vectors around 500 seeded topic centres (text about
 * one topic lands near it, as a model's embeddings cluster), and an embedder that answers a question with one
 * of them at once, so the measured time is the service's, not a model's.
 */
export function syntheticEmbeddings(dimensions: number) {
  let state = 12345;
  const random = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
  const centres = dimensions > 0 ? Array.from({ length: 500 }, () => unit(Array.from({ length: dimensions }, random))) : [];
  const near = () => unit(Array.from(centres[Math.floor(((random() + 1) / 2) * centres.length)]!, (value) => value + random() * 0.3 / Math.sqrt(dimensions) * 4));
  const embedder: Embedder = { model: `synthetic-${dimensions}`, embed: async (texts) => texts.map(near) };
  return { near, embedder };
}

/** Gives every chunk of the source without a vector one, a batch at a time, and trains the index as ingestion does. */
export async function embedAll(db: Kysely<Database>, workspaceId: string, chatbotId: string, sourceId: string, embeddings: ReturnType<typeof syntheticEmbeddings>): Promise<void> {
  for (;;) {
    const chunks = await knowledgeVectors.missing(db, workspaceId, chatbotId, sourceId, 1000);
    if (chunks.length === 0) break;
    await knowledgeVectors.add(db, workspaceId, chatbotId, embeddings.embedder.model, chunks.map((chunk) => ({ chunkId: chunk.id, vector: embeddings.near() })));
  }
  await knowledgeVectors.trainIfDue(db, workspaceId, chatbotId);
}
