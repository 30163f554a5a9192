import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../http/errors.js';
import type { OperationContext } from '../../lib/actor.js';
import type { Clock } from '../../lib/clock.js';
import { isId } from '../../lib/ids.js';
import { parseInstant } from '../../lib/time.js';
import { statsRepository } from '../stats/repository.js';
import { analyticsRepository } from './repository.js';
import type { AnalyticsFilters, AnalyticsSummaryView, UnansweredFilters, UnansweredQuestionListView } from './schema.js';
import { unansweredRepository } from './unanswered-repository.js';
import { chatbotRepository } from '../chatbots/repository.js';

const DAY_MS = 86_400_000;
const MAX_DAYS = 366;

function parseDay(value: string, parameter: 'from' | 'to'): number {
  const parsed = parseInstant(value);
  if (!parsed) {
    throw AppError.validation(`"${parameter}" is not a valid date or date-time.`, [
      { parameter, message: 'must be an ISO 8601 date or date-time (years 1970 to 9999)' },
    ]);
  }
  return Math.floor(parsed.ms / DAY_MS) * DAY_MS;
}

/**
 * The period as whole UTC days: from the start of `from`'s day to the end of `to`'s day (default: the
 * 30 days ending today). Counting whole days is what lets analytics read daily counters.
 */
function period(query: Pick<AnalyticsFilters, 'from' | 'to'>, now: Date): { firstDay: number; lastDay: number } {
  const lastDay = query.to ? parseDay(query.to, 'to') : Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  const firstDay = query.from ? parseDay(query.from, 'from') : lastDay - 29 * DAY_MS;
  if (firstDay > lastDay) throw AppError.validation('"from" must not be after "to".', [{ parameter: 'from', message: 'must not be after to' }]);
  if ((lastDay - firstDay) / DAY_MS + 1 > MAX_DAYS) {
    throw AppError.validation(`The period can be at most ${MAX_DAYS} days.`, [{ parameter: 'from', message: `period longer than ${MAX_DAYS} days` }]);
  }
  return { firstDay, lastDay };
}

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const ratio = (part: number, whole: number, digits: number) => (whole === 0 ? 0 : Math.round((part / whole) * 10 ** digits) / 10 ** digits);

type DayFigures = Awaited<ReturnType<typeof statsRepository.byDay>>[number];
type Answers = AnalyticsSummaryView['answers'];
const NO_ANSWERS: Omit<Answers, 'answer_rate'> = { answered: 0, unanswered: 0, feedback_up: 0, feedback_down: 0, handoffs: 0 };

/** The answer figures of some days' counters; the rate is null when nothing was asked. */
function answersOf(days: readonly DayFigures[]): Answers {
  const sum = days.reduce(
    (acc, d) => ({
      answered: acc.answered + d.answered,
      unanswered: acc.unanswered + d.unanswered,
      feedback_up: acc.feedback_up + d.feedbackUp,
      feedback_down: acc.feedback_down + d.feedbackDown,
      handoffs: acc.handoffs + d.handoffs,
    }),
    NO_ANSWERS,
  );
  const asked = sum.answered + sum.unanswered;
  return { ...sum, answer_rate: asked === 0 ? null : ratio(sum.answered, asked, 4) };
}

function chatbotFilter(chatbotId: string | undefined): string | null {
  if (chatbotId === undefined) return null;
  if (!isId('chatbot', chatbotId)) {
    throw AppError.validation('"chatbot_id" is not an AI Agent id.', [{ parameter: 'chatbot_id', message: 'must be an AI Agent id (bot_…)' }]);
  }
  return chatbotId;
}

/** The analytics summary, read from the daily counters that every write maintains. */
export function createAnalyticsService(db: Kysely<Database>, clock: Clock) {
  return {
    /** Totals and a daily series for the period (default: the last 30 days, whole UTC days). */
    async summary(ctx: OperationContext, query: AnalyticsFilters): Promise<AnalyticsSummaryView> {
      const { firstDay, lastDay } = period(query, clock.now());
      const chatbotId = chatbotFilter(query.chatbot_id);
      const [days, chatbots] = await Promise.all([
        statsRepository.byDay(db, ctx.actor.workspaceId, isoDay(firstDay), isoDay(lastDay), chatbotId),
        analyticsRepository.chatbotsByStatus(db, ctx.actor.workspaceId, chatbotId),
      ]);
      const byDay = new Map(days.map((d) => [d.day, d]));
      const total = (pick: (d: (typeof days)[number]) => number) => days.reduce((sum, d) => sum + pick(d), 0);
      const agents = (status: string) => chatbots.filter((c) => c.status === status).reduce((sum, c) => sum + c.count, 0);
      const conversations = total((d) => d.conversationsOpen + d.conversationsClosed);
      const daily: AnalyticsSummaryView['daily'] = [];
      for (let t = firstDay; t <= lastDay; t += DAY_MS) {
        const d = byDay.get(isoDay(t));
        daily.push({
          date: isoDay(t),
          conversations: d ? d.conversationsOpen + d.conversationsClosed : 0,
          messages: d ? d.messagesUser + d.messagesAssistant + d.messagesOperator : 0,
          leads: d ? d.leads : 0,
          ...answersOf(d ? [d] : []),
        });
      }
      return {
        object: 'analytics_summary',
        from: new Date(firstDay).toISOString(),
        to: new Date(lastDay + DAY_MS).toISOString(),
        chatbot_id: chatbotId,
        conversations: { total: conversations, open: total((d) => d.conversationsOpen), closed: total((d) => d.conversationsClosed) },
        messages: {
          total: total((d) => d.messagesUser + d.messagesAssistant + d.messagesOperator),
          user: total((d) => d.messagesUser),
          assistant: total((d) => d.messagesAssistant),
          operator: total((d) => d.messagesOperator),
        },
        leads: { total: total((d) => d.leads), conversion_rate: ratio(total((d) => d.conversationsWithLead), conversations, 4) },
        chatbots: {
          total: chatbots.reduce((sum, c) => sum + c.count, 0),
          draft: agents('draft'),
          active: agents('active'),
          paused: agents('paused'),
          archived: agents('archived'),
        },
        average_messages_per_conversation: ratio(total((d) => d.conversationMessages), conversations, 2),
        answers: answersOf(days),
        daily,
      };
    },

    /**
     * The questions the agent could not answer in the period (whole UTC days, as the summary), grouped by
     * normalized text with their counts, newest group first. 404 for an agent the workspace does not have.
     */
    async unanswered(ctx: OperationContext, query: UnansweredFilters): Promise<UnansweredQuestionListView> {
      const { firstDay, lastDay } = period(query, clock.now());
      const chatbotId = chatbotFilter(query.chatbot_id);
      if (chatbotId !== null && !(await chatbotRepository.find(db, ctx.actor.workspaceId, chatbotId))) throw AppError.notFound('AI Agent', chatbotId);
      const range = { chatbotId, from: new Date(firstDay).toISOString(), to: new Date(lastDay + DAY_MS).toISOString() };
      const data = await unansweredRepository.groups(db, ctx.actor.workspaceId, range, query.limit ?? 50);
      return { object: 'list', data };
    },
  };
}

export type AnalyticsService = ReturnType<typeof createAnalyticsService>;
