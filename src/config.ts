import { isIP } from 'node:net';
import path from 'node:path';
import { parseSecretKey } from './modules/provider-settings/crypto.js';

/** Where the service keeps its data: an embedded SQLite file, or (later) PostgreSQL. */
export type DatabaseConfig =
  | { kind: 'sqlite'; path: string }
  | {
      kind: 'postgres';
      url: string;
      /** Schema to use (created when missing); null keeps the server's search_path. */
      schema: string | null;
      /** Most connections this instance opens. */
      poolMax: number;
      /** Longest a single statement may run before PostgreSQL cancels it. */
      statementTimeoutMs: number;
      /**
       * Longest the client waits for any one query's answer (a database that stops answering, packets
       * dropped): then the query fails (503) and its connection is closed. A little above the statement timeout.
       */
      queryTimeoutMs: number;
      /** Longest a request waits for a free connection before giving up (503). */
      connectTimeoutMs: number;
    };

/** The whole, typed configuration of the service. Built once by `loadConfig`. */
export interface Config {
  port: number;
  host: string;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  database: DatabaseConfig;
  /** Base URL used for absolute links (Link headers, docs); derived from host and port when unset. */
  publicUrl: string;
  /** Largest accepted request body, in bytes. */
  bodyLimitBytes: number;
  /** How long SIGTERM waits for in-flight requests before closing anyway. */
  shutdownTimeoutMs: number;
  /**
   * The proxies in front whose X-Forwarded-* headers are believed: none (false), a hop count, or their
   * addresses/CIDRs. The client IP (budgets, logs, audit) is the right-most address they did not add.
   */
  trustProxy: TrustProxy;
  /** Requests per rolling minute per API key and per workspace (continuous refill). */
  rateLimit: { keyPerMinute: number; workspacePerMinute: number };
  /** Bytes of the in-process read cache of API keys and agents (embedded SQLite only). */
  cacheMaxBytes: number;
  /** Failed authentications per client IP per minute before /api/v1 answers that IP 429 without a lookup. */
  failedAuthPerIpPerMinute: number;
  /** Dashboard sign-in attempts per 15 minutes, per IP and email and per IP (GCRA, same store as the API's). */
  signInLimit: { perIpAndEmail: number; perIp: number };
  /** Who may create an account: `first-only` (the first account, then invitations only) or `open` (anyone). */
  signup: SignupPolicy;
  /** Days an invitation link works after it is made (INVITATION_TTL_DAYS). */
  invitationTtlDays: number;
  /** Redis for state shared by instances (rate-limit budgets); null keeps it in process. */
  redis: { url: string; onFailure: 'local' | 'open' | 'closed' } | null;
  /** The public chat endpoints (/widget/v1): requests per rolling minute per client IP, messages per conversation. */
  widget: { ratePerIpPerMinute: number; messagesPerConversationPerMinute: number };
  /** The chat runtime: idle close (0 disables) and the durable reply worker. */
  runtime: {
    idleCloseMinutes: number;
    /** How often the worker looks for due reply jobs. */
    pollIntervalMs: number;
    /** How long a claimed job is held before another runner may take it over (renewed while it runs). */
    leaseMs: number;
    /**
     * Reply jobs the background worker runs at once per process (REPLY_CONCURRENCY): with a slow provider,
     * at most this many model calls per process for API messages and retries; widget answers run in their own requests.
     */
    replyConcurrency: number;
    /** Test hook (crash tests): the reply engine waits this long before answering. Not for production. */
    replyDelayMs: number;
  };
  /** How agents answer: the model provider and what goes into a prompt. */
  llm: LlmConfig;
  /** The provider variables set in the environment (LLM_PROVIDER, OPENAI_API_KEY …): when any is, `llm` wins over the dashboard's settings. */
  llmEnvironment: string[];
  /** The key that signs audit checkpoints (AUDIT_SIGNING_KEY); never stored in the database. Null: unset. */
  audit: { signingKey: string | null };
  /** Knowledge sources: upload and crawl limits, outbound fetch policy, ingestion jobs. */
  sources: SourcesConfig;
  /** Webhook deliveries (Standard Webhooks). */
  webhooks: WebhooksConfig;
  /** Outgoing email (SMTP_URL, MAIL_FROM); null: mail is off and nothing is sent. */
  mail: MailConfig | null;
  /** SECRET_KEY: the AES-256 key that encrypts secrets stored in the database (provider API keys). Null: unset. */
  secretKey: Buffer | null;
}

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

