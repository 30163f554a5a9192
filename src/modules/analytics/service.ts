import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../http/errors.js';
import type { OperationContext } from '../../lib/actor.js';
import type { Clock } from '../../lib/clock.js';
import { isId } from '../../lib/ids.js';
import { parseInstant } from '../../lib/time.js';
import { analyticsRepository, type AnalyticsScope, type DailyCount } from './repository.js';
import type { AnalyticsFilters, AnalyticsSummaryView } from './schema.js';

const DAY_MS = 86_400_000;
const MAX_DAYS = 366;
function parseBound(value: string, parameter: 'from' | 'to'): number {
  const parsed = parseInstant(value);
  if (!parsed) {
    throw AppError.validation(`"${parameter}" is not a valid date or date-time.`, [{ parameter, message: 'must be an ISO 8601 date or date-time (years 1970 to 9999)' }]);
  }
  // A date given as `to` means the end of that day.
  return parameter === 'to' && parsed.dateOnly ? parsed.ms + DAY_MS : parsed.ms;
}

function period(query: AnalyticsFilters, now: Date): { from: number; to: number } {
  const to = query.to ? parseBound(query.to, 'to') : now.getTime();
  const from = query.from ? parseBound(query.from, 'from') : to - 30 * DAY_MS;
  if (from >= to) throw AppError.validation('"from" must be before "to".', [{ parameter: 'from', message: 'must be before to' }]);
  if (to - from > MAX_DAYS * DAY_MS) {
    throw AppError.validation(`The period can be at most ${MAX_DAYS} days.`, [{ parameter: 'from', message: `period longer than ${MAX_DAYS} days` }]);
  }
  return { from, to };
}

function days(from: number, to: number): string[] {
  const out: string[] = [];
  for (let t = Math.floor(from / DAY_MS) * DAY_MS; t < to; t += DAY_MS) out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

/** The analytics summary, computed from stored conversations, messages, leads and agents. */
export function createAnalyticsService(db: Kysely<Database>, clock: Clock) {
  return {
    /** Totals and a daily series for the period (default: the last 30 days). */
    async summary(ctx: OperationContext, query: AnalyticsFilters): Promise<AnalyticsSummaryView> {
      const { from, to } = period(query, clock.now());
      const chatbotId = query.chatbot_id ?? null;
      if (chatbotId !== null && !isId('chatbot', chatbotId)) {
        throw AppError.validation('"chatbot_id" is not an AI Agent id.', [{ parameter: 'chatbot_id', message: 'must be an AI Agent id (bot_…)' }]);
      }
      const scope: AnalyticsScope = {
        workspaceId: ctx.actor.workspaceId,
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        chatbotId,
      };
      const [conversations, messages, leads, chatbots] = await Promise.all([
        analyticsRepository.conversationsByDay(db, scope),
        analyticsRepository.messagesByDay(db, scope),
        analyticsRepository.leadsByDay(db, scope),
        analyticsRepository.chatbotsByStatus(db, ctx.actor.workspaceId, chatbotId),
      ]);
      const series = new Map(days(from, to).map((date) => [date, { date, conversations: 0, messages: 0, leads: 0 }]));
      const sum = <T extends { count: number }>(rows: T[], keep: (row: T) => boolean = () => true) =>
        rows.filter(keep).reduce((total, row) => total + row.count, 0);
      const add = (rows: DailyCount[], field: 'conversations' | 'messages' | 'leads') => {
        for (const row of rows) {
          const entry = series.get(row.day);
          if (entry) entry[field] += row.count;
        }
      };
      add(conversations, 'conversations');
      add(messages, 'messages');
      add(leads, 'leads');
      const conversationTotal = sum(conversations);
      const withLead = conversations.reduce((total, row) => total + row.withLead, 0);
      const messagesInConversations = conversations.reduce((total, row) => total + row.messages, 0);
      const agents = (status: string) => sum(chatbots, (c) => c.status === status);
      return {
        object: 'analytics_summary',
        from: scope.from,
        to: scope.to,
        chatbot_id: chatbotId,
        conversations: {
          total: conversationTotal,
          open: sum(conversations, (r) => r.category === 'open'),
          closed: sum(conversations, (r) => r.category === 'closed'),
        },
        messages: {
          total: sum(messages),
          user: sum(messages, (r) => r.category === 'user'),
          assistant: sum(messages, (r) => r.category === 'assistant'),
          operator: sum(messages, (r) => r.category === 'operator'),
        },
        leads: {
          total: sum(leads),
          conversion_rate: conversationTotal === 0 ? 0 : Math.round((withLead / conversationTotal) * 10_000) / 10_000,
        },
        chatbots: {
          total: sum(chatbots),
          draft: agents('draft'),
          active: agents('active'),
          paused: agents('paused'),
          archived: agents('archived'),
        },
        average_messages_per_conversation: conversationTotal === 0 ? 0 : Math.round((messagesInConversations / conversationTotal) * 100) / 100,
        daily: [...series.values()],
      };
    },
  };
}

export type AnalyticsService = ReturnType<typeof createAnalyticsService>;
