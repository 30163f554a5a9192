import type { Kysely } from 'kysely';

/** The daily counters issue 31 adds (docs/decisions/0004: bumped in the transaction of the write they count). */
const COUNTERS = ['answered', 'unanswered', 'feedback_up', 'feedback_down', 'handoffs'] as const;

/**
 * Answers that can be measured (issue 31): an assistant message keeps the documents it used (`sources`,
 * JSON) and what kind of turn it was (`outcome`; null for visitor and operator messages); a conversation
 * records when the visitor asked for a person; an agent has suggested questions and a widget language.
 * `message_feedback` holds a visitor's latest rating of an answer, `unanswered_questions` every question
 * the agent could not answer from its knowledge (grouped by their normalized text when listed).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('messages').addColumn('sources', 'text', (c) => c.notNull().defaultTo('[]')).execute();
  await db.schema.alterTable('messages').addColumn('outcome', 'text').execute();
  await db.schema.alterTable('conversations').addColumn('handoff_requested_at', 'text').execute();
  await db.schema.alterTable('chatbots').addColumn('suggested_questions', 'text', (c) => c.notNull().defaultTo('[]')).execute();
  await db.schema.alterTable('chatbots').addColumn('language', 'text', (c) => c.notNull().defaultTo('auto')).execute();
  for (const counter of COUNTERS) {
    await db.schema.alterTable('daily_stats').addColumn(counter, 'integer', (c) => c.notNull().defaultTo(0)).execute();
  }

  await db.schema
    .createTable('message_feedback')
    .addColumn('message_id', 'text', (c) => c.primaryKey().references('messages.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('chatbot_id', 'text', (c) => c.notNull())
    .addColumn('conversation_id', 'text', (c) => c.notNull())
    .addColumn('rating', 'text', (c) => c.notNull())
    .addColumn('comment', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('unanswered_questions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('chatbot_id', 'text', (c) => c.notNull())
    .addColumn('conversation_id', 'text', (c) => c.notNull())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('question', 'text', (c) => c.notNull())
    .addColumn('normalized', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  // Listing a period of an agent's questions, and finding a group's newest wording.
  await db.schema.createIndex('unanswered_questions_list').on('unanswered_questions').columns(['workspace_id', 'chatbot_id', 'created_at']).execute();
  await db.schema.createIndex('unanswered_questions_group').on('unanswered_questions').columns(['workspace_id', 'chatbot_id', 'normalized', 'created_at']).execute();
}

/** Drops what up() added. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('unanswered_questions').ifExists().execute();
  await db.schema.dropTable('message_feedback').ifExists().execute();
  for (const counter of COUNTERS) await db.schema.alterTable('daily_stats').dropColumn(counter).execute();
  await db.schema.alterTable('chatbots').dropColumn('language').execute();
  await db.schema.alterTable('chatbots').dropColumn('suggested_questions').execute();
  await db.schema.alterTable('conversations').dropColumn('handoff_requested_at').execute();
  await db.schema.alterTable('messages').dropColumn('outcome').execute();
  await db.schema.alterTable('messages').dropColumn('sources').execute();
}
