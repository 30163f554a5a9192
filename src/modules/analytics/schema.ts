import { Type, type Static } from 'typebox';
import { IdOf, Nullable, Timestamp } from '../../http/schemas.js';

const Count = Type.Integer({ minimum: 0 });

/** A day: an RFC 3339 `date`, or a `date-time` whose UTC day is meant. */
function DateOrDateTime(description: string) {
  return Type.Union([Type.String({ format: 'date', maxLength: 40 }), Type.String({ format: 'date-time', maxLength: 40 })], { description });
}

/** Query of GET /analytics. */
export const AnalyticsQuery = Type.Object(
  {
    from: Type.Optional(DateOrDateTime('First day of the period (a date, or a date-time whose UTC day is meant). Default: 29 days before `to`.')),
    to: Type.Optional(DateOrDateTime('Last day of the period, included (a date, or a date-time whose UTC day is meant). Default: today (UTC).')),
    chatbot_id: Type.Optional(Type.String({ maxLength: 64, description: 'Only this AI Agent.' })),
  },
  { additionalProperties: false },
);
export type AnalyticsFilters = Static<typeof AnalyticsQuery>;

/** How the agent's answers went in a period or on a day (counted as each answer, rating and handoff is written). */
const AnswerFigures = {
  answered: Type.Integer({ minimum: 0, description: 'Agent answers given from knowledge.' }),
  unanswered: Type.Integer({ minimum: 0, description: 'Questions the agent could not answer from knowledge: declined (`outcome: unanswered`) or answered with pages that may help (`best_matches`); see GET /analytics/unanswered.' }),
  answer_rate: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], { description: 'answered / (answered + unanswered); null when both are 0.' }),
  feedback_up: Type.Integer({ minimum: 0, description: 'Answers rated up by visitors (the latest rating of each answer counts; by the day of the answer).' }),
  feedback_down: Type.Integer({ minimum: 0, description: 'Answers rated down by visitors.' }),
  handoffs: Type.Integer({ minimum: 0, description: 'Conversations whose visitor asked for a person (counted once, on the day first asked).' }),
};

/** The workspace analytics summary for a period of whole UTC days (at most 366). `to` in the response is exclusive. */
export const AnalyticsSummary = Type.Object(
  {
    object: Type.Literal('analytics_summary'),
    from: Timestamp,
    to: Timestamp,
    chatbot_id: Nullable(IdOf('chatbot')),
    conversations: Type.Object({ total: Count, open: Count, closed: Count }),
    messages: Type.Object({ total: Count, user: Count, assistant: Count, operator: Count }),
    leads: Type.Object({
      total: Count,
      conversion_rate: Type.Number({ minimum: 0, maximum: 1, description: 'Share of the period\'s conversations that produced a lead.' }),
    }),
    chatbots: Type.Object(
      { total: Count, draft: Count, active: Count, paused: Count, archived: Count },
      { description: 'AI Agents by current status (not limited to the period).' },
    ),
    average_messages_per_conversation: Type.Number({ minimum: 0 }),
    answers: Type.Object(AnswerFigures, { description: 'Answer rate, visitor feedback and handoffs over the period.' }),
    daily: Type.Array(
      Type.Object({
        date: Type.String({ format: 'date' }),
        conversations: Count,
        messages: Count,
        leads: Count,
        ...AnswerFigures,
      }),
      { description: 'One entry per UTC day of the period, oldest first.' },
    ),
  },
  { title: 'AnalyticsSummary' },
);
export type AnalyticsSummaryView = Static<typeof AnalyticsSummary>;

/** Query of GET /analytics/unanswered. */
export const UnansweredQuery = Type.Object(
  {
    from: AnalyticsQuery.properties.from,
    to: AnalyticsQuery.properties.to,
    chatbot_id: Type.Optional(Type.String({ maxLength: 64, description: 'Only this AI Agent (404 when the workspace has no such agent).' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50, description: 'Most groups returned (the newest first).' })),
  },
  { additionalProperties: false },
);
export type UnansweredFilters = Static<typeof UnansweredQuery>;

/** One group of unanswered questions: the same question, however it was worded. */
export const UnansweredQuestion = Type.Object(
  {
    question: Type.String({ description: 'The newest wording of the question in the period.' }),
    normalized: Type.String({ description: 'The text the group is keyed by: lowercased, accents folded, punctuation stripped, whitespace collapsed.' }),
    count: Type.Integer({ minimum: 1, description: 'How many times it was asked in the period.' }),
    last_asked_at: Timestamp,
    chatbot_id: IdOf('chatbot'),
  },
  { title: 'UnansweredQuestion' },
);

/** The unanswered questions of a period, grouped, newest group first. */
export const UnansweredQuestionList = Type.Object(
  { object: Type.Literal('list'), data: Type.Array(UnansweredQuestion) },
  { title: 'UnansweredQuestionList' },
);
export type UnansweredQuestionListView = Static<typeof UnansweredQuestionList>;
