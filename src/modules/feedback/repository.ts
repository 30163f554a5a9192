import type { Selectable } from 'kysely';
import type { Db, MessageFeedbackTable } from '../../db/schema.js';

/** A message's feedback as stored. */
export type FeedbackRow = Selectable<MessageFeedbackTable>;

const COLUMNS = ['message_id', 'workspace_id', 'chatbot_id', 'conversation_id', 'rating', 'comment', 'created_at', 'updated_at'] as const;

/** SQL for visitor feedback on answers; every query carries the workspace id. */
export const feedbackRepository = {
  /** The feedback on one message, if any. */
  async find(db: Db, workspaceId: string, messageId: string): Promise<FeedbackRow | undefined> {
    return db.selectFrom('message_feedback').select(COLUMNS).where('workspace_id', '=', workspaceId).where('message_id', '=', messageId).executeTakeFirst();
  },

  /** Stores a first rating. */
  async insert(db: Db, row: FeedbackRow): Promise<void> {
    await db.insertInto('message_feedback').values(row).execute();
  },

  /** Replaces a rating (the latest one counts). */
  async update(db: Db, workspaceId: string, messageId: string, changes: Pick<FeedbackRow, 'rating' | 'comment' | 'updated_at'>): Promise<void> {
    await db.updateTable('message_feedback').set(changes).where('workspace_id', '=', workspaceId).where('message_id', '=', messageId).execute();
  },
};
