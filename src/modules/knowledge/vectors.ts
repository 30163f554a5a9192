import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import { inTransaction } from '../../db/transaction.js';
import { lockedForUpdate } from '../../db/dialect.js';
import type { Database, Db } from '../../db/schema.js';
import { bytesToFloats, decodeVector, dotEncoded, encodeVector, floatsToBytes, kMeans, nearestCentroid, nearestCentroids } from './vector-math.js';

/**
 * An agent's chunk embeddings in an inverted-file index, the same on both databases (docs/decisions/0021):
 * every vector sits in the cell of its nearest centroid; a search embeds the question, picks the cells of the
 * nearest centroids and reads only their vectors (a few percent of the agent's), so its cost grows with the
 * square root of the agent's size and its memory stays bounded. Until an agent has MIN_TRAINED vectors there
 * are no cells and a search reads them all, page by page. The centroids are trained again (spherical k-means
 * over a sample, then every vector reassigned) each time the agent's vectors double.
 */

/** Vectors an agent needs before its index is trained. */
export const MIN_TRAINED = 1024;
// Samples per cell for k-means: enough for stable centroids, few enough to train in seconds.
const SAMPLES_PER_CELL = 16;
const SCAN_PAGE = 1000;
const UPDATE_BATCH = 500;

/** How many cells a search reads: 5 % of them, and at least 8. */
export const probesFor = (cells: number): number => Math.min(cells, Math.max(8, Math.ceil(cells * 0.05)));

/** A chunk near a question: its id and cosine similarity. */
export interface VectorHit {
  chunkId: number;
  similarity: number;
}

type IndexRow = { model: string; dimensions: number; generation: number; cells: number; trained_vectors: number };

async function indexRow(db: Db, workspaceId: string, chatbotId: string, forUpdate = false): Promise<IndexRow | undefined> {
  const query = db.selectFrom('knowledge_vector_indexes').select(['model', 'dimensions', 'generation', 'cells', 'trained_vectors'])
    .where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId);
  return (forUpdate ? lockedForUpdate(db, query) : query).executeTakeFirst();
}

async function centroidsOf(db: Db, workspaceId: string, chatbotId: string): Promise<Float32Array[]> {
  const rows = await db.selectFrom('knowledge_vector_cells').select(['cell', 'centroid'])
    .where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).orderBy('cell').execute();
  return rows.map((row) => bytesToFloats(row.centroid));
}

/** Keeps the `limit` best hits seen so far (a small sorted list: limits are tens). */
function keepBest(best: VectorHit[], hit: VectorHit, limit: number): void {
  if (best.length === limit && hit.similarity <= best[best.length - 1]!.similarity) return;
  let i = best.length;
  while (i > 0 && best[i - 1]!.similarity < hit.similarity) i--;
  best.splice(i, 0, hit);
  if (best.length > limit) best.pop();
}

/** Removes an agent's vectors, cells and index row (its chunks are gone, or its embedding model changed). */
async function clearAgent(trx: Db, workspaceId: string, chatbotId: string): Promise<void> {
  await trx.deleteFrom('knowledge_vectors').where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).execute();
  await trx.deleteFrom('knowledge_vector_cells').where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).execute();
  await trx.deleteFrom('knowledge_vector_indexes').where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).execute();
}

