import type { Insertable, Selectable, Updateable } from 'kysely';
import { claimLocked } from '../../db/dialect.js';
import type { Db, MailJobsTable, MailKind } from '../../db/schema.js';

/** A queued email as stored. */
export type MailJobRow = Selectable<MailJobsTable>;

const JOB_COLUMNS = ['id', 'workspace_id', 'dedupe_key', 'kind', 'recipient', 'subject', 'text_body', 'html_body', 'state', 'attempts', 'run_after', 'locked_until', 'last_error', 'digest_id', 'created_at', 'updated_at'] as const;

/** A member who wants to be emailed about something, with their address. */
export interface Recipient {
  user_id: string;
  email: string;
}

/** The kinds of email the hourly budget counts: the notifications visitors cause. */
const NOTIFICATION_KINDS: MailKind[] = ['new_lead', 'handoff'];
/** The states of a notification that was (or is being) sent by itself: what spends the budget. */
const SENT_ALONE: MailJobsTable['state'][] = ['pending', 'running', 'sent', 'failed'];

/** SQL for queued emails (a claimable queue of the job runner) and the members' email preferences. */
export const mailRepository = {
  /** Queues emails; one already queued with the same dedupe key is left as it is. */
  async insert(db: Db, rows: Insertable<MailJobsTable>[]): Promise<void> {
    if (rows.length === 0) return;
    await db.insertInto('mail_jobs').values(rows).onConflict((oc) => oc.column('dedupe_key').doNothing()).execute();
  },

  /** Of these dedupe keys, those already queued (or held): their fact was already told. */
  async storedKeys(db: Db, keys: string[]): Promise<Set<string>> {
    if (keys.length === 0) return new Set();
    const rows = await db.selectFrom('mail_jobs').select('dedupe_key').where('dedupe_key', 'in', keys).execute();
    return new Set(rows.map((row) => row.dedupe_key));
  },

  /**
   * The notifications of a workspace sent by themselves (not held) created after `since`, newest first:
   * how many (at most `limit`), and the oldest of those `limit` newest. Read through `mail_jobs_budget`.
   */
  async notificationsSince(db: Db, workspaceId: string, since: string, limit: number): Promise<{ count: number; oldest: string | null }> {
    const window = db
      .selectFrom('mail_jobs')
      .select('created_at')
      .where('workspace_id', '=', workspaceId)
      .where('kind', 'in', NOTIFICATION_KINDS)
      .where('state', 'in', SENT_ALONE)
      .where('created_at', '>', since)
      .orderBy('created_at', 'desc')
      .limit(limit);
    const row = await db
      .selectFrom(window.as('recent'))
      .select((eb) => [eb.fn.countAll<number | string | bigint>().as('count'), eb.fn.min('recent.created_at').as('oldest')])
      .executeTakeFirstOrThrow();
    return { count: Number(row.count), oldest: row.oldest };
  },

  /**
   * The recipient's digest not yet claimed for sending, locked by touching it (a runner claiming it at the
   * same moment either goes first, and this finds none, or waits for this transaction and sends what it adds).
   */
  async lockPendingDigest(db: Db, workspaceId: string, recipient: string, now: string): Promise<{ id: string; created_at: string } | undefined> {
    return db
      .updateTable('mail_jobs')
      .set({ updated_at: now })
      .where('workspace_id', '=', workspaceId)
      .where('kind', '=', 'digest')
      .where('state', '=', 'pending')
      .where('recipient', '=', recipient)
      .returning(['id', 'created_at'])
      .executeTakeFirst();
  },

  /** When the recipient's latest digest due after `since` was due, if there is one. */
  async latestDigestDue(db: Db, workspaceId: string, recipient: string, since: string): Promise<string | null> {
    const row = await db
      .selectFrom('mail_jobs')
      .select((eb) => eb.fn.max('run_after').as('due'))
      .where('workspace_id', '=', workspaceId)
      .where('kind', '=', 'digest')
      .where('recipient', '=', recipient)
      .where('run_after', '>', since)
      .executeTakeFirst();
    return row?.due ?? null;
  },

  /** How many held notifications of each kind a digest stands for. */
  async heldCounts(db: Db, workspaceId: string, digestId: string): Promise<Partial<Record<MailKind, number>>> {
    const rows = await db
      .selectFrom('mail_jobs')
      .select((eb) => ['kind', eb.fn.countAll<number | string | bigint>().as('count')])
      .where('digest_id', '=', digestId)
      .where('workspace_id', '=', workspaceId)
      .groupBy('kind')
      .execute();
    return Object.fromEntries(rows.map((row) => [row.kind, Number(row.count)]));
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

  /** A workspace's name, if it exists. */
  async workspaceName(db: Db, workspaceId: string): Promise<string | undefined> {
    const row = await db.selectFrom('workspaces').select('name').where('id', '=', workspaceId).executeTakeFirst();
    return row?.name;
  },

  /** An agent's name in a workspace, if it exists. */
  async agentName(db: Db, workspaceId: string, chatbotId: string): Promise<string | undefined> {
    const row = await db.selectFrom('chatbots').select('name').where('workspace_id', '=', workspaceId).where('id', '=', chatbotId).executeTakeFirst();
    return row?.name;
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
   * Deletes up to `limit` sent, failed or held emails last changed before `cutoff`, of any workspace (a system
   * sweep: their bodies hold one-time links); returns how many. Pending and running ones are never touched.
   * `run_after < cutoff` is implied (a finished job keeps the run_after it was claimed at, before it
   * finished) and lets the claim index (state, run_after) find the old rows without reading the recent
   * ones. On PostgreSQL the rows are locked SKIP LOCKED, so instances sweeping at once split the rows
   * instead of waiting on each other.
   */
  async deleteFinishedBefore(db: Db, cutoff: string, limit: number): Promise<number> {
    const old = claimLocked(
      db,
      db.selectFrom('mail_jobs').select('id').where('state', 'in', ['sent', 'failed', 'held']).where('run_after', '<', cutoff).where('updated_at', '<', cutoff).limit(limit),
    );
    const result = await db.deleteFrom('mail_jobs').where('id', 'in', old).executeTakeFirst();
    return Number(result.numDeletedRows);
  },

  /** Moves an email on: sent, failed, or pending again (a retry, handed back on shutdown). */
  async update(db: Db, workspaceId: string, id: string, changes: Updateable<MailJobsTable>): Promise<void> {
    await db.updateTable('mail_jobs').set(changes).where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
  },
};
