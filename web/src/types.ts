// The /api/v1 shapes come from the OpenAPI document the server serves (web/src/generated/api-v1.d.ts, written by
// `npm run typecheck` and the test setup), so the dashboard cannot drift from the API; /app/api answers with them.
import type { components } from './generated/api-v1';

type Schemas = components['schemas'];

/** An AI Agent (the API calls it a chatbot). */
export type Agent = Schemas['Chatbot'];
/** A page of agents. */
export type AgentList = Schemas['ChatbotList'];
/** The widget's look (an agent's `appearance`); welcome message, questions and language are the agent's own fields. */
export type Appearance = Schemas['ChatbotAppearance'];
/** A message of a conversation. */
export type Message = Schemas['Message'];
/** A page of a conversation's messages. */
export type MessageList = Schemas['MessageList'];
/** A conversation. */
export type Conversation = Schemas['Conversation'];
/** A page of conversations. */
export type ConversationList = Schemas['ConversationList'];
/** A lead. */
export type Lead = Schemas['Lead'];
/** A page of leads. */
export type LeadList = Schemas['LeadList'];
/** A knowledge source of an agent (website, file, text or Q&A). */
export type Source = Schemas['Source'];
/** A page of an agent's sources. */
export type SourceList = Schemas['SourceList'];
/** One page or file of a source. */
export type SourceDocument = Schemas['SourceDocument'];
/** A page of a source's documents. */
export type SourceDocumentList = Schemas['SourceDocumentList'];
/** One chunk retrieval found for a question. */
export type KnowledgeHit = Schemas['KnowledgeHit'];
/** What retrieval found for a question. */
export type KnowledgeSearchResult = Schemas['KnowledgeSearchResult'];
/** Totals and per-day series of a period. */
export type AnalyticsSummary = Schemas['AnalyticsSummary'];
/** A question the agents could not answer from knowledge, grouped by its wording. */
export type UnansweredQuestion = Schemas['UnansweredQuestion'];
/** A page of unanswered questions. */
export type UnansweredQuestionList = Schemas['UnansweredQuestionList'];
/** A webhook endpoint (its secret only in the answer of creation and rotation). */
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
/** A page of webhook endpoints. */
export type WebhookEndpointList = Schemas['WebhookEndpointList'];
/** One event sent to an endpoint, with its attempts. */
export type WebhookDelivery = Schemas['WebhookDelivery'];
/** A page of deliveries. */
export type WebhookDeliveryList = Schemas['WebhookDeliveryList'];

// Hand-written below: the dashboard's own routes (src/dashboard/routes/provider.ts), which the /api/v1 document does not describe.

/** The model provider agents answer through now (GET /provider). */
export interface ActiveProvider {
  provider: 'builtin' | 'openai' | 'anthropic';
  /** Built-in, OpenAI-compatible or Anthropic. */
  label: string;
  model: string;
  base_url: string | null;
  /** environment: set by environment variables on the server; dashboard: saved in Settings → Model provider. */
  source: 'environment' | 'dashboard' | 'default';
}

/** The instance's provider settings, as its owner sees them (GET/PUT /provider/settings); never the key. */
export interface ProviderSettingsView {
  active: ActiveProvider;
  editable: boolean;
  environment_variables: string[];
  saved: { provider: ActiveProvider['provider']; base_url: string | null; model: string | null; api_key_set: boolean; api_key_last4: string | null; updated_at: string } | null;
  can_store_api_key: boolean;
  problem: string | null;
}

/** The active provider's models (GET /provider/models); `error` when they could not be listed. */
export interface ProviderModels {
  provider: ActiveProvider['provider'];
  default_model: string;
  data: string[];
  error: string | null;
}
