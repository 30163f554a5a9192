import type { Insertable, Selectable, Updateable } from 'kysely';
import { claimLocked } from '../../db/dialect.js';
import type { Db, MailJobsTable } from '../../db/schema.js';

/** A queued email as stored. */
export type MailJobRow = Selectable<MailJobsTable>;

const JOB_COLUMNS = ['id', 'workspace_id', 'dedupe_key', 'recipient', 'subject', 'text_body', 'html_body', 'state', 'attempts', 'run_after', 'locked_until', 'last_error', 'created_at', 'updated_at'] as const;

/** A member who wants to be emailed about something, with their address. */
export interface Recipient {
  user_id: string;
  email: string;
}

/** SQL for queued emails (a claimable queue of the job runner) and the members' email preferences. */
export const mailRepository = {
  /** Queues emails; one already queued with the same dedupe key is left as it is. */
  async insert(db: Db, rows: Insertable<MailJobsTable>[]): Promise<void> {
    if (rows.length === 0) return;
    await db.insertInto('mail_jobs').values(rows).onConflict((oc) => oc.column('dedupe_key').doNothing()).execute();
  },

  /** The members of a workspace who want one kind of notification. */
  async recipients(db: Db, workspaceId: string, preference: 'notify_new_lead' | 'notify_handoff'): Promise<Recipient[]> {
    return db
      .selectFrom('memberships')
      .innerJoin('users', 'users.id', 'memberships.user_id')
      .select(['memberships.user_id', 'users.email'])
      .where('memberships.workspace_id', '=', workspaceId)
      .where(`memberships.${preference}`, '=', 1)
      .orderBy('memberships.user_id')
      .execute();
  },

  /** A member's email preferences in a workspace, if a member. */
  async preferences(db: Db, workspaceId: string, userId: string): Promise<{ notify_new_lead: number; notify_handoff: number } | undefined> {
    return db
      .selectFrom('memberships')
      .select(['notify_new_lead', 'notify_handoff'])
      .where('workspace_id', '=', workspaceId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
  },

  /** Sets a member's email preferences in a workspace. */
  async setPreferences(db: Db, workspaceId: string, userId: string, preferences: { notify_new_lead: number; notify_handoff: number }): Promise<void> {
    await db.updateTable('memberships').set(preferences).where('workspace_id', '=', workspaceId).where('user_id', '=', userId).execute();
  },

  /** Claims the next due email of any workspace (a lapsed lease first), as webhook deliveries are claimed. */
  async claimNext(db: Db, now: string, lockedUntil: string): Promise<MailJobRow | undefined> {
    const lapsed = claimLocked(db, db.selectFrom('mail_jobs').select('id').where('state', '=', 'running').where('locked_until', '<', now).limit(1));
    const due = claimLocked(db, db.selectFrom('mail_jobs').select('id').where('state', '=', 'pending').where('run_after', '<=', now).orderBy('run_after').limit(1));
    return db
      .updateTable('mail_jobs')
      .set((eb) => ({ state: 'running', locked_until: lockedUntil, attempts: eb('attempts', '+', 1), updated_at: now }))
      .where('id', '=', (eb) => eb.fn.coalesce(lapsed, due))
      .where((eb) => eb.or([eb('state', '=', 'pending'), eb.and([eb('state', '=', 'running'), eb('locked_until', '<', now)])]))
      .returning(JOB_COLUMNS)
      .executeTakeFirst();
  },

  /**
   * Deletes up to `limit` sent or failed emails last changed before `cutoff`, of any workspace (a system
   * sweep: their bodies hold one-time links); returns how many. Pending and running ones are never touched.
   * `run_after < cutoff` is implied (a finished job keeps the run_after it was claimed at, before it
   * finished) and lets the claim index (state, run_after) find the old rows without reading the recent
   * ones. On PostgreSQL the rows are locked SKIP LOCKED, so instances sweeping at once split the rows
   * instead of waiting on each other.
   */
  async deleteFinishedBefore(db: Db, cutoff: string, limit: number): Promise<number> {
    const old = claimLocked(
      db,
      db.selectFrom('mail_jobs').select('id').where('state', 'in', ['sent', 'failed']).where('run_after', '<', cutoff).where('updated_at', '<', cutoff).limit(limit),
    );
    const result = await db.deleteFrom('mail_jobs').where('id', 'in', old).executeTakeFirst();
    return Number(result.numDeletedRows);
  },

  /** Moves an email on: sent, failed, or pending again (a retry, handed back on shutdown). */
  async update(db: Db, workspaceId: string, id: string, changes: Updateable<MailJobsTable>): Promise<void> {
    await db.updateTable('mail_jobs').set(changes).where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
  },
};
