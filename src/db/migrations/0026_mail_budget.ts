import { sql, type Kysely } from 'kysely';

/**
 * The notification mail budget. `mail_jobs.kind`: what an email is (`new_lead`, `handoff`, `digest`,
 * `invitation`), so the budget counts only the notifications that visitors cause; rows from before are
 * named by their dedupe key (the default only serves that backfill: the code always sets the kind).
 * `mail_jobs.digest_id`: a notification past the budget is stored `held` (never sent by itself, its
 * dedupe key still kept) and points at the one digest email that tells of it instead.
 * `mail_jobs_budget` serves the count of a workspace's notifications in the last hour, `mail_jobs_digest`
 * the count of what a digest tells of.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('mail_jobs').addColumn('kind', 'text', (c) => c.notNull().defaultTo('new_lead')).execute();
  await db.schema.alterTable('mail_jobs').addColumn('digest_id', 'text').execute();
  await db
    .updateTable('mail_jobs')
    .set({ kind: sql`case when dedupe_key like 'invitation:%' then 'invitation' when dedupe_key like 'handoff:%' then 'handoff' else 'new_lead' end` })
    .execute();
  await db.schema.createIndex('mail_jobs_budget').on('mail_jobs').columns(['workspace_id', 'kind', 'state', 'created_at']).execute();
  await db.schema.createIndex('mail_jobs_digest').on('mail_jobs').columns(['digest_id']).execute();
}

/** Drops the kinds and the digest links (held notifications stay stored, unsent). */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('mail_jobs_digest').execute();
  await db.schema.dropIndex('mail_jobs_budget').execute();
  await db.schema.alterTable('mail_jobs').dropColumn('digest_id').execute();
  await db.schema.alterTable('mail_jobs').dropColumn('kind').execute();
}
