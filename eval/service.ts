/**
 * The service as the evaluation runs it: the real app built in-process on a fresh database (a temp SQLite
 * file, or a fresh schema of TEST_DATABASE_URL), listening on a local port, with one workspace and an API key
 * of every scope; and a small client of its public API (/api/v1) over HTTP.
 */
import type { AddressInfo } from 'node:net';
import { buildApp } from '../src/app.js';
import { loadConfig, type Config } from '../src/config.js';
import { SCOPES } from '../src/http/scopes.js';
import { systemContext } from '../src/lib/actor.js';
import { dropDatabase, freshDatabaseEnv } from '../test/helpers/database.js';

/** A source as the API presents it (the fields the evaluation reads). */
export interface SourceView {
  id: string;
  type: string;
  title: string | null;
  url: string | null;
  status: string;
  error: string | null;
  stats: { documents: number; chunks: number; failed_documents: number };
}

/** A client of the service's public API over HTTP, with one bearer key. */
export type Call = <T>(method: string, url: string, body?: unknown) => Promise<{ status: number; body: T }>;

/** A running evaluation service. */
export interface EvalService {
  app: Awaited<ReturnType<typeof buildApp>>;
  config: Config;
  workspaceId: string;
  call: Call;
  close(): Promise<void>;
}

/** The run chooses its own fresh database (a temp SQLite file, or a schema of TEST_DATABASE_URL). */
const DATABASE_VARIABLES = ['DATABASE_URL', 'DATABASE_SCHEMA', 'REDIS_URL'];

/** The environment without the named variables. */
export const without = (env: Record<string, string | undefined>, names: string[]) => Object.fromEntries(Object.entries(env).filter(([name]) => !names.includes(name)));

function apiClient(baseUrl: string, key: string): Call {
  return async function call<T>(method: string, url: string, body?: unknown): Promise<{ status: number; body: T }> {
    const isForm = body instanceof FormData;
    const response = await fetch(`${baseUrl}${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined && !isForm ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: isForm ? body : JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : null) as T };
  };
}

/**
 * Builds and starts the service on a fresh database, configured from `env` (EMBEDDINGS_*, LLM_*, …; the
 * database, listen address, rate limits and OUTBOUND_ALLOW_PRIVATE_HOSTS are the run's own).
 */
export async function startEvalService(env: Record<string, string | undefined>): Promise<EvalService> {
  const databaseEnv = freshDatabaseEnv();
  const config = loadConfig({
    LOG_LEVEL: 'warn',
    ...without(env, DATABASE_VARIABLES),
    ...databaseEnv,
    HOST: '127.0.0.1',
    PORT: '0',
    OUTBOUND_ALLOW_PRIVATE_HOSTS: 'true',
    RATE_LIMIT_KEY_PER_MINUTE: '1000000',
    RATE_LIMIT_WORKSPACE_PER_MINUTE: '1000000',
  });
  const app = await buildApp(config);
  try {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const workspace = await app.services.workspaces.create('Evaluation', 'eval');
    const { secret } = await app.services.apiKeys.create(systemContext(workspace.id, 'eval'), { name: 'evaluation', scopes: [...SCOPES] });
    return {
      app, config, workspaceId: workspace.id, call: apiClient(baseUrl, secret),
      close: async () => {
        await app.close();
        await dropDatabase(databaseEnv);
      },
    };
  } catch (error) {
    await app.close();
    await dropDatabase(databaseEnv);
    throw error;
  }
}

/** Sends a request that must answer `expected`, or throws with the problem the service sent. */
export async function expectStatus<T>(call: Call, expected: number, method: string, url: string, body?: unknown): Promise<T> {
  const response = await call<T>(method, url, body);
  if (response.status !== expected) throw new Error(`${method} ${url}: expected ${expected}, got ${response.status} ${JSON.stringify(response.body)}`);
  return response.body;
}

/** Every item of a cursor-paginated list. */
export async function listAll<T>(call: Call, url: string): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const separator = url.includes('?') ? '&' : '?';
    const page: { data: T[]; next_cursor: string | null } = await expectStatus(call, 200, 'GET', `${url}${separator}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    items.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return items;
}

/** Polls an agent's source list until every source is ready or failed (or the time is up: throws). */
export async function waitForSources(call: Call, sourcesUrl: string, timeoutMs: number, log: (line: string) => void): Promise<SourceView[]> {
  const deadline = Date.now() + timeoutMs;
  let lastLine = '';
  for (;;) {
    const sources = await listAll<SourceView>(call, sourcesUrl);
    const pending = sources.filter((source) => source.status !== 'ready' && source.status !== 'failed');
    if (pending.length === 0) return sources;
    const shown = pending.slice(0, 5).map((source) => `${source.type} ${source.status} ${source.stats.documents} documents`).join(', ');
    const line = `waiting for ${pending.length} of ${sources.length} sources: ${shown}${pending.length > 5 ? ', …' : ''}`;
    if (line !== lastLine) log(line);
    lastLine = line;
    if (Date.now() > deadline) throw new Error(`sources not ready after ${timeoutMs / 1000} s: ${line}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
