import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropDatabase, freshDatabaseEnv } from '../helpers/database.js';
import { cli, cliJson, cliTenant, startServer, type ServerProcess } from '../helpers/processes.js';

// Two server processes on one PostgreSQL schema and one Redis: everything that must be shared is.
// Runs in the PostgreSQL + Redis tier (TEST_DATABASE_URL and TEST_REDIS_URL set).

const KEY_LIMIT = 10;
const WORKSPACE_LIMIT = 15;

describe('two instances on one PostgreSQL and one Redis', () => {
  let env: Record<string, string>;
  let a: ServerProcess;
  let b: ServerProcess;

  beforeAll(async () => {
    if (!process.env.TEST_DATABASE_URL || !process.env.TEST_REDIS_URL) throw new Error('the multi-instance suite needs TEST_DATABASE_URL and TEST_REDIS_URL');
    env = freshDatabaseEnv();
    await cli(env, 'migrate'); // migrations run once, before the instances start
    const limits = { RATE_LIMIT_KEY_PER_MINUTE: String(KEY_LIMIT), RATE_LIMIT_WORKSPACE_PER_MINUTE: String(WORKSPACE_LIMIT) };
    [a, b] = await Promise.all([startServer({ ...env, ...limits }), startServer({ ...env, ...limits })]);
  });

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await dropDatabase(env);
  });

  const call = (server: ServerProcess, key: string, path: string, init: RequestInit = {}) =>
    fetch(`${server.url}/api/v1${path}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });

  it('shares the per-key budget: requests spread over both instances hit 429 at the configured total', async () => {
    const { key } = await cliTenant(env);
    const statuses: number[] = [];
    for (let i = 0; i < KEY_LIMIT + 4; i++) statuses.push((await call(i % 2 ? a : b, key, '/chatbots?limit=1')).status);
    expect(statuses.slice(0, KEY_LIMIT)).toEqual(Array(KEY_LIMIT).fill(200));
    expect(statuses.slice(KEY_LIMIT)).toEqual(Array(4).fill(429));
    const refused = await call(a, key, '/chatbots');
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { 'violated-policies': string[] })['violated-policies']).toEqual(['key']);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('shares the per-workspace budget across keys and instances', async () => {
    const tenant = await cliTenant(env);
    const second = await cliJson<{ key: string }>(env, 'key', 'create', '--workspace', tenant.workspaceId, '--scopes', 'all');
    const keys = [tenant.key, second.key];
    const statuses: number[] = [];
    for (let i = 0; i < WORKSPACE_LIMIT + 3; i++) statuses.push((await call(i % 2 ? a : b, keys[Math.floor(i / 2) % 2]!, '/leads?limit=1')).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(WORKSPACE_LIMIT);
    expect(statuses.slice(WORKSPACE_LIMIT)).toEqual([429, 429, 429]);
    const refused = await call(b, keys[0]!, '/leads');
    expect(((await refused.json()) as { 'violated-policies': string[] })['violated-policies']).toContain('workspace');
  });

  it('creates one resource for one Idempotency-Key sent concurrently to both instances, and replays it on either', async () => {
    const { key } = await cliTenant(env);
    const body = JSON.stringify({ email: 'same@example.com', name: 'Once' });
    const headers = { 'idempotency-key': 'multi-instance-1' };
    const responses = await Promise.all(
      Array.from({ length: 6 }, (_, i) => call(i % 2 ? a : b, key, '/leads', { method: 'POST', body, headers })),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    for (const refused of responses.filter((r) => r.status === 409)) expect(refused.headers.get('retry-after')).toBe('1');
    const created = await Promise.all(responses.filter((r) => r.status === 201).map((r) => r.text()));
    expect(new Set(created).size).toBe(1);
    const leads = (await (await call(a, key, '/leads')).json()) as { data: unknown[] };
    expect(leads.data).toHaveLength(1);
    const original = created[0]!;
    for (const server of [a, b]) {
      const replay = await call(server, key, '/leads', { method: 'POST', body, headers });
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(await replay.text()).toBe(original);
    }
  });

  it('refuses a revoked key on both instances on the very next request', async () => {
    const tenant = await cliTenant(env);
    expect((await call(a, tenant.key, '/chatbots')).status).toBe(200);
    expect((await call(b, tenant.key, '/chatbots')).status).toBe(200);
    const revoked = await cli(env, 'key', 'revoke', tenant.keyId);
    expect(revoked.code).toBe(0);
    for (const server of [b, a]) {
      const response = await call(server, tenant.key, '/chatbots');
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toContain('invalid_token');
    }
  });

  it('keeps one valid audit chain under concurrent writes on both instances', async () => {
    const tenant = await cliTenant(env);
    const writes = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        call(i % 2 ? a : b, tenant.key, i % 3 ? '/leads' : '/chatbots', {
          method: 'POST',
          body: JSON.stringify(i % 3 ? { email: `c${i}@example.com` } : { name: `Agent ${i}` }),
        }),
      ),
    );
    // Budgets are 10/15 per minute: some writes are refused with 429, which writes nothing.
    const ok = writes.filter((r) => r.status === 201).length;
    expect(ok).toBeGreaterThan(0);
    expect(writes.every((r) => r.status === 201 || r.status === 429)).toBe(true);
    const verify = await cli(env, 'audit', 'verify', '--workspace', tenant.workspaceId);
    expect(verify.code).toBe(0);
    const events = await cliJson<{ action: string }[]>(env, 'audit', 'list', '--workspace', tenant.workspaceId, '--limit', '1000');
    const writesAudited = events.filter((e) => e.action === 'lead.created' || e.action === 'chatbot.created');
    expect(writesAudited).toHaveLength(ok);
  });
});
