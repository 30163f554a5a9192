import { Type, type Static } from 'typebox';
import { IdOf, ListOf, Nullable, PageQuery, Timestamp } from '../../http/schemas.js';

export const MESSAGE_ROLES = ['user', 'assistant', 'operator'] as const;
export const AUTHOR_TYPES = ['visitor', 'api_key', 'user', 'agent'] as const;
export const FEEDBACK_RATINGS = ['up', 'down'] as const;
/** What kind of turn an agent answer was (see `Message.outcome`). */
export const MESSAGE_OUTCOMES = ['answered', 'best_matches', 'unanswered', 'conversational', 'handoff', 'failed'] as const;
export type MessageOutcome = (typeof MESSAGE_OUTCOMES)[number];

/** A knowledge document an answer used. */
export const MessageSource = Type.Object(
  {
    source_id: IdOf('source'),
    document_id: IdOf('document'),
    title: Type.String(),
    url: Nullable(Type.String({ description: 'The page or file the document came from; null for hand-written text.' })),
  },
  { title: 'MessageSource' },
);

/** The visitor's current rating of an answer (the latest rating replaces an earlier one). */
export const MessageFeedback = Type.Object(
  {
    rating: Type.Enum(FEEDBACK_RATINGS),
    comment: Nullable(Type.String()),
    updated_at: Timestamp,
  },
  { title: 'MessageFeedback' },
);

/** One message of a conversation. */
export const Message = Type.Object(
  {
    id: IdOf('message'),
    object: Type.Literal('message'),
    conversation_id: IdOf('conversation'),
    role: Type.Enum(MESSAGE_ROLES, {
      description: '`user`: the visitor (or a channel relaying one); `assistant`: the AI Agent; `operator`: a human answering.',
    }),
    content: Type.String(),
    author: Type.Object({
      type: Type.Enum(AUTHOR_TYPES),
      id: Nullable(Type.String()),
    }),
    sources: Type.Array(MessageSource, { description: 'The knowledge documents an agent answer used, best first; empty otherwise (and for visitor and operator messages).' }),
    feedback: Type.Union([MessageFeedback, Type.Null()], { description: 'The visitor\'s rating of an agent answer; null when not rated.' }),
    outcome: Nullable(Type.Enum(MESSAGE_OUTCOMES, {
      description:
        'What kind of turn an agent answer was: `answered` (stated from the knowledge, its document in `sources`); `best_matches` (not sure: ' +
        'the answer lists up to three documents that may help, in `sources`, and offers a person); `unanswered` (the knowledge does not say: a ' +
        'plain decline offering a person); `conversational` (greeting, thanks, goodbye, "who are you"); `handoff` (the visitor asked for a person); ' +
        '`failed` (the provider failed: the polite fallback). Null for visitor and operator messages, and for answers stored before it was recorded.',
    })),
    created_at: Timestamp,
  },
  { title: 'Message' },
);
export type MessageView = Static<typeof Message>;

/** Body of POST /conversations/{id}/messages. */
export const CreateMessageBody = Type.Object(
  {
    content: Type.String({ minLength: 1, maxLength: 10_000, description: 'The text of the message.' }),
    role: Type.Optional(
      Type.Union([Type.Literal('user'), Type.Literal('operator')], {
        default: 'user',
        description:
          '`user` (default): a visitor\'s message relayed by a custom channel; the AI Agent answers it. ' +
          '`operator`: a human answering; the conversation switches to `mode: human` and the agent stays silent.',
      }),
    ),
  },
  { additionalProperties: false, title: 'CreateMessage' },
);
export type CreateMessageInput = Static<typeof CreateMessageBody>;

/** Query of GET /conversations/{id}/messages. */
export const ListMessagesQuery = Type.Object(
  {
    ...PageQuery,
    order: Type.Optional(
      Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'asc', description: 'Oldest first (`asc`, default) or newest first.' }),
    ),
  },
  { additionalProperties: false },
);
export type ListMessagesFilters = Static<typeof ListMessagesQuery>;

/** A page of messages. */
export const MessageList = ListOf(Message, 'MessageList');
