import { sql, type Kysely } from 'kysely';

const COUNTERS = [
  'conversations_open',
  'conversations_closed',
  'conversations_with_lead',
  'conversation_messages',
  'messages_user',
  'messages_assistant',
  'messages_operator',
  'leads',
] as const;

/**
 * Daily counters per workspace, AI Agent and UTC day, kept up to date by every write (in its transaction):
 * analytics read at most one row per agent and day instead of scanning every message of the period.
 */
export async function up(db: Kysely<any>): Promise<void> {
  let table = db.schema
    .createTable('daily_stats')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('chatbot_id', 'text', (c) => c.notNull());
  for (const counter of COUNTERS) table = table.addColumn(counter, 'integer', (c) => c.notNull().defaultTo(0));
  await table.addPrimaryKeyConstraint('daily_stats_pk', ['workspace_id', 'day', 'chatbot_id']).execute();

  // Backfill from the data that exists already.
  await sql`insert into daily_stats (workspace_id, day, chatbot_id, conversations_open, conversations_closed, conversations_with_lead, conversation_messages)
    select workspace_id, substr(created_at, 1, 10), chatbot_id,
      sum(case when status = 'open' then 1 else 0 end), sum(case when status = 'closed' then 1 else 0 end),
      sum(case when lead_id is null then 0 else 1 end), sum(message_count)
    from conversations group by workspace_id, substr(created_at, 1, 10), chatbot_id`.execute(db);
  for (const [column, day, bot, source, extra] of [
    ['messages_user', 'substr(created_at, 1, 10)', 'chatbot_id', 'messages', "role = 'user'"],
    ['messages_assistant', 'substr(created_at, 1, 10)', 'chatbot_id', 'messages', "role = 'assistant'"],
    ['messages_operator', 'substr(created_at, 1, 10)', 'chatbot_id', 'messages', "role = 'operator'"],
    ['leads', 'substr(created_at, 1, 10)', "coalesce(chatbot_id, '')", 'leads', '1 = 1'],
  ] as const) {
    await sql`insert into daily_stats (workspace_id, day, chatbot_id, ${sql.ref(column)})
      select workspace_id, ${sql.raw(day)}, ${sql.raw(bot)}, count(*) from ${sql.table(source)} where ${sql.raw(extra)}
      group by workspace_id, ${sql.raw(day)}, ${sql.raw(bot)}
      on conflict (workspace_id, day, chatbot_id) do update set ${sql.ref(column)} = daily_stats.${sql.ref(column)} + excluded.${sql.ref(column)}`.execute(db);
  }
}

/** Drops the counters. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('daily_stats').ifExists().execute();
}
