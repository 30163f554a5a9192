import fs from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../src/http/scopes.js';
import { systemContext } from '../../src/lib/actor.js';
import { generateApiKeySecret } from '../../src/lib/api-key-format.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { makeChatbot, makeConversation, makeLead } from '../helpers/factories.js';
import { expectProblem, OPERATIONS, send, type Fixtures } from './support.js';

// Authentication (401 with the bearer challenge), the full scope matrix (403 with required_scope),
// and keys stored only as hashes.

let current = Date.parse('2026-06-01T12:00:00.000Z');
const clock = { now: () => new Date(current), monotonicMs: () => performance.now() };
let t: TestApp;
let tenant: Tenant;
let fixtures: Fixtures;

beforeAll(async () => {
  t = await createTestApp({}, { clock });
  tenant = await t.tenant();
  const bot = await makeChatbot(tenant);
  const conversation = await makeConversation(t.app, tenant, bot.id);
  const lead = await makeLead(tenant);
  fixtures = { chatbotId: bot.id, conversationId: conversation.id, leadId: lead.id };
});
afterAll(() => t.close());

// The clock only moves forward, a millisecond per request at least, as a real one would.
function tick(ms = 1) {
  current += ms;
}

const get = (key: string | null, headers: Record<string, string> = {}) => {
  tick();
  return send(t.app, key, 'GET', '/api/v1/chatbots', undefined, headers);
};

function expectInvalidToken(response: Awaited<ReturnType<typeof get>>) {
  const problem = expectProblem(response, 401, 'invalid_api_key');
  const challenge = String(response.headers['www-authenticate']);
  expect(challenge).toMatch(/^Bearer realm="api"/);
  expect(challenge).toContain('error="invalid_token"');
  return problem;
}

describe('401: missing or bad keys', () => {
  it('no Authorization header: missing_api_key with WWW-Authenticate: Bearer realm="api" (no error)', async () => {
    const response = await get(null);
    expectProblem(response, 401, 'missing_api_key');
    expect(response.headers['www-authenticate']).toBe('Bearer realm="api"');
  });

  it('an Authorization header that is not a bearer token counts as missing', async () => {
    for (const authorization of ['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer ', tenant.key]) {
      const response = await get(null, { authorization });
      expectProblem(response, 401, 'missing_api_key');
      expect(response.headers['www-authenticate']).toBe('Bearer realm="api"');
    }
  });

  it('a malformed key: invalid_api_key with error="invalid_token"', async () => {
    for (const key of ['nope', 'wsk_short', `${tenant.key}x`, `sk_live_${'a'.repeat(38)}`]) {
      expectInvalidToken(await get(key));
    }
  });

  it('a key with a wrong checksum (one character changed) is refused', async () => {
    const last = tenant.key.at(-1) === 'A' ? 'B' : 'A';
    expectInvalidToken(await get(`${tenant.key.slice(0, -1)}${last}`));
  });

  it('a burst of malformed keys: every one is refused, and a valid key sent with them is served', async () => {
    const refusals = Array.from({ length: 40 }, (_, i) => get(`wsk_malformed${i}`));
    const valid = get(tenant.key);
    for (const response of await Promise.all(refusals)) expectInvalidToken(response);
    expect((await valid).statusCode).toBe(200);
  });

  it('a well-formed key that was never issued: invalid_api_key with error="invalid_token"', async () => {
    expectInvalidToken(await get(generateApiKeySecret()));
  });

  it('a revoked key works until revoked, then is refused on the next request', async () => {
    const key = await tenant.newKey(['chatbots:read']);
    expect((await get(key.key)).statusCode).toBe(200);
    await t.app.services.apiKeys.revoke(systemContext(tenant.workspaceId), key.id);
    const problem = expectInvalidToken(await get(key.key));
    expect(String(problem.detail)).toMatch(/revoked/i);
    // the other keys of the workspace still work
    expect((await get(tenant.key)).statusCode).toBe(200);
  });

  it('an expired key works until its expiry, then is refused', async () => {
    const { key, secret } = await t.app.services.apiKeys.create(systemContext(tenant.workspaceId), {
      name: 'short-lived',
      scopes: ['chatbots:read'],
      expiresInDays: 1,
    });
    expect(key.expires_at).toBe(new Date(current + 86_400_000).toISOString());
    expect((await get(secret)).statusCode).toBe(200);
    current = Date.parse(key.expires_at!) - 10;
    expect((await get(secret)).statusCode).toBe(200);
    current = Date.parse(key.expires_at!) + 1;
    const problem = expectInvalidToken(await get(secret));
    expect(String(problem.detail)).toMatch(/expired/i);
  });

  it('refuses before reading the body: a bad key on a write creates nothing', async () => {
    tick();
    const response = await send(t.app, generateApiKeySecret(), 'POST', '/api/v1/leads', { email: 'ghost@example.com' });
    expectInvalidToken(response);
    tick();
    const leads = await send(t.app, tenant.key, 'GET', '/api/v1/leads?email=ghost%40example.com');
    expect(leads.json().data).toEqual([]);
  });
});

