import { Type, type Static } from 'typebox';
import { IdOf, ListOf, Metadata, Nullable, PageQuery, Timestamp } from '../../http/schemas.js';

/** The states of an AI Agent. */
export const CHATBOT_STATUSES = ['draft', 'active', 'paused', 'archived'] as const;
export type ChatbotStatus = (typeof CHATBOT_STATUSES)[number];

/** The languages of the widget's own words; `auto` follows the visitor's browser. */
export const AGENT_LANGUAGES = ['auto', 'en', 'es', 'fr', 'de', 'pt'] as const;

/** Questions the widget offers as chips before the first message. */
export const SuggestedQuestions = Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
  maxItems: 6,
  description: 'Up to 6 questions the chat widget offers before the first message.',
});

/** The language of the widget's own words (placeholder, buttons, errors). */
export const AgentLanguage = Type.Enum(AGENT_LANGUAGES, {
  description: 'Language of the chat widget\'s own words: `auto` (default) follows the visitor\'s browser; else en, es, fr, de or pt.',
});

/** Contact fields an agent can ask a visitor for. */
export const LEAD_FIELDS = ['name', 'email', 'phone', 'company'] as const;

const Status = Type.Enum(CHATBOT_STATUSES, {
  description: 'draft → active (published) ⇄ paused → archived (terminal). A new agent is a draft.',
});

const KnowledgeEntry = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 200 }),
    content: Type.String({ minLength: 1, maxLength: 20_000 }),
  },
  { additionalProperties: false },
);

const LeadCapture = Type.Object(
  {
    enabled: Type.Boolean(),
    fields: Type.Array(Type.Enum(LEAD_FIELDS), { maxItems: 4, uniqueItems: true }),
    prompt: Nullable(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

const Origin = Type.String({
  pattern: '^(\\*|https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?)$',
  maxLength: 255,
  description: 'An origin such as `https://example.com`, or `*` for any.',
});

/** An AI Agent as the API presents it. */
export const Chatbot = Type.Object(
  {
    id: IdOf('chatbot'),
    object: Type.Literal('chatbot'),
    name: Type.String(),
    description: Nullable(Type.String()),
    status: Status,
    instructions: Type.String({ description: 'System instructions the agent follows.' }),
    welcome_message: Nullable(Type.String()),
    model: Nullable(Type.String({ description: 'Model name; null uses the service default.' })),
    temperature: Nullable(Type.Number()),
    knowledge: Type.Array(KnowledgeEntry, { description: 'Text entries the agent answers from.' }),
    lead_capture: LeadCapture,
    allowed_origins: Type.Array(Type.String(), { description: 'Origins where the chat widget may run.' }),
    suggested_questions: SuggestedQuestions,
    language: AgentLanguage,
    metadata: Type.Record(Type.String(), Type.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
    published_at: Nullable(Timestamp),
  },
  { title: 'Chatbot' },
);
export type ChatbotView = Static<typeof Chatbot>;

const editable = {
  description: Nullable(Type.String({ maxLength: 1000 })),
  instructions: Type.String({ maxLength: 20_000 }),
  welcome_message: Nullable(Type.String({ maxLength: 1000 })),
  model: Nullable(Type.String({ minLength: 1, maxLength: 100 })),
  temperature: Nullable(Type.Number({ minimum: 0, maximum: 2 })),
  knowledge: Type.Array(KnowledgeEntry, { maxItems: 200 }),
  lead_capture: LeadCapture,
  allowed_origins: Type.Array(Origin, { maxItems: 50, uniqueItems: true }),
  suggested_questions: SuggestedQuestions,
  language: AgentLanguage,
  metadata: Metadata,
};

/** Body of POST /chatbots. */
export const CreateChatbotBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(editable.description),
    instructions: Type.Optional(editable.instructions),
    welcome_message: Type.Optional(editable.welcome_message),
    model: Type.Optional(editable.model),
    temperature: Type.Optional(editable.temperature),
    knowledge: Type.Optional(editable.knowledge),
    lead_capture: Type.Optional(editable.lead_capture),
    allowed_origins: Type.Optional(editable.allowed_origins),
    suggested_questions: Type.Optional(editable.suggested_questions),
    language: Type.Optional(editable.language),
    metadata: Type.Optional(editable.metadata),
  },
  { additionalProperties: false, title: 'CreateChatbot' },
);
export type CreateChatbotInput = Static<typeof CreateChatbotBody>;

/** Body of PATCH /chatbots/{id}: a partial update; `status` moves the agent through its states. */
export const UpdateChatbotBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    status: Type.Optional(Status),
    description: Type.Optional(editable.description),
    instructions: Type.Optional(editable.instructions),
    welcome_message: Type.Optional(editable.welcome_message),
    model: Type.Optional(editable.model),
    temperature: Type.Optional(editable.temperature),
    knowledge: Type.Optional(editable.knowledge),
    lead_capture: Type.Optional(editable.lead_capture),
    allowed_origins: Type.Optional(editable.allowed_origins),
    suggested_questions: Type.Optional(editable.suggested_questions),
    language: Type.Optional(editable.language),
    metadata: Type.Optional(editable.metadata),
  },
  { additionalProperties: false, title: 'UpdateChatbot' },
);
export type UpdateChatbotInput = Static<typeof UpdateChatbotBody>;

/** Query of GET /chatbots. */
export const ListChatbotsQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(Status) },
  { additionalProperties: false },
);
export type ListChatbotsFilters = Static<typeof ListChatbotsQuery>;

/** A page of AI Agents. */
export const ChatbotList = ListOf(Chatbot, 'ChatbotList');
