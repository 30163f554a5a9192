import path from 'node:path';

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
  /** Trust X-Forwarded-* from a proxy in front (for client IPs in logs and audit). */
  trustProxy: boolean;
  /** Requests per rolling minute per API key and per workspace (continuous refill). */
  rateLimit: { keyPerMinute: number; workspacePerMinute: number };
  /** Bytes of the in-process read cache of API keys and agents (embedded SQLite only). */
  cacheMaxBytes: number;
  /** Failed authentications per client IP per minute before /api/v1 answers that IP 429 without a lookup. */
  failedAuthPerIpPerMinute: number;
  /** Dashboard sign-in attempts per 15 minutes, per IP and email and per IP (GCRA, same store as the API's). */
  signInLimit: { perIpAndEmail: number; perIp: number };
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
    /** Test hook (crash tests): the reply engine waits this long before answering. Not for production. */
    replyDelayMs: number;
  };
  /** How agents answer: the model provider and what goes into a prompt. */
  llm: LlmConfig;
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

function boolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

/** Parses `DATABASE_URL`: empty means ./data/service.db; `sqlite:PATH`, a bare path, or `postgres(ql)://…`. */
export function parseDatabaseUrl(raw: string | undefined, cwd: string = process.cwd()): DatabaseConfig {
  if (raw === undefined || raw.trim() === '') {
    return { kind: 'sqlite', path: path.resolve(cwd, 'data', 'service.db') };
  }
  const value = raw.trim();
  if (/^postgres(ql)?:\/\//i.test(value)) {
    return { kind: 'postgres', url: value, schema: null, poolMax: 10, statementTimeoutMs: 5000, connectTimeoutMs: 5000 };
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
  return {
    ...database,
    schema,
    poolMax: integer(env, 'DATABASE_POOL_MAX', 10, 1, 1000),
    statementTimeoutMs: integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 5000, 100, 3_600_000),
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

const DEFAULT_MODELS: Record<LlmProvider, string> = { builtin: 'builtin', openai: 'gpt-4o-mini', anthropic: 'claude-haiku-4-5' };

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
    trustProxy: boolean(env, 'TRUST_PROXY', false),
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
    redis: redisConfig(env),
    llm: llmConfig(env),
    widget: {
      ratePerIpPerMinute: integer(env, 'WIDGET_RATE_PER_IP_PER_MINUTE', 60, 1, 1_000_000_000),
      messagesPerConversationPerMinute: integer(env, 'WIDGET_RATE_PER_CONVERSATION_PER_MINUTE', 20, 1, 1_000_000_000),
    },
    runtime: {
      idleCloseMinutes: integer(env, 'CONVERSATION_IDLE_CLOSE_MINUTES', 30, 0, 525_600),
      pollIntervalMs: integer(env, 'REPLY_POLL_INTERVAL_MS', 400, 10, 60_000),
      leaseMs: integer(env, 'REPLY_LEASE_MS', 30_000, 500, 3_600_000),
      replyDelayMs: integer(env, 'REPLY_DELAY_MS', 0, 0, 3_600_000),
    },
  };
}
