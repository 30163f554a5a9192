import { sql } from 'kysely';
import { precompiledWrite } from '../../db/precompiled.js';
import type { DailyStatsTable, Db } from '../../db/schema.js';

/** A counter of the daily statistics. */
export type Counter = Exclude<keyof DailyStatsTable, 'workspace_id' | 'day' | 'chatbot_id'>;

type Bump = (db: Db, workspaceId: string, day: string, chatbotId: string, ...deltas: number[]) => Promise<unknown>;
const bumps = new Map<string, Bump>();

/** The upsert that adds to these counters, built and compiled once per set of counters (every write bumps some). */
function bumpOf(counters: Counter[]): Bump {
  const key = counters.join(',');
  let bump = bumps.get(key);
  if (!bump) {
    bump = precompiledWrite((db, workspaceId: string, day: string, chatbotId: string, ...deltas: number[]) =>
      db
        .insertInto('daily_stats')
        .values({ workspace_id: workspaceId, day, chatbot_id: chatbotId, ...Object.fromEntries(counters.map((column, i) => [column, deltas[i]])) })
        .onConflict((oc) =>
          oc
            .columns(['workspace_id', 'day', 'chatbot_id'])
            .doUpdateSet(Object.fromEntries(counters.map((column, i) => [column, sql`daily_stats.${sql.ref(column)} + ${deltas[i]}`]))),
        ),
    );
    bumps.set(key, bump);
  }
  return bump;
}

/** SQL for the daily counters. */
export const statsRepository = {
  /** Adds to counters of one (workspace, day, agent) row, creating it when missing (one upsert). */
  async bump(db: Db, workspaceId: string, day: string, chatbotId: string | null, deltas: Partial<Record<Counter, number>>): Promise<void> {
    const entries = Object.entries(deltas).filter(([, delta]) => delta !== 0) as [Counter, number][];
    if (entries.length === 0) return;
    await bumpOf(entries.map(([column]) => column))(db, workspaceId, day, chatbotId ?? '', ...entries.map(([, delta]) => delta));
  },

  /** Sums of every counter per day over a range of days (inclusive), optionally for one agent. */
  async byDay(db: Db, workspaceId: string, fromDay: string, toDay: string, chatbotId: string | null) {
    let query = db
      .selectFrom('daily_stats')
      .select((eb) => [
        'day',
        eb.fn.sum<number>('conversations_open').as('conversations_open'),
        eb.fn.sum<number>('conversations_closed').as('conversations_closed'),
        eb.fn.sum<number>('conversations_with_lead').as('conversations_with_lead'),
        eb.fn.sum<number>('conversation_messages').as('conversation_messages'),
        eb.fn.sum<number>('messages_user').as('messages_user'),
        eb.fn.sum<number>('messages_assistant').as('messages_assistant'),
        eb.fn.sum<number>('messages_operator').as('messages_operator'),
        eb.fn.sum<number>('leads').as('leads'),
        eb.fn.sum<number>('answered').as('answered'),
        eb.fn.sum<number>('unanswered').as('unanswered'),
        eb.fn.sum<number>('feedback_up').as('feedback_up'),
        eb.fn.sum<number>('feedback_down').as('feedback_down'),
        eb.fn.sum<number>('handoffs').as('handoffs'),
      ])
      .where('workspace_id', '=', workspaceId)
      .where('day', '>=', fromDay)
      .where('day', '<=', toDay);
    if (chatbotId) query = query.where('chatbot_id', '=', chatbotId);
    const rows = await query.groupBy('day').execute();
    return rows.map((row) => ({
      day: row.day,
      conversationsOpen: Number(row.conversations_open),
      conversationsClosed: Number(row.conversations_closed),
      conversationsWithLead: Number(row.conversations_with_lead),
      conversationMessages: Number(row.conversation_messages),
      messagesUser: Number(row.messages_user),
      messagesAssistant: Number(row.messages_assistant),
      messagesOperator: Number(row.messages_operator),
      leads: Number(row.leads),
      answered: Number(row.answered),
      unanswered: Number(row.unanswered),
      feedbackUp: Number(row.feedback_up),
      feedbackDown: Number(row.feedback_down),
      handoffs: Number(row.handoffs),
    }));
  },
};

/** The UTC day of an ISO timestamp. */
export function dayOf(timestamp: string): string {
  return timestamp.slice(0, 10);
}
