import { sql } from 'kysely';
import type { Db } from '../../db/schema.js';

/** The period and scope of an analytics query. */
export interface AnalyticsScope {
  workspaceId: string;
  from: string;
  to: string;
  chatbotId: string | null;
}

/** A count per UTC day and category. */
export interface DailyCount {
  day: string;
  category: string;
  count: number;
}

const day = sql<string>`substr(created_at, 1, 10)`;

/** Aggregate SQL for analytics: grouped counts over indexed (workspace_id, created_at) ranges. */
export const analyticsRepository = {
  /** Conversations per day and status, with lead and message totals. */
  async conversationsByDay(db: Db, scope: AnalyticsScope) {
    let query = db
      .selectFrom('conversations')
      .select([
        day.as('day'),
        'status as category',
        (eb) => eb.fn.countAll<number>().as('count'),
        (eb) => eb.fn.sum<number>('message_count').as('messages'),
        (eb) => eb.fn.count<number>('lead_id').as('with_lead'),
      ])
      .where('workspace_id', '=', scope.workspaceId)
      .where('created_at', '>=', scope.from)
      .where('created_at', '<', scope.to);
    if (scope.chatbotId) query = query.where('chatbot_id', '=', scope.chatbotId);
    const rows = await query.groupBy([day, 'status']).execute();
    return rows.map((r) => ({ day: r.day, category: r.category, count: Number(r.count), messages: Number(r.messages ?? 0), withLead: Number(r.with_lead) }));
  },

  /** Messages per day and role. */
  async messagesByDay(db: Db, scope: AnalyticsScope): Promise<DailyCount[]> {
    let query = db
      .selectFrom('messages')
      .select([day.as('day'), 'role as category', (eb) => eb.fn.countAll<number>().as('count')])
      .where('workspace_id', '=', scope.workspaceId)
      .where('created_at', '>=', scope.from)
      .where('created_at', '<', scope.to);
    if (scope.chatbotId) query = query.where('chatbot_id', '=', scope.chatbotId);
    const rows = await query.groupBy([day, 'role']).execute();
    return rows.map((r) => ({ day: r.day, category: r.category, count: Number(r.count) }));
  },

  /** Leads per day. */
  async leadsByDay(db: Db, scope: AnalyticsScope): Promise<DailyCount[]> {
    let query = db
      .selectFrom('leads')
      .select([day.as('day'), (eb) => eb.fn.countAll<number>().as('count')])
      .where('workspace_id', '=', scope.workspaceId)
      .where('created_at', '>=', scope.from)
      .where('created_at', '<', scope.to);
    if (scope.chatbotId) query = query.where('chatbot_id', '=', scope.chatbotId);
    const rows = await query.groupBy(day).execute();
    return rows.map((r) => ({ day: r.day, category: 'lead', count: Number(r.count) }));
  },

  /** AI Agents by current status. */
  async chatbotsByStatus(db: Db, workspaceId: string, chatbotId: string | null): Promise<{ status: string; count: number }[]> {
    let query = db
      .selectFrom('chatbots')
      .select(['status', (eb) => eb.fn.countAll<number>().as('count')])
      .where('workspace_id', '=', workspaceId);
    if (chatbotId) query = query.where('id', '=', chatbotId);
    const rows = await query.groupBy('status').execute();
    return rows.map((r) => ({ status: r.status, count: Number(r.count) }));
  },
};
