import { Type, type Static } from 'typebox';
import { IdOf, ListOf, Nullable, PageQuery, Timestamp } from '../../http/schemas.js';

export const CONVERSATION_STATUSES = ['open', 'closed'] as const;
export const CONVERSATION_MODES = ['agent', 'human'] as const;
export const CONVERSATION_CHANNELS = ['widget', 'api', 'dashboard'] as const;


/** A conversation between a visitor and an AI Agent (read-only through the API). */
export const Conversation = Type.Object(
  {
    id: IdOf('conversation'),
    object: Type.Literal('conversation'),
    chatbot_id: IdOf('chatbot'),
    status: Type.Enum(CONVERSATION_STATUSES),
    mode: Type.Union([Type.Literal('agent'), Type.Literal('human')], {
      description: '`agent`: the AI Agent answers; `human`: an operator took over and the agent stays silent.',
    }),
    channel: Type.Enum(CONVERSATION_CHANNELS),
    visitor: Type.Object({
      id: IdOf('visitor'),
      name: Nullable(Type.String()),
      email: Nullable(Type.String()),
    }),
    lead_id: Nullable(IdOf('lead')),
    message_count: Type.Integer({ minimum: 0 }),
    last_message_at: Nullable(Timestamp),
    metadata: Type.Record(Type.String(), Type.String()),
    handoff_requested_at: Type.Union([Timestamp, Type.Null()], {
      description: 'When the visitor first asked for a person (the widget\'s button, or in words); null if never. An operator\'s reply switches the conversation to `mode: human`.',
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Conversation' },
);
export type ConversationView = Static<typeof Conversation>;

/** Query of GET /conversations. */
export const ListConversationsQuery = Type.Object(
  {
    ...PageQuery,
    chatbot_id: Type.Optional(Type.String({ maxLength: 64, description: 'Only conversations of this AI Agent.' })),
    status: Type.Optional(Type.Enum(CONVERSATION_STATUSES)),
    channel: Type.Optional(Type.Enum(CONVERSATION_CHANNELS)),
    handoff: Type.Optional(
      Type.Literal('requested', { description: '`requested`: only conversations waiting for a person (a handoff was requested, the conversation is open, and no operator has answered yet: still `mode: agent`).' }),
    ),
  },
  { additionalProperties: false },
);
export type ListConversationsFilters = Static<typeof ListConversationsQuery>;

/** A page of conversations. */
export const ConversationList = ListOf(Conversation, 'ConversationList');
