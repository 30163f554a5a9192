import type { Kysely } from 'kysely';
import { bytesColumnType } from '../dialect.js';

/**
 * Chunk embeddings for hybrid retrieval (issue 30, EMBEDDINGS_PROVIDER=openai), stored so that a search reads
 * a few percent of an agent's vectors, not all of them (an inverted-file index, the same on both databases:
 * see src/modules/knowledge/vectors.ts and docs/decisions/0021):
 * - `knowledge_vector_indexes`: per agent, the embedding model, the index generation and its number of cells;
 * - `knowledge_vector_cells`: the centroid of each cell (float32);
 * - `knowledge_vectors`: one per chunk, int8-quantised with its scale, in the cell of its nearest centroid.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const bytes = bytesColumnType(db);
  await db.schema
    .createTable('knowledge_vector_indexes')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('chatbot_id', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('dimensions', 'integer', (c) => c.notNull())
    .addColumn('generation', 'integer', (c) => c.notNull())
    .addColumn('cells', 'integer', (c) => c.notNull())
    .addColumn('trained_vectors', 'integer', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('knowledge_vector_indexes_pk', ['workspace_id', 'chatbot_id'])
    .execute();
  await db.schema
    .createTable('knowledge_vector_cells')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('chatbot_id', 'text', (c) => c.notNull())
    .addColumn('cell', 'integer', (c) => c.notNull())
    .addColumn('centroid', bytes, (c) => c.notNull())
    .addPrimaryKeyConstraint('knowledge_vector_cells_pk', ['workspace_id', 'chatbot_id', 'cell'])
    .execute();
  await db.schema
    .createTable('knowledge_vectors')
    .addColumn('chunk_id', 'bigint', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('chatbot_id', 'text', (c) => c.notNull())
    .addColumn('generation', 'integer', (c) => c.notNull())
    .addColumn('cell', 'integer', (c) => c.notNull())
    .addColumn('embedding', bytes, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('knowledge_vectors_cell').on('knowledge_vectors').columns(['workspace_id', 'chatbot_id', 'cell']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('knowledge_vectors').ifExists().execute();
  await db.schema.dropTable('knowledge_vector_cells').ifExists().execute();
  await db.schema.dropTable('knowledge_vector_indexes').ifExists().execute();
}