/** Knowledge sources (issue 30): what an upload or a crawl may take, and how pages are fetched. */
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
  /** Ingestion jobs one process runs at once beside reply jobs (INGEST_CONCURRENCY). */
  ingestConcurrency: number;
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

/** TRUST_PROXY: false, the number of proxies in front of the service, or their addresses/CIDRs. */
export type TrustProxy = false | number | string[];

/** SIGNUP: who may create an account. */
export const SIGNUP_POLICIES = ['first-only', 'open'] as const;
export type SignupPolicy = (typeof SIGNUP_POLICIES)[number];

function signupPolicy(env: NodeJS.ProcessEnv): SignupPolicy {
  const value = (env.SIGNUP?.trim().toLowerCase() || 'first-only') as SignupPolicy;
  if (!SIGNUP_POLICIES.includes(value)) throw new ConfigError(`SIGNUP must be one of ${SIGNUP_POLICIES.join(', ')}, got "${env.SIGNUP}"`);
  return value;
}

/** Raised for a configuration value that cannot be used; the message names the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return value;
}

// proxy-addr's names for address ranges, accepted in a TRUST_PROXY list.
const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

function isProxyAddress(entry: string): boolean {
  if (PROXY_RANGE_NAMES.includes(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128));
}

/**
 * TRUST_PROXY: `false` (default), the number of proxies in front of the service, or a comma-separated list
 * of their addresses/CIDRs. `true` is refused: it made the client IP the leftmost X-Forwarded-For entry,
 * which the client itself writes.
 */
function trustProxyConfig(env: NodeJS.ProcessEnv): TrustProxy {
  const raw = env.TRUST_PROXY?.trim() ?? '';
  const lower = raw.toLowerCase();
  if (raw === '' || ['false', '0', 'no', 'off'].includes(lower)) return false;
  if (['true', 'yes', 'on'].includes(lower)) {
    throw new ConfigError(
      `TRUST_PROXY=${raw} is no longer accepted: it believed any X-Forwarded-For a client sent. Set the number of proxies in front ` +
        'of the service (e.g. TRUST_PROXY=1 behind one load balancer), or their addresses/CIDRs (e.g. TRUST_PROXY=10.0.0.0/8,127.0.0.1), or false',
    );
  }
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops > 32) throw new ConfigError(`TRUST_PROXY hop count must be at most 32, got "${raw}"`);
    return hops;
  }
  const entries = raw.split(',').map((entry) => entry.trim());
  const bad = entries.find((entry) => !isProxyAddress(entry));
  if (bad !== undefined) {
    throw new ConfigError(
      `TRUST_PROXY must be false, a number of proxy hops (e.g. 1) or a comma-separated list of proxy addresses/CIDRs (e.g. 10.0.0.0/8,127.0.0.1); "${bad}" is none of these`,
    );
  }
  return entries;
}

/** Parses `DATABASE_URL`: empty means ./data/service.db; `sqlite:PATH`, a bare path, or `postgres(ql)://…`. */
export function parseDatabaseUrl(raw: string | undefined, cwd: string = process.cwd()): DatabaseConfig {
  if (raw === undefined || raw.trim() === '') {
    return { kind: 'sqlite', path: path.resolve(cwd, 'data', 'service.db') };
  }
  const value = raw.trim();
  if (/^postgres(ql)?:\/\//i.test(value)) {
    return { kind: 'postgres', url: value, schema: null, poolMax: 10, statementTimeoutMs: 5000, queryTimeoutMs: 6000, connectTimeoutMs: 5000 };
  }
  if (value.startsWith('sqlite:')) {
    const file = value.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (file === '') throw new ConfigError('DATABASE_URL "sqlite:" needs a path, e.g. sqlite:./data/service.db');
    return { kind: 'sqlite', path: file === ':memory:' ? file : path.resolve(cwd, file) };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    throw new ConfigError(`DATABASE_URL scheme is not supported: "${value.split(':')[0]}" (use sqlite:PATH or postgres://…)`);
  }
  return { kind: 'sqlite', path: path.resolve(cwd, value) };
}

