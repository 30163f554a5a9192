import type { Kysely } from 'kysely';

/**
 * Email (issue 32, point 5). `password_resets`: one row per emailed link. Only the SHA-256 of the link's
 * token is stored (a leaked table resets nothing); `used_at` makes it single-use, `expires_at` short-lived.
 * Keyed by user, not workspace: an account spans workspaces. `mail_jobs`: emails queued in the transaction
 * of what they tell of (a new lead, a request for a person, an invitation), sent by the one job runner with
 * a lease and retries; `dedupe_key` keeps one email per fact. `memberships.notify_*`: what each member of a
 * workspace wants to be emailed about (on by default).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('password_resets')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .execute();
  await db.schema.createIndex('password_resets_user').on('password_resets').columns(['user_id']).execute();

  await db.schema
    .createTable('mail_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('dedupe_key', 'text', (c) => c.notNull().unique())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('text_body', 'text', (c) => c.notNull())
    .addColumn('html_body', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('run_after', 'text', (c) => c.notNull())
    .addColumn('locked_until', 'text')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('mail_jobs_claim').on('mail_jobs').columns(['state', 'run_after']).execute();

  await db.schema.alterTable('memberships').addColumn('notify_new_lead', 'integer', (c) => c.notNull().defaultTo(1)).execute();
  await db.schema.alterTable('memberships').addColumn('notify_handoff', 'integer', (c) => c.notNull().defaultTo(1)).execute();
}

/** Drops the tables and the preferences (outstanding links stop working, queued emails are not sent). */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('memberships').dropColumn('notify_handoff').execute();
  await db.schema.alterTable('memberships').dropColumn('notify_new_lead').execute();
  await db.schema.dropTable('mail_jobs').execute();
  await db.schema.dropTable('password_resets').execute();
}
