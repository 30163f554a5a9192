import type { ExpressionBuilder, Selectable } from 'kysely';
import { claimLocked, lockedForUpdate } from '../../db/dialect.js';
import type { Database, Db, ReplyJobsTable } from '../../db/schema.js';
import { CHATBOT_COLUMNS, type ChatbotRow } from '../chatbots/repository.js';
import type { ConversationRow } from '../conversations/repository.js';
import { MESSAGE_COLUMNS, type MessageRow } from '../messages/repository.js';

/** A job of the one queue (a reply or an ingestion) as stored. */
export type JobRow = Selectable<ReplyJobsTable>;
/** What kind of work a job is. */
export type JobKind = JobRow['kind'];
/** A reply job: it always has its conversation and message. */
export type ReplyJobRow = JobRow & { kind: 'reply'; conversation_id: string; message_id: string };

const JOB_COLUMNS = [
  'id', 'workspace_id', 'kind', 'source_id', 'conversation_id', 'message_id', 'state', 'attempts', 'run_after', 'locked_until', 'last_error', 'reply_message_id', 'created_at', 'updated_at',
] as const;

/** SQL for the job queue (replies and ingestion): record, claim with a lease, renew, finish. */
export const replyJobRepository = {
  /** Records a job (inside the transaction of the message or source it serves). */
  async insert(db: Db, row: JobRow): Promise<void> {
    await db.insertInto('reply_jobs').values(row).execute();
  },

  /** The job answering a message, if one was recorded. */
  async findByMessage(db: Db, workspaceId: string, messageId: string): Promise<ReplyJobRow | undefined> {
    const row = await db.selectFrom('reply_jobs').select(JOB_COLUMNS).where('workspace_id', '=', workspaceId).where('message_id', '=', messageId).executeTakeFirst();
    return row as ReplyJobRow | undefined;
  },

  /** One job, locked for the finishing transaction on PostgreSQL. */
  async findForUpdate(db: Db, workspaceId: string, id: string): Promise<JobRow | undefined> {
    return lockedForUpdate(db, db.selectFrom('reply_jobs').select(JOB_COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id)).executeTakeFirst();
  },

  /**
   * Claims the next due job of a kind, of any workspace: pending and due, or running with a lapsed lease (its
   * runner died), and not yet claimed `maxAttempts` times. One conditional UPDATE: on PostgreSQL the inner
   * SELECT skips rows other instances are claiming. Ingest jobs are fair between workspaces: a workspace
   * with a sync running (under a live lease, on any instance) gets no second one, so one workspace's long
   * syncs never hold every slot while another's wait.
   */
  async claimNext(db: Db, kind: JobKind, now: string, lockedUntil: string, maxAttempts: number): Promise<JobRow | undefined> {
    let candidates = db
      .selectFrom('reply_jobs')
      .select('id')
      .where('kind', '=', kind)
      .where('attempts', '<', maxAttempts)
      .where((eb) => claimable(eb, now));
    if (kind === 'ingest') {
      candidates = candidates.where(({ not, exists, selectFrom }) => not(exists(
        selectFrom('reply_jobs as busy')
          .select('busy.id')
          .whereRef('busy.workspace_id', '=', 'reply_jobs.workspace_id')
          .where('busy.kind', '=', 'ingest')
          .where('busy.state', '=', 'running')
          .where('busy.locked_until', '>=', now),
      )));
    }
    const next = claimLocked(db, candidates.orderBy('run_after').limit(1));
    return db
      .updateTable('reply_jobs')
      .set((eb) => ({ state: 'running', locked_until: lockedUntil, attempts: eb('attempts', '+', 1), updated_at: now }))
      .where('id', '=', next)
      .where('attempts', '<', maxAttempts)
      .where((eb) => claimable(eb, now))
      .returning(JOB_COLUMNS)
      .executeTakeFirst();
  },

  /**
   * Fails the jobs of a kind that were claimed `maxAttempts` times and whose last runner died holding them
   * (a lapsed lease): a job that takes its process down every time (a poison pill) is never claimed again.
   * Returns them, so their owners can say why (a source's sync).
   */
  async failExhausted(db: Db, kind: JobKind, now: string, maxAttempts: number, reason: string): Promise<JobRow[]> {
    return db
      .updateTable('reply_jobs')
      .set({ state: 'failed', locked_until: null, last_error: reason, updated_at: now })
      .where('kind', '=', kind)
      .where('attempts', '>=', maxAttempts)
      .where((eb) => claimable(eb, now))
      .returning(JOB_COLUMNS)
      .execute();
  },

  /** Claims one given job when nobody holds it (the widget request answering its own message). */
  async claim(db: Db, workspaceId: string, id: string, now: string, lockedUntil: string, maxAttempts: number): Promise<JobRow | undefined> {
    return db
      .updateTable('reply_jobs')
      .set((eb) => ({ state: 'running', locked_until: lockedUntil, attempts: eb('attempts', '+', 1), updated_at: now }))
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where('attempts', '<', maxAttempts)
      .where((eb) => eb.or([eb('state', '=', 'pending'), eb.and([eb('state', '=', 'running'), eb('locked_until', '<', now)])]))
      .returning(JOB_COLUMNS)
      .executeTakeFirst();
  },

  /** Extends the lease of a running job. */
  async renew(db: Db, workspaceId: string, id: string, lockedUntil: string): Promise<void> {
    await db.updateTable('reply_jobs').set({ locked_until: lockedUntil }).where('workspace_id', '=', workspaceId).where('id', '=', id).where('state', '=', 'running').execute();
  },

  /** Moves a job on: done (with its answer), back to pending (retry later) or failed. */
  async update(db: Db, workspaceId: string, id: string, changes: Partial<Pick<JobRow, 'state' | 'run_after' | 'locked_until' | 'last_error' | 'reply_message_id' | 'updated_at'>>): Promise<void> {
    await db.updateTable('reply_jobs').set(changes).where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
  },

  /** Gives a claimed job back unstarted or interrupted by a shutdown: pending again, and the claim not counted as an attempt. */
  async handBack(db: Db, workspaceId: string, id: string, now: string): Promise<void> {
    await db
      .updateTable('reply_jobs')
      .set((eb) => ({ state: 'pending', locked_until: null, attempts: eb('attempts', '-', 1), updated_at: now }))
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where('attempts', '>', 0)
      .execute();
  },
};

