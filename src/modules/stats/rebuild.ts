import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

const MESSAGE_COUNTERS = [
  ['messages_user', 'user'],
  ['messages_assistant', 'assistant'],
  ['messages_operator', 'operator'],
] as const;

/**
 * Recomputes every daily counter of a workspace from its conversations, messages, feedback and leads (for data
 * loaded in bulk outside the services, e.g. benchmark data sets, or to repair counters).
 */
export async function rebuildDailyStats(db: Kysely<Database>, workspaceId: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('daily_stats').where('workspace_id', '=', workspaceId).execute();
    await sql`insert into daily_stats (workspace_id, day, chatbot_id, conversations_open, conversations_closed, conversations_with_lead, conversation_messages)
      select workspace_id, substr(created_at, 1, 10), chatbot_id,
        sum(case when status = 'open' then 1 else 0 end), sum(case when status = 'closed' then 1 else 0 end),
        sum(case when lead_id is null then 0 else 1 end), sum(message_count)
      from conversations where workspace_id = ${workspaceId} group by workspace_id, substr(created_at, 1, 10), chatbot_id`.execute(trx);
    const upsert = (column: string) =>
      sql`on conflict (workspace_id, day, chatbot_id) do update set ${sql.ref(column)} = daily_stats.${sql.ref(column)} + excluded.${sql.ref(column)}`;
    for (const [column, role] of MESSAGE_COUNTERS) {
      await sql`insert into daily_stats (workspace_id, day, chatbot_id, ${sql.ref(column)})
        select workspace_id, substr(created_at, 1, 10), chatbot_id, count(*) from messages
        where workspace_id = ${workspaceId} and role = ${role} group by workspace_id, substr(created_at, 1, 10), chatbot_id
        ${upsert(column)}`.execute(trx);
    }
    // The answer figures (issue 31): answers by outcome, current ratings by the day of the answer, first handoffs.
    // A best-matches answer counts as unanswered (it did not answer from knowledge), as messages.append counts it.
    for (const [counter, outcomes] of [['answered', ['answered']], ['unanswered', ['unanswered', 'best_matches']]] as const) {
      await sql`insert into daily_stats (workspace_id, day, chatbot_id, ${sql.ref(counter)})
        select workspace_id, substr(created_at, 1, 10), chatbot_id, count(*) from messages
        where workspace_id = ${workspaceId} and outcome in (${sql.join([...outcomes])}) group by workspace_id, substr(created_at, 1, 10), chatbot_id
        ${upsert(counter)}`.execute(trx);
    }
    for (const [column, rating] of [['feedback_up', 'up'], ['feedback_down', 'down']] as const) {
      await sql`insert into daily_stats (workspace_id, day, chatbot_id, ${sql.ref(column)})
        select m.workspace_id, substr(m.created_at, 1, 10), m.chatbot_id, count(*) from message_feedback f join messages m on m.id = f.message_id
        where f.workspace_id = ${workspaceId} and f.rating = ${rating} group by m.workspace_id, substr(m.created_at, 1, 10), m.chatbot_id
        ${upsert(column)}`.execute(trx);
    }
    await sql`insert into daily_stats (workspace_id, day, chatbot_id, handoffs)
      select workspace_id, substr(handoff_requested_at, 1, 10), chatbot_id, count(*) from conversations
      where workspace_id = ${workspaceId} and handoff_requested_at is not null group by workspace_id, substr(handoff_requested_at, 1, 10), chatbot_id
      ${upsert('handoffs')}`.execute(trx);
    await sql`insert into daily_stats (workspace_id, day, chatbot_id, leads)
      select workspace_id, substr(created_at, 1, 10), coalesce(chatbot_id, ''), count(*) from leads
      where workspace_id = ${workspaceId} group by workspace_id, substr(created_at, 1, 10), coalesce(chatbot_id, '')
      ${upsert('leads')}`.execute(trx);
  });
}
