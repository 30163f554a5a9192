import { Type, type Static } from 'typebox';
import { LLM_PROVIDERS } from '../../config.js';
import { Nullable, Timestamp } from '../../http/schemas.js';

const Provider = Type.Enum(LLM_PROVIDERS, {
  description: '`builtin` (answers from the agent\'s knowledge, no model), `openai` (any OpenAI-compatible chat completions endpoint: OpenAI, Ollama, vLLM, LM Studio …) or `anthropic`.',
});
const BaseUrl = Nullable(
  Type.String({
    format: 'uri',
    maxLength: 2048,
    pattern: '^[hH][tT][tT][pP][sS]?://',
    description: 'The API base URL, ending in /v1 (e.g. http://localhost:11434/v1 for Ollama). Null: the provider\'s own (https://api.openai.com/v1, https://api.anthropic.com/v1). Ignored for builtin.',
  }),
);
const Model = Nullable(Type.String({ minLength: 1, maxLength: 200, description: 'The model agents use unless they name their own. Null: the provider\'s default (gpt-4o-mini, claude-haiku-4-5).' }));
const ApiKey = Nullable(
  Type.String({
    maxLength: 1000,
    description: 'The provider API key. Stored encrypted and never returned. Omit it to keep the saved key (it is dropped when the provider changes); null or "" removes it.',
  }),
);

/** The provider agents answer through right now, for every member (the agent page). */
export const ActiveProvider = Type.Object(
  {
    object: Type.Literal('active_provider'),
    provider: Provider,
    label: Type.String({ description: 'The provider in words: Built-in, OpenAI-compatible or Anthropic.' }),
    model: Type.String({ description: 'The model used when an agent names none.' }),
    base_url: Nullable(Type.String({ description: 'Where model calls go (without credentials); null for builtin.' })),
    source: Type.Enum(['environment', 'dashboard', 'default'], {
      description: '`environment`: set by environment variables on the server (they win over the dashboard); `dashboard`: saved in Settings → Model provider; `default`: neither (the built-in provider).',
    }),
  },
  { title: 'ActiveProvider' },
);
export type ActiveProviderView = Static<typeof ActiveProvider>;

/** The saved settings as the owner sees them: never the key, only whether one is set and its last four characters. */
const SavedSettings = Type.Object({
  provider: Provider,
  base_url: Nullable(Type.String()),
  model: Nullable(Type.String()),
  api_key_set: Type.Boolean({ description: 'Whether an API key is saved.' }),
  api_key_last4: Nullable(Type.String({ description: 'The last four characters of the saved key, to recognise it.' })),
  updated_at: Timestamp,
});

/** GET/PUT /provider/settings: the instance's provider settings (its owner only). */
export const ProviderSettings = Type.Object(
  {
    object: Type.Literal('provider_settings'),
    active: ActiveProvider,
    editable: Type.Boolean({ description: 'False when environment variables choose the provider: the settings are then read-only.' }),
    environment_variables: Type.Array(Type.String(), { description: 'The provider variables set on this server (LLM_PROVIDER, OPENAI_API_KEY …), names only.' }),
    saved: Nullable(SavedSettings),
    can_store_api_key: Type.Boolean({ description: 'Whether an API key can be saved: false on PostgreSQL without SECRET_KEY.' }),
    problem: Nullable(Type.String({ description: 'Why the saved settings cannot be used as they are (e.g. the key no longer decrypts), in words.' })),
  },
  { title: 'ProviderSettings' },
);
export type ProviderSettingsView = Static<typeof ProviderSettings>;

/** Body of PUT /provider/settings. */
export const SaveProviderSettingsBody = Type.Object(
  { provider: Provider, base_url: Type.Optional(BaseUrl), model: Type.Optional(Model), api_key: Type.Optional(ApiKey) },
  { additionalProperties: false, title: 'SaveProviderSettings' },
);
export type SaveProviderSettingsInput = Static<typeof SaveProviderSettingsBody>;

/**
 * Body of POST /provider/test: the form's settings, or nothing: the active provider. An omitted key means the
 * saved one, and only towards the saved base URL (another URL without a key: 400 `api_key_required`).
 */
export const TestProviderBody = Type.Object(
  { provider: Type.Optional(Provider), base_url: Type.Optional(BaseUrl), model: Type.Optional(Model), api_key: Type.Optional(ApiKey) },
  { additionalProperties: false, title: 'TestProvider' },
);
export type TestProviderInput = Static<typeof TestProviderBody>;

/** Answer of POST /provider/test. */
export const ConnectionTest = Type.Object(
  {
    object: Type.Literal('connection_test'),
    ok: Type.Boolean(),
    message: Type.String({ description: 'What happened, in words: the number of models found, or the provider\'s error (secrets redacted).' }),
    models: Nullable(Type.Array(Type.String(), { description: 'The models the provider lists, when it answered /models.' })),
  },
  { title: 'ConnectionTest' },
);
export type ConnectionTestView = Static<typeof ConnectionTest>;

/** Answer of GET /provider/models: the active provider's models, or why they could not be listed. */
export const ProviderModels = Type.Object(
  {
    object: Type.Literal('provider_models'),
    provider: Provider,
    default_model: Type.String({ description: 'The model agents use when they name none ("service default").' }),
    data: Type.Array(Type.String(), { description: 'Model ids from the provider\'s /models; ["builtin"] for builtin; empty when they could not be listed.' }),
    error: Nullable(Type.String({ description: 'Why the list could not be fetched, in words; null when it was.' })),
  },
  { title: 'ProviderModels' },
);
export type ProviderModelsView = Static<typeof ProviderModels>;
