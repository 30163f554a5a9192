import type { Kysely } from 'kysely';
import { addTermsFullTextIndex, dropTermsFullTextIndex, withSerialId } from '../dialect.js';

/**
 * Knowledge chunks (issue 30): the retrievable pieces of an agent's sources, with their analysed index text
 * (`title_terms`, `terms`: stemmed in the chunk's language in JS, see src/modules/knowledge/analyzer.ts) under
 * a full-text index (FTS5 on SQLite, a 'simple' tsvector with GIN on PostgreSQL). For typo tolerance, each
 * agent's vocabulary (`knowledge_terms`: folded word and its index term, and in how many chunks) and its deletion
 * neighbourhood (`knowledge_term_variants`: the word with one or two letters removed → the word), so that
 * the words within edit distance 1–2 of a misspelt one are found by an index lookup, not a scan.
 * Chunks reference their agent only: sources and documents are removed through the repository.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withSerialId(db, db.schema.createTable('knowledge_chunks'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('chatbot_id', 'text', (c) => c.notNull().references('chatbots.id'))
    .addColumn('source_id', 'text', (c) => c.notNull())
    .addColumn('document_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('url', 'text')
    .addColumn('heading_path', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('title_terms', 'text', (c) => c.notNull())
    .addColumn('terms', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('knowledge_chunks_source').on('knowledge_chunks').columns(['workspace_id', 'chatbot_id', 'source_id']).execute();
  await db.schema.createIndex('knowledge_chunks_document').on('knowledge_chunks').column('document_id').execute();
  await addTermsFullTextIndex(db, 'knowledge_chunks');

  await db.schema
    .createTable('knowledge_terms')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('chatbot_id', 'text', (c) => c.notNull())
    .addColumn('word', 'text', (c) => c.notNull())
    .addColumn('term', 'text', (c) => c.notNull())
    .addColumn('docs', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('knowledge_terms_pk', ['workspace_id', 'chatbot_id', 'word', 'term'])
    .execute();
  await db.schema.createIndex('knowledge_terms_term').on('knowledge_terms').columns(['workspace_id', 'chatbot_id', 'term']).execute();

  await db.schema
    .createTable('knowledge_term_variants')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('chatbot_id', 'text', (c) => c.notNull())
    .addColumn('variant', 'text', (c) => c.notNull())
    .addColumn('word', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('knowledge_term_variants_pk', ['workspace_id', 'chatbot_id', 'variant', 'word'])
    .execute();
  // Removing a word's variants when its last chunk goes.
  await db.schema.createIndex('knowledge_term_variants_word').on('knowledge_term_variants').columns(['workspace_id', 'chatbot_id', 'word']).execute();
}

/** Drops the chunks, their full-text index and the vocabulary. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('knowledge_term_variants').ifExists().execute();
  await db.schema.dropTable('knowledge_terms').ifExists().execute();
  await dropTermsFullTextIndex(db, 'knowledge_chunks');
  await db.schema.dropTable('knowledge_chunks').ifExists().execute();
}
