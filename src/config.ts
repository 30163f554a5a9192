import { isIP } from 'node:net';
import path from 'node:path';
import { parseSecretKey } from './modules/provider-settings/crypto.js';
import { LLM_PROVIDER_VARIABLES, llmConfig, mailConfig, sourcesConfig, webhooksConfig, type LlmConfig, type MailConfig, type SourcesConfig, type WebhooksConfig } from './config/integrations.js';
import { ConfigError, integer } from './config/values.js';

// The pieces live in src/config/ (variable readers, integrations); importers keep reading them from here.
export { DEFAULT_MODELS, LLM_PROVIDERS, type EmbeddingsConfig, type LlmConfig, type LlmProvider, type MailConfig, type SourcesConfig, type WebhooksConfig } from './config/integrations.js';
export { ConfigError } from './config/values.js';

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
  /**
   * Days finished rows are kept before the periodic sweep deletes them (src/modules/retention): sent and
   * failed emails (MAIL_RETENTION_DAYS), succeeded and failed webhook deliveries with their attempts
   * (WEBHOOK_LOG_RETENTION_DAYS). Apart from `mail`: rows left from when mail was on are deleted too.
   */
  retention: { mailDays: number; webhookLogDays: number };
  /** Mail that visitors cause (new leads, requests for a person): per workspace per hour (MAIL_NOTIFY_PER_HOUR), then one digest. */
  notifications: { mailPerHour: number };
  /**
   * Live event streams (SSE): open at once per client IP, IPv6 grouped by /64 (STREAMS_PER_IP), and per
   * conversation (STREAMS_PER_CONVERSATION); each is closed after STREAM_MAX_MINUTES (the client resumes with Last-Event-ID).
   */
  streams: { perIp: number; perConversation: number; maxMs: number };
  /** SECRET_KEY: the AES-256 key that encrypts secrets stored in the database (provider API keys). Null: unset. */
  secretKey: Buffer | null;
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

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

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
    retention: {
      mailDays: integer(env, 'MAIL_RETENTION_DAYS', 7, 1, 3650),
      webhookLogDays: integer(env, 'WEBHOOK_LOG_RETENTION_DAYS', 30, 1, 3650),
    },
    secretKey: parseSecretKey(env.SECRET_KEY),
    notifications: { mailPerHour: integer(env, 'MAIL_NOTIFY_PER_HOUR', 30, 1, 1_000_000) },
    streams: {
      perIp: integer(env, 'STREAMS_PER_IP', 20, 1, 100_000),
      perConversation: integer(env, 'STREAMS_PER_CONVERSATION', 5, 1, 1_000),
      maxMs: integer(env, 'STREAM_MAX_MINUTES', 60, 1, 1440) * 60_000,
    },
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