/** SQL and arithmetic of the vector index. Every query carries the workspace and the agent. */
export const knowledgeVectors = {
  /** Chunks of a source that have no vector yet, oldest first (what an ingest job embeds). */
  async missing(db: Db, workspaceId: string, chatbotId: string, sourceId: string, limit: number): Promise<{ id: number; title: string; heading_path: string; content: string }[]> {
    const rows = await db.selectFrom('knowledge_chunks as c')
      .leftJoin('knowledge_vectors as v', 'v.chunk_id', 'c.id')
      .select(['c.id', 'c.title', 'c.heading_path', 'c.content'])
      .where('c.workspace_id', '=', workspaceId).where('c.chatbot_id', '=', chatbotId).where('c.source_id', '=', sourceId).where('v.chunk_id', 'is', null)
      .orderBy('c.id').limit(limit).execute();
    return rows.map((row) => ({ ...row, id: Number(row.id) }));
  },

  /** The model of the agent's vectors, if it has any. */
  async model(db: Db, workspaceId: string, chatbotId: string): Promise<string | undefined> {
    return (await indexRow(db, workspaceId, chatbotId))?.model;
  },

  /** Starts the agent's index afresh when its vectors were made by another model (or with other dimensions). */
  async useModel(db: Kysely<Database>, workspaceId: string, chatbotId: string, model: string): Promise<void> {
    await inTransaction(db, {}, async (trx) => {
      const row = await indexRow(trx, workspaceId, chatbotId, true);
      if (row && row.model !== model) await clearAgent(trx, workspaceId, chatbotId);
    });
  },

  /**
   * Stores the vectors of chunks (that still exist) in the cells of their nearest centroids, in one
   * transaction that holds the agent's index row, so a training never misses them.
   */
  async add(db: Kysely<Database>, workspaceId: string, chatbotId: string, model: string, vectors: { chunkId: number; vector: Float32Array }[]): Promise<void> {
    if (vectors.length === 0) return;
    const dimensions = vectors[0]!.vector.length;
    await inTransaction(db, {}, async (trx) => {
      await trx.insertInto('knowledge_vector_indexes')
        .values({ workspace_id: workspaceId, chatbot_id: chatbotId, model, dimensions, generation: 0, cells: 0, trained_vectors: 0, updated_at: new Date().toISOString() })
        .onConflict((oc) => oc.columns(['workspace_id', 'chatbot_id']).doNothing()).execute();
      let row = (await indexRow(trx, workspaceId, chatbotId, true))!;
      if (row.model !== model || row.dimensions !== dimensions) {
        await clearAgent(trx, workspaceId, chatbotId);
        await trx.insertInto('knowledge_vector_indexes')
          .values({ workspace_id: workspaceId, chatbot_id: chatbotId, model, dimensions, generation: 0, cells: 0, trained_vectors: 0, updated_at: new Date().toISOString() }).execute();
        row = { model, dimensions, generation: 0, cells: 0, trained_vectors: 0 };
      }
      const centroids = row.cells > 0 ? await centroidsOf(trx, workspaceId, chatbotId) : [];
      const existing = await trx.selectFrom('knowledge_chunks').select('id')
        .where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).where('id', 'in', vectors.map((v) => v.chunkId)).execute();
      const alive = new Set(existing.map((chunk) => Number(chunk.id)));
      const rows = vectors.filter((v) => alive.has(v.chunkId)).map(({ chunkId, vector }) => ({
        chunk_id: chunkId, workspace_id: workspaceId, chatbot_id: chatbotId, generation: row.generation,
        cell: centroids.length > 0 ? nearestCentroid(centroids, vector) : 0, embedding: encodeVector(vector),
      }));
      if (rows.length > 0) await trx.insertInto('knowledge_vectors').values(rows).onConflict((oc) => oc.column('chunk_id').doNothing()).execute();
    });
  },

  /** The chunks nearest to a unit query vector, best first; none when the agent's vectors are of another model. */
  async nearest(db: Db, workspaceId: string, chatbotId: string, model: string, query: Float32Array, limit: number): Promise<VectorHit[]> {
    const row = await indexRow(db, workspaceId, chatbotId);
    if (!row || row.model !== model || row.dimensions !== query.length || limit <= 0) return [];
    const best: VectorHit[] = [];
    const base = () => db.selectFrom('knowledge_vectors').select(['chunk_id', 'embedding']).where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId);
    const consider = (rows: { chunk_id: number | string; embedding: Uint8Array }[]) => {
      for (const vector of rows) keepBest(best, { chunkId: Number(vector.chunk_id), similarity: dotEncoded(query, vector.embedding) }, limit);
    };
    if (row.cells > 0) {
      // A cell at a time: about √n vectors each.
      for (const cell of nearestCentroids(await centroidsOf(db, workspaceId, chatbotId), query, probesFor(row.cells))) consider(await base().where('cell', '=', cell).execute());
      return best;
    }
    // No cells yet (a small agent): every vector, page by page.
    for (let after = -1; ;) {
      const rows = await base().where('chunk_id', '>', after).orderBy('chunk_id').limit(SCAN_PAGE).execute();
      consider(rows);
      if (rows.length < SCAN_PAGE) return best;
      after = Number(rows[rows.length - 1]!.chunk_id);
    }
  },

  /** Deletes the vectors of these chunks (in the transaction that deletes the chunks). */
  async deleteChunks(trx: Db, workspaceId: string, chunkIds: readonly number[]): Promise<void> {
    if (chunkIds.length > 0) await trx.deleteFrom('knowledge_vectors').where('workspace_id', '=', workspaceId).where('chunk_id', 'in', chunkIds).execute();
  },

  /** Deletes an agent's whole vector index. */
  deleteAgent: clearAgent,

  /**
   * Trains the agent's cells again when its vectors have doubled since the last training (and number at
   * least MIN_TRAINED): √n centroids from a sample, then every vector reassigned, computed outside any
   * transaction (yielding to other work between pages) and applied in one. Returns true when it trained.
   */
  async trainIfDue(db: Kysely<Database>, workspaceId: string, chatbotId: string): Promise<boolean> {
    const row = await indexRow(db, workspaceId, chatbotId);
    if (!row) return false;
    const { count } = await db.selectFrom('knowledge_vectors').select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).executeTakeFirstOrThrow();
    const total = Number(count);
    if (total < MIN_TRAINED || total < 2 * row.trained_vectors) return false;
    const cells = Math.round(Math.sqrt(total));
    const every = Math.max(1, Math.floor(total / (cells * SAMPLES_PER_CELL)));
    const scan = async (visit: (chunkId: number, embedding: Uint8Array, index: number) => void) => {
      let index = 0;
      for (let after = -1; ;) {
        const rows = await db.selectFrom('knowledge_vectors').select(['chunk_id', 'embedding'])
          .where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).where('chunk_id', '>', after)
          .orderBy('chunk_id').limit(SCAN_PAGE).execute();
        for (const vector of rows) visit(Number(vector.chunk_id), vector.embedding, index++);
        if (rows.length < SCAN_PAGE) return;
        after = Number(rows[rows.length - 1]!.chunk_id);
        await nextTurn();
      }
    };
    const samples: Float32Array[] = [];
    await scan((_id, embedding, index) => {
      if (index % every === 0) samples.push(decodeVector(embedding));
    });
    const centroids = await kMeans(samples, cells);
    const byCell = new Map<number, number[]>();
    await scan((chunkId, embedding) => {
      const cell = nearestCentroid(centroids, decodeVector(embedding));
      const ids = byCell.get(cell) ?? [];
      ids.push(chunkId);
      byCell.set(cell, ids);
    });
    return inTransaction(db, {}, async (trx) => {
      const current = await indexRow(trx, workspaceId, chatbotId, true);
      if (!current || current.generation !== row.generation || current.model !== row.model) return false;
      const generation = row.generation + 1;
      await trx.deleteFrom('knowledge_vector_cells').where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).execute();
      await trx.insertInto('knowledge_vector_cells')
        .values(centroids.map((centroid, cell) => ({ workspace_id: workspaceId, chatbot_id: chatbotId, cell, centroid: floatsToBytes(centroid) }))).execute();
      for (const [cell, ids] of byCell) {
        for (let start = 0; start < ids.length; start += UPDATE_BATCH) {
          await trx.updateTable('knowledge_vectors').set({ cell, generation })
            .where('workspace_id', '=', workspaceId).where('chunk_id', 'in', ids.slice(start, start + UPDATE_BATCH)).execute();
        }
      }
      // Vectors added while the centroids were computed: placed now, under the lock.
      const late = await trx.selectFrom('knowledge_vectors').select(['chunk_id', 'embedding'])
        .where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).where('generation', '<', generation).execute();
      for (const vector of late) {
        await trx.updateTable('knowledge_vectors').set({ cell: nearestCentroid(centroids, decodeVector(vector.embedding)), generation })
          .where('workspace_id', '=', workspaceId).where('chunk_id', '=', vector.chunk_id).execute();
      }
      await trx.updateTable('knowledge_vector_indexes').set({ generation, cells: centroids.length, trained_vectors: total, updated_at: new Date().toISOString() })
        .where('workspace_id', '=', workspaceId).where('chatbot_id', '=', chatbotId).execute();
      return true;
    });
  },
};
