import { ConfigError, booleanFlag, httpUrl, integer } from './values.js';

// The configuration of what the service talks to outside itself: mail, webhooks, knowledge sources,
// embeddings and model providers (src/config.ts assembles the whole).

/** The SMTP server mail goes through. The URL may hold the password: it is never logged. */
export interface MailConfig {
  /** SMTP_URL: smtp://user:pass@host:587 (STARTTLS when offered) or smtps://…:465 (TLS from the start). */
  url: string;
  /** MAIL_FROM: the sender, `address` or `Name <address>`. */
  from: string;
}

/** Webhook deliveries: how long a receiver has, when failures are retried, how many go out at once. */
export interface WebhooksConfig {
  /** Longest one delivery may take, connection to last byte (WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  /** Seconds between a failed attempt and the next, one entry per retry (WEBHOOK_RETRY_SCHEDULE); jitter is added. */
  retryScheduleSeconds: number[];
  /** Deliveries one process sends at once, beside replies and ingestion (WEBHOOK_CONCURRENCY). */
  concurrency: number;
  /** Receivers on private, loopback and link-local addresses are allowed (OUTBOUND_ALLOW_PRIVATE_HOSTS, shared with sources). */
  allowPrivateHosts: boolean;
}

/** Knowledge sources: what an upload or a crawl may take, how pages are fetched and files parsed, and per-workspace quotas. */
export interface SourcesConfig {
  /** Largest uploaded file (SOURCE_MAX_FILE_MB), in bytes: larger uploads get 413. */
  maxFileBytes: number;
  /** Most pages one website source crawls (SOURCE_MAX_PAGES); also the cap on `crawl.max_pages`. */
  maxPages: number;
  /** Crawl limits when a website source names none. */
  crawlDefaults: { maxPages: number; maxDepth: number };
  /** Outbound fetches may reach private, loopback and link-local addresses (tests, intranets) when true. */
  allowPrivateHosts: boolean;
  /** Longest one page fetch may take, first byte to last (SOURCE_FETCH_TIMEOUT_MS). */
  fetchTimeoutMs: number;
  /** Largest page or linked file fetched (SOURCE_MAX_RESPONSE_MB), in bytes. */
  maxResponseBytes: number;
  /** Redirects followed per fetch, each checked like the first address (SOURCE_MAX_REDIRECTS). */
  maxRedirects: number;
  /** Ingestion jobs one process runs at once beside reply jobs (INGEST_CONCURRENCY); one workspace holds at most one. */
  ingestConcurrency: number;
  /** Most bytes a DOCX (ZIP) may expand to, counted while inflating (SOURCE_MAX_EXPANDED_MB). */
  maxExpandedBytes: number;
  /** The parse sandbox: a parse process's memory (SOURCE_PARSE_MEMORY_MB) and deadline per document (SOURCE_PARSE_TIMEOUT_MS). */
  parse: { memoryMb: number; timeoutMs: number };
  /** Longest one crawl may run, first fetch to last (SOURCE_MAX_CRAWL_MINUTES), in ms. */
  maxCrawlMs: number;
  /** Per-workspace quotas: sources (SOURCE_MAX_PER_WORKSPACE) and their files' total size (SOURCE_MAX_TOTAL_MB, bytes). */
  quota: { sources: number; totalBytes: number };
  /** Chunk embeddings for hybrid retrieval (EMBEDDINGS_PROVIDER=openai); null: full text alone (the default). */
  embeddings: EmbeddingsConfig | null;
}

/** An OpenAI-compatible `/embeddings` endpoint that chunks and questions are embedded through. */
export interface EmbeddingsConfig {
  /** EMBEDDINGS_BASE_URL, by default OPENAI_BASE_URL (ends in /v1). */
  baseUrl: string;
  /** EMBEDDINGS_MODEL (text-embedding-3-small by default). */
  model: string;
  /** EMBEDDINGS_API_KEY, by default OPENAI_API_KEY. */
  apiKey: string | null;
}

/** The model providers an agent can answer through. */
export const LLM_PROVIDERS = ['builtin', 'openai', 'anthropic'] as const;
export type LlmProvider = (typeof LLM_PROVIDERS)[number];

