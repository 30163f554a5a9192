import { Type, type Static } from 'typebox';
import { IdOf, ListOf, Nullable, PageQuery, Timestamp } from '../../http/schemas.js';
import { MESSAGE_ROLES } from '../messages/schema.js';

export const CONVERSATION_STATUSES = ['open', 'closed'] as const;
export const CONVERSATION_MODES = ['agent', 'human'] as const;
export const CONVERSATION_CHANNELS = ['widget', 'api', 'dashboard'] as const;

/** How many characters of the newest message a conversation carries (an inbox row's preview). */
export const LAST_MESSAGE_PREVIEW = 200;

const LastMessage = Type.Object({
  role: Type.Enum(MESSAGE_ROLES, { description: '`user`: the visitor; `assistant`: the AI Agent; `operator`: a person of the workspace.' }),
  content: Type.String({ description: `The first ${LAST_MESSAGE_PREVIEW} characters of the message.` }),
  created_at: Timestamp,
});

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
    origin: Type.Union([Type.String(), Type.Null()], {
      description: 'The website the widget ran on when the conversation started (`https://www.example.com`); null on the hosted chat page, through the API, or when the browser sent no Origin.',
    }),
    visitor: Type.Object(
      {
        id: IdOf('visitor'),
        name: Type.Union([Type.String(), Type.Null()], { description: 'The visitor\'s name: from the lead captured in this conversation, else as given when it started; null when unknown.' }),
        email: Type.Union([Type.String(), Type.Null()], { description: 'The visitor\'s email: from the lead captured in this conversation, else as given when it started; null when unknown.' }),
      },
      { description: 'Who the visitor is, as far as they said.' },
    ),
    lead_id: Nullable(IdOf('lead')),
    message_count: Type.Integer({ minimum: 0 }),
    last_message_at: Nullable(Timestamp),
    last_message: Type.Union([LastMessage, Type.Null()], { description: 'The newest message, for an inbox row; null before the first message.' }),
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

// The filters of the list, shared by the export.
const filters = {
  created_after: PageQuery.created_after,
  created_before: PageQuery.created_before,
  q: Type.Optional(
    Type.String({
      maxLength: 200,
      description: 'Full-text search: only conversations with a message containing every word (case-insensitive substrings, at most 8 words).',
    }),
  ),
  mode: Type.Optional(Type.Enum(CONVERSATION_MODES, { description: '`agent` or `human` (an operator took over).' })),
  chatbot_id: Type.Optional(Type.String({ maxLength: 64, description: 'Only conversations of this AI Agent.' })),
  status: Type.Optional(Type.Enum(CONVERSATION_STATUSES)),
  channel: Type.Optional(Type.Enum(CONVERSATION_CHANNELS)),
  handoff: Type.Optional(
    Type.Literal('requested', { description: '`requested`: only conversations waiting for a person (a handoff was requested, the conversation is open, and no operator has answered yet: still `mode: agent`).' }),
  ),
};

/** Query of GET /conversations. */
export const ListConversationsQuery = Type.Object({ limit: PageQuery.limit, cursor: PageQuery.cursor, ...filters }, { additionalProperties: false });
export type ListConversationsFilters = Static<typeof ListConversationsQuery>;

export const EXPORT_FORMATS = ['jsonl', 'csv'] as const;

/** Query of GET /conversations/export: the list's filters and the file format. */
export const ExportConversationsQuery = Type.Object(
  {
    ...filters,
    format: Type.Optional(
      Type.Enum(EXPORT_FORMATS, {
        default: 'jsonl',
        description: '`jsonl` (default): one conversation per line with its `messages`; `csv`: one row per message with its conversation\'s columns.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ExportConversationsFilters = Static<typeof ExportConversationsQuery>;

/** The JSON Lines export (documented shape; the body is streamed). */
export const ConversationExportJsonLines = Type.String({
  title: 'ConversationExportJsonLines',
  description: 'One JSON object per line: a conversation (as in the list) with `messages`, an array of `{id, role, author_type, content, created_at}` oldest first.',
});

/** The CSV export (documented shape; the body is streamed). */
export const ConversationExportCsv = Type.String({
  title: 'ConversationExportCsv',
  description: 'RFC 4180 CSV with a header row; one row per message (a conversation without messages has one row with empty message columns).',
});

/** A page of conversations. */
export const ConversationList = ListOf(Conversation, 'ConversationList');
