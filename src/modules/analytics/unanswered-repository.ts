import { sql, type Selectable } from 'kysely';
import type { Db, UnansweredQuestionsTable } from '../../db/schema.js';

/** An unanswered question as stored. */
export type UnansweredRow = Selectable<UnansweredQuestionsTable>;

/** One group of an agent's unanswered questions (same normalized text). */
export interface UnansweredGroup {
  chatbot_id: string;
  normalized: string;
  question: string;
  count: number;
  last_asked_at: string;
}

/** SQL for unanswered questions; every query carries the workspace id. */
export const unansweredRepository = {
  /** Stores one question (with the answer that declined it). */
  async insert(db: Db, row: UnansweredRow): Promise<void> {
    await db.insertInto('unanswered_questions').values(row).execute();
  },

  /**
   * The questions asked in [from, to) grouped by agent and normalized text, newest group first, at most
   * `limit`; each group shows its newest wording.
   */
  async groups(db: Db, workspaceId: string, filter: { chatbotId: string | null; from: string; to: string }, limit: number): Promise<UnansweredGroup[]> {
    let query = db
      .selectFrom('unanswered_questions as q')
      .select((eb) => [
        'q.chatbot_id',
        'q.normalized',
        eb.fn.countAll<number>().as('count'),
        eb.fn.max('q.created_at').as('last_asked_at'),
        // The newest wording of the group in the period (a correlated lookup on the group index).
        eb
          .selectFrom('unanswered_questions as n')
          .select('n.question')
          .where('n.workspace_id', '=', workspaceId)
          .whereRef('n.chatbot_id', '=', 'q.chatbot_id')
          .whereRef('n.normalized', '=', 'q.normalized')
          .where('n.created_at', '>=', filter.from)
          .where('n.created_at', '<', filter.to)
          .orderBy('n.created_at', 'desc')
          .orderBy('n.id', 'desc')
          .limit(1)
          .as('question'),
      ])
      .where('q.workspace_id', '=', workspaceId)
      .where('q.created_at', '>=', filter.from)
      .where('q.created_at', '<', filter.to);
    if (filter.chatbotId) query = query.where('q.chatbot_id', '=', filter.chatbotId);
    const rows = await query
      .groupBy(['q.chatbot_id', 'q.normalized'])
      .orderBy(sql`max(q.created_at)`, 'desc')
      .orderBy('q.normalized')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      chatbot_id: row.chatbot_id,
      normalized: row.normalized,
      question: row.question ?? row.normalized,
      count: Number(row.count),
      last_asked_at: String(row.last_asked_at),
    }));
  },
};