/** Due (pending, run_after passed) or abandoned (running, lease lapsed). */
function claimable(eb: ExpressionBuilder<Database, 'reply_jobs'>, now: string) {
  return eb.or([
    eb.and([eb('state', '=', 'pending'), eb('run_after', '<=', now)]),
    eb.and([eb('state', '=', 'running'), eb('locked_until', '<', now)]),
  ]);
}

/** SQL for the ingest jobs of sources. */
export const ingestJobRepository = {
  /** The ingest job of a source that is waiting or running, if any (a sync request then queues no other). */
  async findOpen(db: Db, workspaceId: string, sourceId: string): Promise<JobRow | undefined> {
    return db
      .selectFrom('reply_jobs')
      .select(JOB_COLUMNS)
      .where('source_id', '=', sourceId)
      .where('workspace_id', '=', workspaceId)
      .where('kind', '=', 'ingest')
      .where('state', 'in', ['pending', 'running'])
      .executeTakeFirst();
  },

  /** Removes a source's jobs (the source is being deleted; a runner holding one finds it gone). */
  async deleteBySource(db: Db, workspaceId: string, sourceId: string): Promise<void> {
    await db.deleteFrom('reply_jobs').where('source_id', '=', sourceId).where('workspace_id', '=', workspaceId).where('kind', '=', 'ingest').execute();
  },
};

/** SQL the runtime reads with, beside the resources' own repositories. */
export const runtimeRepository = {
  /**
   * An agent by id alone: the public entry point of the widget. Ids are unguessable and globally unique;
   * the workspace comes from the row, and every later query is scoped to it.
   */
  async findChatbotById(db: Db, id: string): Promise<ChatbotRow | undefined> {
    return db
      .selectFrom('chatbots')
      .select(CHATBOT_COLUMNS)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /** A conversation's workspace and agent by its id alone (CORS preflights carry no token). */
  async findConversationOwner(db: Db, id: string): Promise<Pick<ConversationRow, 'workspace_id' | 'chatbot_id'> | undefined> {
    return db.selectFrom('conversations').select(['workspace_id', 'chatbot_id']).where('id', '=', id).executeTakeFirst();
  },

  /** The recent transcript up to and including a message, oldest first. */
  async transcript(db: Db, workspaceId: string, conversationId: string, upTo: MessageRow, limit: number): Promise<MessageRow[]> {
    const rows = await db
      .selectFrom('messages')
      .select(MESSAGE_COLUMNS)
      .where('workspace_id', '=', workspaceId)
      .where('conversation_id', '=', conversationId)
      .where((eb) => eb.or([eb('created_at', '<', upTo.created_at), eb.and([eb('created_at', '=', upTo.created_at), eb('id', '<=', upTo.id)])]))
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.reverse();
  },

  /** One message by id. */
  async findMessage(db: Db, workspaceId: string, id: string): Promise<MessageRow | undefined> {
    return db.selectFrom('messages').select(MESSAGE_COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  },

  /** Open conversations of any workspace idle since before `cutoff` (a system sweep), at most `limit`. */
  async idleConversations(db: Db, cutoff: string, limit: number): Promise<Pick<ConversationRow, 'id' | 'workspace_id'>[]> {
    return db
      .selectFrom('conversations')
      .select(['id', 'workspace_id'])
      .where('status', '=', 'open')
      .where((eb) => eb.or([eb('last_message_at', '<', cutoff), eb.and([eb('last_message_at', 'is', null), eb('created_at', '<', cutoff)])]))
      .limit(limit)
      .execute();
  },
};

/** SQL for visitor tokens: stored and looked up by hash only. */
export const visitorTokenRepository = {
  async insert(db: Db, row: { token_hash: string; workspace_id: string; conversation_id: string; created_at: string }): Promise<void> {
    await db.insertInto('visitor_tokens').values(row).execute();
  },

  /** The conversation a token hash opens. */
  async find(db: Db, tokenHash: string): Promise<{ workspace_id: string; conversation_id: string } | undefined> {
    return db.selectFrom('visitor_tokens').select(['workspace_id', 'conversation_id']).where('token_hash', '=', tokenHash).executeTakeFirst();
  },
};
