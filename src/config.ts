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
    rateLimit: {
      keyPerMinute: integer(env, 'RATE_LIMIT_KEY_PER_MINUTE', 600, 1, 1_000_000_000),
      workspacePerMinute: integer(env, 'RATE_LIMIT_WORKSPACE_PER_MINUTE', 1800, 1, 1_000_000_000),
    },
    signInLimit: {
      perIpAndEmail: integer(env, 'SIGN_IN_ATTEMPTS_PER_15_MINUTES', 10, 1, 1_000_000),
      perIp: integer(env, 'SIGN_IN_ATTEMPTS_PER_IP_PER_15_MINUTES', 100, 1, 1_000_000),
    },
    redis: redisConfig(env),
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