describe('403: the scope matrix of the 13 operations', () => {
  const matrix = OPERATIONS.map((op) => [op.name, op] as const);

  it.each(matrix)('%s: every scope but the required one gets 403 insufficient_scope', async (_name, op) => {
    const key = await tenant.newKey(SCOPES.filter((s) => s !== op.scope));
    tick();
    const response = await send(t.app, key.key, op.method, op.url(fixtures), op.body?.(fixtures));
    const problem = expectProblem(response, 403, 'insufficient_scope');
    expect(problem.required_scope).toBe(op.scope);
    expect(problem).not.toHaveProperty('data');
    const challenge = String(response.headers['www-authenticate']);
    expect(challenge).toContain('error="insufficient_scope"');
    expect(challenge).toContain(`scope="${op.scope}"`);
  });

  it.each(matrix)('%s: a key holding only the required scope is let through', async (_name, op) => {
    const key = await tenant.newKey([op.scope]);
    tick();
    const response = await send(t.app, key.key, op.method, op.url(fixtures), op.body?.(fixtures));
    expect(response.statusCode, response.body).not.toBe(401);
    expect(response.statusCode, response.body).not.toBe(403);
    expect(response.statusCode, response.body).toBe(op.success);
  });

  it('the scope is checked before the resource: 403 even for an id that does not exist', async () => {
    const key = await tenant.newKey(['leads:read']);
    tick();
    const response = await send(t.app, key.key, 'GET', '/api/v1/chatbots/bot_01ARZ3NDEKTSV4RRFFQ69G5FAV');
    expect(expectProblem(response, 403, 'insufficient_scope').required_scope).toBe('chatbots:read');
  });

  it('a write refused for scope stores nothing', async () => {
    const key = await tenant.newKey(['chatbots:read']);
    tick();
    expectProblem(await send(t.app, key.key, 'POST', '/api/v1/chatbots', { name: 'Should not exist' }), 403, 'insufficient_scope');
    tick();
    const list = await send(t.app, tenant.key, 'GET', '/api/v1/chatbots?limit=100');
    expect(list.json().data.map((b: { name: string }) => b.name)).not.toContain('Should not exist');
  });

  it('list endpoints never answer 200 or an empty list to a key with the wrong scope', async () => {
    const lists = OPERATIONS.filter((op) => op.method === 'GET');
    for (const op of lists) {
      for (const other of SCOPES.filter((s) => s !== op.scope)) {
        const key = await tenant.newKey([other as Scope]);
        tick();
        const response = await send(t.app, key.key, 'GET', op.url(fixtures));
        expect(response.statusCode, `${op.name} with ${other}`).toBe(403);
        expect(response.json()).not.toHaveProperty('data');
        expect(response.json().required_scope).toBe(op.scope);
      }
    }
  });

  it('write scopes do not imply read scopes, nor read scopes write ones', async () => {
    const writer = await tenant.newKey(['chatbots:write', 'leads:write', 'messages:write']);
    const reader = await tenant.newKey(['chatbots:read', 'leads:read', 'conversations:read']);
    tick();
    expect((await send(t.app, writer.key, 'GET', '/api/v1/chatbots')).statusCode).toBe(403);
    tick();
    expect((await send(t.app, writer.key, 'GET', `/api/v1/leads/${fixtures.leadId}`)).statusCode).toBe(403);
    tick();
    expect((await send(t.app, reader.key, 'PATCH', `/api/v1/leads/${fixtures.leadId}`, { company: 'x' })).statusCode).toBe(403);
    tick();
    expect((await send(t.app, reader.key, 'POST', `/api/v1/conversations/${fixtures.conversationId}/messages`, { content: 'x' })).statusCode).toBe(403);
  });
});

describe('keys are stored hashed', () => {
  it('the secret never appears in the api_keys table, only a short display prefix', async () => {
    const { key, secret } = await t.app.services.apiKeys.create(systemContext(tenant.workspaceId), { name: 'hash check', scopes: ['leads:read'] });
    const rows = (await sql<Record<string, unknown>>`select * from api_keys`.execute(t.app.database.db)).rows;
    expect(rows.length).toBeGreaterThan(1);
    const row = rows.find((r) => r.id === key.id)!;
    expect(row).toBeDefined();
    const secrets = [secret, tenant.key];
    for (const r of rows) {
      for (const value of Object.values(r)) {
        for (const s of secrets) {
          expect(String(value)).not.toContain(s);
          expect(String(value)).not.toContain(s.slice(4, 30));
        }
      }
    }
    const typed = await t.app.database.db.selectFrom('api_keys').selectAll().where('id', '=', key.id).executeTakeFirstOrThrow();
    expect(typed.secret_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(typed.display_prefix.length).toBeLessThanOrEqual(12);
    expect(secret.startsWith(typed.display_prefix)).toBe(true);
  });

  it('the secret is nowhere in the database files', async () => {
    const { secret } = await t.app.services.apiKeys.create(systemContext(tenant.workspaceId), { name: 'file check', scopes: ['leads:read'] });
    const config = t.config.database;
    if (config.kind !== 'sqlite') return;
    const files = [config.path, `${config.path}-wal`].filter((f) => fs.existsSync(f));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const bytes = fs.readFileSync(file);
      expect(bytes.includes(Buffer.from(secret)), file).toBe(false);
      expect(bytes.includes(Buffer.from(tenant.key)), file).toBe(false);
    }
  });
});

describe('recording a key’s use', () => {
  const lastUsedAt = async (keyId: string) =>
    (await t.app.database.db.selectFrom('api_keys').select('last_used_at').where('id', '=', keyId).executeTakeFirstOrThrow()).last_used_at;

  it('records the first use, not every request within the minute, and the next use once a minute has passed', async () => {
    const { id, key } = await tenant.newKey(['chatbots:read']);
    expect(await lastUsedAt(id)).toBeNull();

    expect((await get(key)).statusCode).toBe(200);
    const first = await lastUsedAt(id);
    expect(first).toBe(new Date(current).toISOString());

    tick(30_000);
    expect((await get(key)).statusCode).toBe(200);
    expect((await get(key)).statusCode).toBe(200);
    expect(await lastUsedAt(id)).toBe(first);

    tick(31_000);
    expect((await get(key)).statusCode).toBe(200);
    expect(await lastUsedAt(id)).toBe(new Date(current).toISOString());
  });
});
