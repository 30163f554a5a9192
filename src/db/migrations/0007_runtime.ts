import type { Kysely } from 'kysely';

/**
 * The chat runtime: durable reply jobs (one per visitor message the agent must answer, recorded in the
 * message's transaction) and visitor tokens (only their SHA-256 is stored).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('reply_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('conversation_id', 'text', (c) => c.notNull())
    .addColumn('message_id', 'text', (c) => c.notNull().unique())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('run_after', 'text', (c) => c.notNull())
    .addColumn('locked_until', 'text')
    .addColumn('last_error', 'text')
    .addColumn('reply_message_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  // The claim looks for pending jobs that are due, and running ones whose lease ran out.
  await db.schema.createIndex('reply_jobs_claim').on('reply_jobs').columns(['state', 'run_after']).execute();

  await db.schema
    .createTable('visitor_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('conversation_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  // The idle sweeper looks for open conversations by last activity.
  await db.schema.createIndex('conversations_open_activity').on('conversations').columns(['status', 'last_message_at']).execute();
}

/** Drops what the migration created. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('conversations_open_activity').ifExists().execute();
  await db.schema.dropTable('visitor_tokens').ifExists().execute();
  await db.schema.dropTable('reply_jobs').ifExists().execute();
}
