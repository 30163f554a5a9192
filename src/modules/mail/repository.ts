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

  /** Moves an email on: sent, failed, or pending again (a retry, handed back on shutdown). */
  async update(db: Db, workspaceId: string, id: string, changes: Updateable<MailJobsTable>): Promise<void> {
    await db.updateTable('mail_jobs').set(changes).where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
  },
};