/** The model provider configuration. API keys live here only; they are never logged. */
export interface LlmConfig {
  provider: LlmProvider;
  /** Model used when the agent names none (`builtin` for the built-in provider). */
  model: string;
  /** Any OpenAI-compatible chat completions endpoint (OpenAI, Ollama, vLLM, llama.cpp, LM Studio …). */
  openai: { baseUrl: string; apiKey: string | null };
  /** Anthropic's Messages API; baseUrl null uses Anthropic's own. */
  anthropic: { baseUrl: string | null; apiKey: string | null };
  /** Longest a whole reply may take (first byte to last) before the visitor gets the fallback answer. */
  timeoutMs: number;
  /** Retries of a failed provider call (5xx, 429, connection errors), within the same timeout. */
  maxRetries: number;
  /** Longest answer asked of the model, in tokens. */
  maxOutputTokens: number;
  /** How many of the latest transcript messages go into a prompt. */
  historyMessages: number;
  /** How many knowledge entries go into a prompt (the best matches when the agent has more). */
  knowledgeEntries: number;
}

/** The model used when neither the agent nor LLM_MODEL (or the saved settings) name one. */
export const DEFAULT_MODELS: Record<LlmProvider, string> = { builtin: 'builtin', openai: 'gpt-4o-mini', anthropic: 'claude-haiku-4-5' };

// The variables that choose a provider (not the tuning ones such as LLM_TIMEOUT_MS, which apply to any provider).
export const LLM_PROVIDER_VARIABLES = ['LLM_PROVIDER', 'LLM_MODEL', 'OPENAI_BASE_URL', 'OPENAI_API_KEY', 'ANTHROPIC_BASE_URL', 'ANTHROPIC_API_KEY'];

export function llmConfig(env: NodeJS.ProcessEnv): LlmConfig {
  const provider = (env.LLM_PROVIDER?.trim().toLowerCase() || 'builtin') as LlmProvider;
  if (!LLM_PROVIDERS.includes(provider)) {
    throw new ConfigError(`LLM_PROVIDER must be one of ${LLM_PROVIDERS.join(', ')}, got "${env.LLM_PROVIDER}"`);
  }
  const openai = { baseUrl: httpUrl(env, 'OPENAI_BASE_URL') ?? 'https://api.openai.com/v1', apiKey: env.OPENAI_API_KEY?.trim() || null };
  const anthropic = { baseUrl: httpUrl(env, 'ANTHROPIC_BASE_URL'), apiKey: env.ANTHROPIC_API_KEY?.trim() || null };
  // OpenAI itself needs a key; a local OpenAI-compatible server (Ollama, llama.cpp …) usually does not.
  if (provider === 'openai' && openai.apiKey === null && new URL(openai.baseUrl).hostname === 'api.openai.com') {
    throw new ConfigError('OPENAI_API_KEY is required with LLM_PROVIDER=openai and the default OPENAI_BASE_URL (https://api.openai.com/v1)');
  }
  if (provider === 'anthropic' && anthropic.apiKey === null) {
    throw new ConfigError('ANTHROPIC_API_KEY is required with LLM_PROVIDER=anthropic');
  }
  return {
    provider,
    model: env.LLM_MODEL?.trim() || DEFAULT_MODELS[provider],
    openai,
    anthropic,
    timeoutMs: integer(env, 'LLM_TIMEOUT_MS', 30_000, 100, 600_000),
    maxRetries: integer(env, 'LLM_MAX_RETRIES', 1, 0, 5),
    maxOutputTokens: integer(env, 'LLM_MAX_OUTPUT_TOKENS', 1024, 16, 32_768),
    historyMessages: integer(env, 'LLM_HISTORY_MESSAGES', 20, 1, 200),
    knowledgeEntries: integer(env, 'LLM_KNOWLEDGE_ENTRIES', 5, 0, 50),
  };
}

