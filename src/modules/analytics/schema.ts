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
    daily: Type.Array(
      Type.Object({
        date: Type.String({ format: 'date' }),
        conversations: Count,
        messages: Count,
        leads: Count,
      }),
      { description: 'One entry per UTC day of the period, oldest first.' },
    ),
  },
  { title: 'AnalyticsSummary' },
);
export type AnalyticsSummaryView = Static<typeof AnalyticsSummary>;
