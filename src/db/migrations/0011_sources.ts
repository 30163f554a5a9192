import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

/**
 * Knowledge sources (issue 30): `sources` (website, file, text, Q&A per agent), `source_files` (an uploaded
 * file's bytes, kept for re-sync) and `source_documents` (the pages or file of a source, with the hash of
 * their text so a re-sync or a resumed job skips what did not change). `reply_jobs` becomes the one job
 * queue: a `kind` ('reply' | 'ingest') and a `source_id`; an ingest job has no conversation or message,
 * so those become nullable (SQLite cannot drop NOT NULL: the table is rebuilt, rows and indexes kept).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sources')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('chatbot_id', 'text', (c) => c.notNull().references('chatbots.id'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('origin', 'text', (c) => c.notNull().defaultTo('api'))
    .addColumn('title', 'text')
    .addColumn('url', 'text')
    .addColumn('config', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('documents', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('chunks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed_documents', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('sync_interval_hours', 'integer')
    .addColumn('next_sync_at', 'text')
    .addColumn('last_synced_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sources_chatbot_created').on('sources').columns(['workspace_id', 'chatbot_id', 'created_at', 'id']).execute();
  // The scheduler looks for sources due for a re-sync.
  await db.schema.createIndex('sources_next_sync').on('sources').column('next_sync_at').execute();

  await db.schema
    .createTable('source_files')
    .addColumn('source_id', 'text', (c) => c.primaryKey().references('sources.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('bytes', isPostgres(db) ? 'bytea' : 'blob', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('source_documents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('chatbot_id', 'text', (c) => c.notNull())
    .addColumn('source_id', 'text', (c) => c.notNull().references('sources.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('title', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('content_hash', 'text')
    .addColumn('chunks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('source_documents_source_url', ['source_id', 'url'])
    .execute();
  await db.schema.createIndex('source_documents_list').on('source_documents').columns(['workspace_id', 'source_id', 'created_at', 'id']).execute();

  if (isPostgres(db)) {
    await db.schema.alterTable('reply_jobs').addColumn('kind', 'text', (c) => c.notNull().defaultTo('reply')).execute();
    await db.schema.alterTable('reply_jobs').addColumn('source_id', 'text').execute();
    await sql`alter table reply_jobs alter column conversation_id drop not null, alter column message_id drop not null`.execute(db);
    await db.schema.dropIndex('reply_jobs_claim').execute();
  } else {
    await rebuildSqliteJobs(db, true);
  }
  // Replies and ingestion are claimed separately (each has its own concurrency), so the claim starts with the kind.
  await db.schema.createIndex('reply_jobs_claim').on('reply_jobs').columns(['kind', 'state', 'run_after']).execute();
  await db.schema.createIndex('reply_jobs_source').on('reply_jobs').columns(['source_id', 'state']).execute();
}

// SQLite: a new table with the wanted columns, the rows copied over, the old one dropped, the new renamed.
async function rebuildSqliteJobs(db: Kysely<any>, generalised: boolean): Promise<void> {
  await db.schema
    .createTable('reply_jobs_rebuilt')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .$call((t) => (generalised ? t.addColumn('kind', 'text', (c) => c.notNull().defaultTo('reply')).addColumn('source_id', 'text') : t))
    .addColumn('conversation_id', 'text', (c) => (generalised ? c : c.notNull()))
    .addColumn('message_id', 'text', (c) => (generalised ? c.unique() : c.notNull().unique()))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('run_after', 'text', (c) => c.notNull())
    .addColumn('locked_until', 'text')
    .addColumn('last_error', 'text')
    .addColumn('reply_message_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  const columns = sql.raw('id, workspace_id, conversation_id, message_id, state, attempts, run_after, locked_until, last_error, reply_message_id, created_at, updated_at');
  await sql`insert into reply_jobs_rebuilt (${columns}) select ${columns} from reply_jobs ${generalised ? sql`` : sql`where kind = 'reply'`}`.execute(db);
  await db.schema.dropTable('reply_jobs').execute();
  await db.schema.alterTable('reply_jobs_rebuilt').renameTo('reply_jobs').execute();
}

/** Drops the sources tables and turns the job queue back into reply jobs only (ingest jobs are dropped). */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('reply_jobs_source').ifExists().execute();
  await db.schema.dropIndex('reply_jobs_claim').ifExists().execute();
  if (isPostgres(db)) {
    await db.deleteFrom('reply_jobs').where('kind', '<>', 'reply').execute();
    await db.schema.alterTable('reply_jobs').dropColumn('source_id').execute();
    await db.schema.alterTable('reply_jobs').dropColumn('kind').execute();
    await sql`alter table reply_jobs alter column conversation_id set not null, alter column message_id set not null`.execute(db);
  } else {
    await rebuildSqliteJobs(db, false);
  }
  await db.schema.createIndex('reply_jobs_claim').on('reply_jobs').columns(['state', 'run_after']).execute();
  await db.schema.dropTable('source_documents').ifExists().execute();
  await db.schema.dropTable('source_files').ifExists().execute();
  await db.schema.dropTable('sources').ifExists().execute();
}