export function sourcesConfig(env: NodeJS.ProcessEnv): SourcesConfig {
  const maxPages = integer(env, 'SOURCE_MAX_PAGES', 500, 1, 100_000);
  return {
    maxFileBytes: integer(env, 'SOURCE_MAX_FILE_MB', 20, 1, 1024) * 1024 * 1024,
    maxPages,
    crawlDefaults: { maxPages: Math.min(50, maxPages), maxDepth: 3 },
    allowPrivateHosts: booleanFlag(env, 'OUTBOUND_ALLOW_PRIVATE_HOSTS'),
    fetchTimeoutMs: integer(env, 'SOURCE_FETCH_TIMEOUT_MS', 15_000, 100, 600_000),
    maxResponseBytes: integer(env, 'SOURCE_MAX_RESPONSE_MB', 10, 1, 1024) * 1024 * 1024,
    maxRedirects: integer(env, 'SOURCE_MAX_REDIRECTS', 5, 0, 20),
    ingestConcurrency: integer(env, 'INGEST_CONCURRENCY', 2, 1, 16),
    maxExpandedBytes: integer(env, 'SOURCE_MAX_EXPANDED_MB', 25, 1, 1024) * 1024 * 1024,
    parse: {
      memoryMb: integer(env, 'SOURCE_PARSE_MEMORY_MB', 384, 128, 16_384),
      timeoutMs: integer(env, 'SOURCE_PARSE_TIMEOUT_MS', 60_000, 100, 3_600_000),
    },
    maxCrawlMs: integer(env, 'SOURCE_MAX_CRAWL_MINUTES', 30, 1, 1440) * 60_000,
    quota: {
      sources: integer(env, 'SOURCE_MAX_PER_WORKSPACE', 500, 1, 1_000_000),
      totalBytes: integer(env, 'SOURCE_MAX_TOTAL_MB', 1000, 1, 1_048_576) * 1024 * 1024,
    },
    embeddings: embeddingsConfig(env),
  };
}

const DEFAULT_RETRY_SCHEDULE = '5,300,1800,7200,18000,36000,50400,72000,86400';

export function webhooksConfig(env: NodeJS.ProcessEnv): WebhooksConfig {
  const raw = env.WEBHOOK_RETRY_SCHEDULE?.trim() || DEFAULT_RETRY_SCHEDULE;
  const steps = raw.split(',').map((step) => step.trim());
  // Seconds, decimals allowed (tests retry within a second); at most a week apart and 30 retries.
  if (steps.length > 30 || steps.some((step) => !/^\d+(\.\d+)?$/.test(step) || Number(step) > 604_800)) {
    throw new ConfigError(`WEBHOOK_RETRY_SCHEDULE must be up to 30 comma-separated delays in seconds (each at most 604800), e.g. ${DEFAULT_RETRY_SCHEDULE}; got "${raw}"`);
  }
  return {
    timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 15_000, 100, 600_000),
    retryScheduleSeconds: steps.map(Number),
    concurrency: integer(env, 'WEBHOOK_CONCURRENCY', 16, 1, 1_000),
    allowPrivateHosts: booleanFlag(env, 'OUTBOUND_ALLOW_PRIVATE_HOSTS'),
  };
}

// `address` or `Name <address>`: a sender a mail server can use.
const MAIL_FROM = /^(?:[^<>]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/;

export function mailConfig(env: NodeJS.ProcessEnv): MailConfig | null {
  const raw = env.SMTP_URL?.trim();
  if (!raw) return null;
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    url = null;
  }
  // The message never repeats the value: it may hold the SMTP password.
  if (!url || (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') || url.hostname === '') {
    throw new ConfigError('SMTP_URL must be an smtp:// or smtps:// URL with a host, e.g. smtp://user:password@mail.example.com:587');
  }
  const from = env.MAIL_FROM?.trim() ?? '';
  if (!MAIL_FROM.test(from)) {
    throw new ConfigError(`MAIL_FROM must be an address or "Name <address>" when SMTP_URL is set, got "${from}"`);
  }
  return { url: raw, from };
}

function embeddingsConfig(env: NodeJS.ProcessEnv): EmbeddingsConfig | null {
  const provider = env.EMBEDDINGS_PROVIDER?.trim().toLowerCase() || 'none';
  if (provider === 'none') return null;
  if (provider !== 'openai') throw new ConfigError(`EMBEDDINGS_PROVIDER must be none or openai, got "${env.EMBEDDINGS_PROVIDER}"`);
  const baseUrl = httpUrl(env, 'EMBEDDINGS_BASE_URL') ?? httpUrl(env, 'OPENAI_BASE_URL') ?? 'https://api.openai.com/v1';
  const apiKey = env.EMBEDDINGS_API_KEY?.trim() || env.OPENAI_API_KEY?.trim() || null;
  if (apiKey === null && new URL(baseUrl).hostname === 'api.openai.com') {
    throw new ConfigError('EMBEDDINGS_API_KEY (or OPENAI_API_KEY) is required with EMBEDDINGS_PROVIDER=openai and the default base URL (https://api.openai.com/v1)');
  }
  return { baseUrl, model: env.EMBEDDINGS_MODEL?.trim() || 'text-embedding-3-small', apiKey };
}
