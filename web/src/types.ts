/** An AI Agent as /app/api returns it (the /api/v1 shape). */
export interface Agent {
  id: string;
  name: string;
  description: string | null;
  status: 'draft' | 'active' | 'paused' | 'archived';
  instructions: string;
  welcome_message: string | null;
  model: string | null;
  temperature: number | null;
  knowledge: { title: string; content: string }[];
  lead_capture: { enabled: boolean; fields: string[]; prompt: string | null };
  allowed_origins: string[];
  /** Up to 6 questions the widget offers before the first message. */
  suggested_questions?: string[];
  /** The widget's own words: auto (the browser's language), en, es, fr, de or pt. */
  language?: 'auto' | 'en' | 'es' | 'fr' | 'de' | 'pt';
  /** The widget's look. */
  appearance?: Appearance;
  created_at: string;
  updated_at: string;
  published_at: string | null;
}

/** The widget's look (an agent's `appearance`); welcome message, questions and language are the agent's own fields. */
export interface Appearance {
  /** `#RRGGBB`: launcher, header and the visitor's messages. */
  color: string;
  position: 'right' | 'left';
  /** A label makes the launcher a text button; without one it shows the icon. */
  launcher: { label: string | null; icon: 'chat' | 'question' | 'sparkle' };
  /** An https image URL, or null. */
  avatar_url: string | null;
  /** null: the agent's name. */
  title: string | null;
}

/** A message of a conversation. */
export interface Message {
  id: string;
  role: 'user' | 'assistant' | 'operator';
  content: string;
  created_at: string;
  author: { type: string; id: string | null };
  /** The knowledge documents an agent answer used (empty otherwise). */
  sources?: { source_id: string; document_id: string; title: string; url: string | null }[];
  /** The visitor's rating of an agent answer. */
  feedback?: { rating: 'up' | 'down'; comment: string | null; updated_at: string } | null;
}

/** A conversation. */
export interface Conversation {
  id: string;
  chatbot_id: string;
  status: 'open' | 'closed';
  mode: 'agent' | 'human';
  channel: string;
  visitor: { id: string; name: string | null; email: string | null };
  message_count: number;
  last_message_at: string | null;
  /** The newest message (its first 200 characters); null before the first one. */
  last_message: { role: 'user' | 'assistant' | 'operator'; content: string; created_at: string } | null;
  /** When the visitor asked for a person (null: never). */
  handoff_requested_at?: string | null;
  created_at: string;
}

/** A lead. */
export interface Lead {
  id: string;
  chatbot_id: string | null;
  conversation_id: string | null;
  name: string | null;
  email: string | null;
  phone: string | null;
  company: string | null;
  status: string;
  source: string;
  created_at: string;
}

/** A list page. */
export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** A knowledge source of an agent (website, file, text or Q&A), as /app/api returns it (the /api/v1 shape). */
export interface Source {
  id: string;
  chatbot_id: string;
  type: 'website' | 'file' | 'text' | 'qa';
  title: string | null;
  url: string | null;
  status: 'queued' | 'syncing' | 'ready' | 'failed';
  /** documents: stored so far (read or failed); chunks: retrievable now; failed_documents: could not be read. */
  stats: { documents: number; chunks: number; failed_documents: number };
  /** While syncing: documents done in this sync, and found so far (a crawl finds more as it goes). */
  progress: { done: number; found: number } | null;
  error: string | null;
  sync_interval_hours: number | null;
  last_synced_at: string | null;
  created_at: string;
  updated_at: string;
}

/** One page or file of a source. */
export interface SourceDocument {
  id: string;
  source_id: string;
  url: string;
  title: string | null;
  status: 'pending' | 'ready' | 'failed';
  error: string | null;
  chunks: number;
}

/** One chunk retrieval found for a question. */
export interface KnowledgeHit {
  source_id: string;
  document_id: string;
  title: string;
  url: string | null;
  content: string;
  score: number;
}

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
