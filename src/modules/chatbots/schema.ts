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

/** The languages an agent's own words can be given in (the widget's languages). */
export const TRANSLATION_LANGUAGES = ['en', 'es', 'fr', 'de', 'pt'] as const;

const Translation = Type.Object(
  {
    welcome_message: Type.Optional(Nullable(Type.String({ maxLength: 1000, description: 'The welcome message in this language; absent or null: the agent\'s `welcome_message`.' }))),
    suggested_questions: Type.Optional(SuggestedQuestions),
  },
  { additionalProperties: false },
);

/** The welcome message and suggested questions per visitor language. */
export const Translations = Type.Partial(
  Type.Object(Object.fromEntries(TRANSLATION_LANGUAGES.map((language) => [language, Translation])) as Record<(typeof TRANSLATION_LANGUAGES)[number], typeof Translation>),
  {
    additionalProperties: false,
    title: 'ChatbotTranslations',
    description:
      'The welcome message and suggested questions per language (en, es, fr, de, pt), e.g. `{"es": {"welcome_message": "¡Hola!", "suggested_questions": ["¿Dónde estáis?"]}}`. ' +
      'The widget shows those of the visitor\'s browser language, else the agent\'s `welcome_message` and `suggested_questions`. A PATCH replaces the whole object.',
  },
);
export type TranslationsView = Static<typeof Translations>;

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

// Checked and normalized by the service (origins.ts), which explains a wrong entry in words.
const Origin = Type.String({
  maxLength: 255,
  description:
    'An origin such as `https://www.example.com` (scheme and host, optional port), or `*` for any. Normalized when stored: ' +
    'scheme and host lower-cased, the default port and a trailing `/` removed; duplicates collapse. A path, query or fragment is refused.',
});

/** Where the widget's launcher and panel sit on the page. */
export const WIDGET_POSITIONS = ['right', 'left'] as const;
/** The launcher's icons (when it has no label). */
export const LAUNCHER_ICONS = ['chat', 'question', 'sparkle'] as const;

const appearanceFields = {
  // The form is checked by the service (appearance.ts), so a wrong colour is explained in words.
  color: Type.String({ maxLength: 32, description: 'The accent colour, `#RRGGBB` (launcher, header, the visitor\'s messages). Text on it is white or near-black, whichever reads better.', examples: ['#2f5bd3'] }),
  position: Type.Enum(WIDGET_POSITIONS, { description: 'Bottom corner of the page where the launcher and the chat panel sit.' }),
  avatar_url: Nullable(Type.String({ maxLength: 2048, description: 'An https URL of an image shown in the header and beside the agent\'s answers; null for none.' })),
  title: Nullable(Type.String({ maxLength: 60, description: 'The title of the chat panel; null shows the agent\'s name.' })),
};
const launcherFields = {
  label: Nullable(Type.String({ maxLength: 40, description: 'Text of the launcher button (e.g. "Ask us"); null shows the icon alone.' })),
  icon: Type.Enum(LAUNCHER_ICONS, { description: 'Icon of the launcher: `chat`, `question` or `sparkle`.' }),
};

/**
 * How the chat widget and the hosted chat page look. With `welcome_message`, `suggested_questions` and
 * `language` (top-level fields of the agent) it is everything a visitor sees before the first answer.
 */
export const Appearance = Type.Object(
  { ...appearanceFields, launcher: Type.Object(launcherFields, { additionalProperties: false }) },
  {
    additionalProperties: false,
    title: 'ChatbotAppearance',
    description:
      'The widget\'s look: colour, position, launcher, avatar and title. The welcome message, suggested questions and language are the agent\'s ' +
      '`welcome_message`, `suggested_questions` and `language`. Applied by the widget at the next page load; no change to the site is needed.',
  },
);
export type AppearanceView = Static<typeof Appearance>;

/** A partial appearance: members left out keep their current value (also inside `launcher`). */
export const AppearanceInput = Type.Partial(
  Type.Object({
    ...appearanceFields,
    launcher: Type.Partial(Type.Object(launcherFields), { additionalProperties: false }),
  }),
  {
    additionalProperties: false,
    title: 'ChatbotAppearanceInput',
    description: 'The widget\'s look; members left out keep their current value (defaults on creation). `null` clears `avatar_url`, `title` or `launcher.label`.',
  },
);
export type AppearanceInput = Static<typeof AppearanceInput>;

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
    translations: Translations,
    appearance: Appearance,
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
  allowed_origins: Type.Array(Origin, { maxItems: 50 }),
  suggested_questions: SuggestedQuestions,
  language: AgentLanguage,
  translations: Translations,
  appearance: AppearanceInput,
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
    translations: Type.Optional(editable.translations),
    appearance: Type.Optional(editable.appearance),
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
    translations: Type.Optional(editable.translations),
    appearance: Type.Optional(editable.appearance),
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
