import { Type, type Static } from 'typebox';
import { IdOf, Nullable, Timestamp } from '../../http/schemas.js';
import { AgentLanguage, Appearance, LEAD_FIELDS, SuggestedQuestions, Translations } from '../chatbots/schema.js';
import { VisitorContactFields } from '../leads/schema.js';
import { FEEDBACK_RATINGS, Message } from '../messages/schema.js';

/** `{chatbot_id}` in a widget path (any string: a malformed id is a 404). */
export const ChatbotParams = Type.Object({ chatbot_id: Type.String({ description: 'The AI Agent id (`bot_…`).' }) });

/** `{conversation_id}` in a widget path. */
export const ConversationParams = Type.Object({ conversation_id: Type.String({ description: 'The conversation id (`conv_…`).' }) });

/** `{conversation_id}` and `{message_id}` in a widget path. */
export const ConversationMessageParams = Type.Object({
  conversation_id: ConversationParams.properties.conversation_id,
  message_id: Type.String({ description: 'The id of one of the agent\'s answers in that conversation (`msg_…`).' }),
});

/** What the widget shows before a conversation starts: read at every page load, so a change shows at the next one. */
export const WidgetConfig = Type.Object(
  {
    id: IdOf('chatbot'),
    name: Type.String(),
    title: Type.String({ description: 'The panel\'s title: `appearance.title`, else the agent\'s name.' }),
    welcome_message: Nullable(Type.String()),
    suggested_questions: SuggestedQuestions,
    language: AgentLanguage,
    translations: Translations,
    appearance: Appearance,
  },
  { title: 'WidgetConfig' },
);
export type WidgetConfigView = Static<typeof WidgetConfig>;

/** Body of POST /widget/v1/chatbots/{chatbot_id}/conversations (optional). */
export const StartConversationBody = Type.Object(
  {
    locale: Type.Optional(Type.String({
      maxLength: 35,
      pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$',
      description: 'The visitor\'s language as a BCP 47 tag (the browser\'s, e.g. `es-MX`): the agent declines, offers pages and hands off in it, and the welcome message is its translation when the agent has one.',
    })),
    visitor: Type.Optional(
      Type.Object(
        {
          name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, title: 'StartWidgetConversation' },
);
export type StartConversationBodyInput = Static<typeof StartConversationBody>;

/** A new widget conversation: its id, the visitor's token (shown once) and what the widget shows first. */
export const StartedConversation = Type.Object(
  {
    conversation_id: IdOf('conversation'),
    visitor_token: Type.String({ description: 'Bearer token for this conversation only. Keep it; it is not shown again.' }),
    welcome_message: Nullable(Type.String({ description: 'In the visitor\'s `locale` when the agent has a translation of it.' })),
    chatbot: Type.Object({
      id: IdOf('chatbot'),
      name: Type.String(),
      lead_capture: Type.Object({
        enabled: Type.Boolean(),
        fields: Type.Array(Type.Enum(LEAD_FIELDS)),
        prompt: Nullable(Type.String()),
      }),
      language: AgentLanguage,
      suggested_questions: SuggestedQuestions,
      translations: Translations,
    }),
  },
  { title: 'WidgetConversation' },
);
export type StartedConversationView = Static<typeof StartedConversation>;

/** Body limit of a visitor message: its 10,000 characters fit even written as `\uXXXX` escapes (6 bytes each). */
export const VISITOR_MESSAGE_BODY_LIMIT_BYTES = 64 * 1024;

/** Body of POST /widget/v1/conversations/{conversation_id}/messages. */
export const VisitorMessageBody = Type.Object(
  { content: Type.String({ minLength: 1, maxLength: 10_000, description: 'The visitor\'s text.' }) },
  { additionalProperties: false, title: 'VisitorMessage' },
);
export type VisitorMessageInput = Static<typeof VisitorMessageBody>;

/** The stored visitor message and the agent's stored answer (null in human mode, or when it could not be produced now). */
export const MessageExchange = Type.Object(
  { message: Message, reply: Nullable(Message) },
  { title: 'WidgetMessageExchange' },
);
export type MessageExchangeView = Static<typeof MessageExchange>;

/** Body of POST /widget/v1/conversations/{conversation_id}/lead: at least one field; an email or a phone is needed. */
export const VisitorLeadBody = Type.Object(
  VisitorContactFields,
  { additionalProperties: false, minProperties: 1, title: 'VisitorLead' },
);
export type VisitorLeadInput = Static<typeof VisitorLeadBody>;

/** The SSE stream of POST …/messages with `Accept: text/event-stream`. */
export const MessageEventStream = Type.String({
  description:
    'Server-sent events: `message` (the stored visitor message), `delta` (`{"text": "…"}` per generated piece), ' +
    '`reset` (`{}`: the pieces sent so far are withdrawn because the provider failed; the fallback answer follows), ' +
    '`reply` (the stored answer), or `error` (a problem object; the answer then arrives later in the conversation). ' +
    'In human mode the stream ends after `message`.',
});

/** Body of POST /widget/v1/conversations/{conversation_id}/messages/{message_id}/feedback. */
export const FeedbackBody = Type.Object(
  {
    rating: Type.Enum(FEEDBACK_RATINGS, { description: 'Thumbs up or down; a later rating of the same answer replaces this one.' }),
    comment: Type.Optional(Type.String({ maxLength: 1000, description: 'What the visitor adds (optional).' })),
  },
  { additionalProperties: false, title: 'WidgetFeedback' },
);
export type FeedbackBodyInput = Static<typeof FeedbackBody>;

/** Body of POST /widget/v1/conversations/{conversation_id}/handoff: none, or an empty object. */
export const HandoffBody = Type.Object({}, { additionalProperties: false, title: 'WidgetHandoffRequest' });

/** The answer to a handoff request: when it was first asked, and the agent's answer (null when already asked, or an operator is there). */
export const HandoffResult = Type.Object(
  {
    handoff_requested_at: Timestamp,
    reply: Nullable(Message),
  },
  { title: 'WidgetHandoff' },
);
export type HandoffResultView = Static<typeof HandoffResult>;