function databaseConfig(env: NodeJS.ProcessEnv): DatabaseConfig {
  const database = parseDatabaseUrl(env.DATABASE_URL);
  if (database.kind !== 'postgres') return database;
  const schema = env.DATABASE_SCHEMA?.trim() || null;
  if (schema !== null && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new ConfigError(`DATABASE_SCHEMA must be a lowercase SQL identifier, got "${schema}"`);
  }
  const statementTimeoutMs = integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 5000, 100, 3_600_000);
  return {
    ...database,
    schema,
    poolMax: integer(env, 'DATABASE_POOL_MAX', 10, 1, 1000),
    statementTimeoutMs,
    // Above the statement timeout, so a statement PostgreSQL cancels reports its own error first.
    queryTimeoutMs: integer(env, 'DATABASE_QUERY_TIMEOUT_MS', statementTimeoutMs + 1000, 100, 3_601_000),
    connectTimeoutMs: integer(env, 'DATABASE_CONNECT_TIMEOUT_MS', 5000, 100, 600_000),
  };
}

const REDIS_POLICIES = ['local', 'open', 'closed'] as const;

function redisConfig(env: NodeJS.ProcessEnv): Config['redis'] {
  const url = env.REDIS_URL?.trim();
  if (!url) return null;
  if (!/^rediss?:\/\//i.test(url)) throw new ConfigError(`REDIS_URL must start with redis:// or rediss://, got "${url}"`);
  const onFailure = (env.RATE_LIMIT_REDIS_FAILURE?.trim() || 'local') as (typeof REDIS_POLICIES)[number];
  if (!REDIS_POLICIES.includes(onFailure)) {
    throw new ConfigError(`RATE_LIMIT_REDIS_FAILURE must be one of ${REDIS_POLICIES.join(', ')}, got "${onFailure}"`);
  }
  return { url, onFailure };
}

/** The model used when neither the agent nor LLM_MODEL (or the saved settings) name one. */
export const DEFAULT_MODELS: Record<LlmProvider, string> = { builtin: 'builtin', openai: 'gpt-4o-mini', anthropic: 'claude-haiku-4-5' };

function httpUrl(env: NodeJS.ProcessEnv, name: string): string | null {
  const raw = env[name]?.trim();
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}

// The variables that choose a provider (not the tuning ones such as LLM_TIMEOUT_MS, which apply to any provider).
const LLM_PROVIDER_VARIABLES = ['LLM_PROVIDER', 'LLM_MODEL', 'OPENAI_BASE_URL', 'OPENAI_API_KEY', 'ANTHROPIC_BASE_URL', 'ANTHROPIC_API_KEY'];

function llmConfig(env: NodeJS.ProcessEnv): LlmConfig {
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

/** Shortest AUDIT_SIGNING_KEY accepted: 32 characters (`openssl rand -hex 32` gives 64). */
export const AUDIT_SIGNING_KEY_MIN_LENGTH = 32;

function auditSigningKey(env: NodeJS.ProcessEnv): string | null {
  const key = env.AUDIT_SIGNING_KEY?.trim();
  if (!key) return null;
  if (key.length < AUDIT_SIGNING_KEY_MIN_LENGTH) {
    throw new ConfigError(`AUDIT_SIGNING_KEY must be at least ${AUDIT_SIGNING_KEY_MIN_LENGTH} characters (e.g. the output of \`openssl rand -hex 32\`), got ${key.length}`);
  }
  return key;
}

function booleanFlag(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = env[name]?.trim().toLowerCase() ?? '';
  if (raw === '' || ['false', '0', 'no', 'off'].includes(raw)) return false;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

function sourcesConfig(env: NodeJS.ProcessEnv): SourcesConfig {
  const maxPages = integer(env, 'SOURCE_MAX_PAGES', 500, 1, 100_000);
  return {
    maxFileBytes: integer(env, 'SOURCE_MAX_FILE_MB', 20, 1, 1024) * 1024 * 1024,
    maxPages,
    crawlDefaults: { maxPages: Math.min(50, maxPages), maxDepth: 3 },
    allowPrivateHosts: booleanFlag(env, 'OUTBOUND_ALLOW_PRIVATE_HOSTS'),
    fetchTimeoutMs: integer(env, 'SOURCE_FETCH_TIMEOUT_MS', 15_000, 100, 600_000),
    maxResponseBytes: integer(env, 'SOURCE_MAX_RESPONSE_MB', 10, 1, 1024) * 1024 * 1024,
    maxRedirects: integer(env, 'SOURCE_MAX_REDIRECTS', 5, 0, 20),
    ingestConcurrency: integer(env, 'INGEST_CONCURRENCY', 1, 1, 16),
    embeddings: embeddingsConfig(env),
  };
}

const DEFAULT_RETRY_SCHEDULE = '5,300,1800,7200,18000,36000,50400,72000,86400';

function webhooksConfig(env: NodeJS.ProcessEnv): WebhooksConfig {
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

function mailConfig(env: NodeJS.ProcessEnv): MailConfig | null {
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

/** Reads the configuration from the environment. The only place in the code that reads `process.env`. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST?.trim() || '0.0.0.0';
  const logLevel = (env.LOG_LEVEL?.trim() || 'info') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const shownHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  const publicUrl = (env.PUBLIC_URL?.trim() || `http://${shownHost}:${port}`).replace(/\/+$/, '');
  return {
    port,
    host,
    logLevel,
    database: databaseConfig(env),
    publicUrl,
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    trustProxy: trustProxyConfig(env),
    cacheMaxBytes: integer(env, 'CACHE_MAX_MB', 32, 0, 4096) * 1024 * 1024,
    failedAuthPerIpPerMinute: integer(env, 'FAILED_AUTH_PER_IP_PER_MINUTE', 120, 1, 1_000_000_000),
    rateLimit: {
      keyPerMinute: integer(env, 'RATE_LIMIT_KEY_PER_MINUTE', 600, 1, 1_000_000_000),
      workspacePerMinute: integer(env, 'RATE_LIMIT_WORKSPACE_PER_MINUTE', 1800, 1, 1_000_000_000),
    },
    signInLimit: {
      perIpAndEmail: integer(env, 'SIGN_IN_ATTEMPTS_PER_15_MINUTES', 10, 1, 1_000_000),
      perIp: integer(env, 'SIGN_IN_ATTEMPTS_PER_IP_PER_15_MINUTES', 100, 1, 1_000_000),
    },
    signup: signupPolicy(env),
    invitationTtlDays: integer(env, 'INVITATION_TTL_DAYS', 7, 1, 365),
    redis: redisConfig(env),
    llm: llmConfig(env),
    llmEnvironment: LLM_PROVIDER_VARIABLES.filter((name) => Boolean(env[name]?.trim())),
    audit: { signingKey: auditSigningKey(env) },
    sources: sourcesConfig(env),
    webhooks: webhooksConfig(env),
    mail: mailConfig(env),
    secretKey: parseSecretKey(env.SECRET_KEY),
    widget: {
      ratePerIpPerMinute: integer(env, 'WIDGET_RATE_PER_IP_PER_MINUTE', 60, 1, 1_000_000_000),
      messagesPerConversationPerMinute: integer(env, 'WIDGET_RATE_PER_CONVERSATION_PER_MINUTE', 20, 1, 1_000_000_000),
    },
    runtime: {
      idleCloseMinutes: integer(env, 'CONVERSATION_IDLE_CLOSE_MINUTES', 30, 0, 525_600),
      pollIntervalMs: integer(env, 'REPLY_POLL_INTERVAL_MS', 400, 10, 60_000),
      leaseMs: integer(env, 'REPLY_LEASE_MS', 30_000, 500, 3_600_000),
      replyConcurrency: integer(env, 'REPLY_CONCURRENCY', 4, 1, 1_000),
      replyDelayMs: integer(env, 'REPLY_DELAY_MS', 0, 0, 3_600_000),
    },
  };
}
