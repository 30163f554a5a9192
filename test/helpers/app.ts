import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp, type AppOverrides } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { SCOPES, type Scope } from '../../src/http/scopes.js';
import { systemContext } from '../../src/lib/actor.js';
import { dropDatabase, freshDatabaseEnv } from './database.js';
import { send } from './http.js';

/** A real app on a fresh SQLite file, with helpers to make workspaces, keys and requests. */
export interface TestApp {
  app: FastifyInstance;
  config: Config;
  /** The app's database as environment variables (DATABASE_URL, DATABASE_SCHEMA, REDIS_URL), for child processes. */
  databaseEnv: Record<string, string>;
  /** A new workspace and a key with the given scopes (all by default). */
  tenant(scopes?: readonly Scope[]): Promise<Tenant>;
  close(): Promise<void>;
}

/** A workspace with one API key, and a request helper that sends that key. */
export interface Tenant {
  workspaceId: string;
  keyId: string;
  key: string;
  /** Another key of the same workspace. */
  newKey(scopes: readonly Scope[]): Promise<{ id: string; key: string }>;
  request(method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
}

/**
 * A configuration for tests on a fresh database: a temp SQLite file, or a fresh PostgreSQL schema (and
 * Redis) when TEST_DATABASE_URL (and TEST_REDIS_URL) are set. `databaseEnv` is the same database as
 * environment variables, for child processes (CLI, server).
 */
export function testConfig(overrides: Partial<Config> = {}): Config & { databaseEnv: Record<string, string> } {
  const databaseEnv = freshDatabaseEnv();
  const base = loadConfig({ LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', ...databaseEnv });
  // Budgets far above what a suite sends, unless a test is about rate limits (or failed authentications).
  // SIGNUP=open: suites sign up many accounts (test/dashboard/signup-policy.test.ts holds the first-only default).
  return { ...base, rateLimit: { keyPerMinute: 1_000_000, workspacePerMinute: 1_000_000 }, failedAuthPerIpPerMinute: 1_000_000, signup: 'open', ...overrides, databaseEnv };
}

/** Builds the real app (buildApp) on a fresh database. Close it in afterAll. */
export async function createTestApp(configOverrides: Partial<Config> = {}, overrides: AppOverrides = {}): Promise<TestApp> {
  const config = testConfig(configOverrides);
  const app = await buildApp(config, overrides);
  await app.ready();
  const { services } = app;

  async function tenant(scopes: readonly Scope[] = SCOPES): Promise<Tenant> {
    const workspace = await services.workspaces.create(`Test workspace ${Math.random().toString(36).slice(2, 8)}`);
    const ctx = systemContext(workspace.id, 'test');
    const newKey = async (keyScopes: readonly Scope[]) => {
      const { key, secret } = await services.apiKeys.create(ctx, { name: 'test key', scopes: [...keyScopes] });
      return { id: key.id, key: secret };
    };
    const first = await newKey(scopes);
    return {
      workspaceId: workspace.id,
      keyId: first.id,
      key: first.key,
      newKey,
      request: (method, url, body, headers = {}) => send(app, first.key, method, url, body, headers),
    };
  }

  return {
    app,
    config,
    databaseEnv: config.databaseEnv,
    tenant,
    close: async () => {
      await app.close();
      await dropDatabase(config.databaseEnv);
    },
  };
}
