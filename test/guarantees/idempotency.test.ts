import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { tryTransactionLock } from '../../src/db/dialect.js';
import { idempotencyLockName } from '../../src/http/idempotency.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { backend } from '../helpers/database.js';
import { makeConversation } from '../helpers/factories.js';
import { auditEvents, expectProblem, idempotencyRows, listCount, send, testClock, uniqueKey } from './support.js';

const HOUR = 3_600_000;

interface PostCase {
  name: string;
  action: string;
  /** Prepares what the POST needs; returns its url, a body, the list url, and an optional modification. */
  setup(t: TestApp, tenant: Tenant): Promise<{ url: string; body: () => Record<string, unknown>; list: string; modify?: (id: string) => Promise<void> }>;
}

const CASES: PostCase[] = [
  {
    name: 'POST /api/v1/chatbots',
    action: 'chatbot.created',
    setup: async (_t, tenant) => ({
      url: '/api/v1/chatbots',
      body: () => ({ name: 'Support agent', instructions: 'Answer politely.' }),
      list: '/api/v1/chatbots',
      modify: async (id) => {
        const patched = await tenant.request('PATCH', `/api/v1/chatbots/${id}`, { name: 'Renamed agent' });
        expect(patched.statusCode, patched.body).toBe(200);
      },
    }),
  },
  {
    name: 'POST /api/v1/leads',
    action: 'lead.created',
    setup: async (_t, tenant) => ({
      url: '/api/v1/leads',
      body: () => ({ name: 'Grace', email: 'grace@example.com' }),
      list: '/api/v1/leads',
      modify: async (id) => {
        const patched = await tenant.request('PATCH', `/api/v1/leads/${id}`, { status: 'contacted', company: 'Navy' });
        expect(patched.statusCode, patched.body).toBe(200);
      },
    }),
  },
  {
    name: 'POST /api/v1/conversations/{id}/messages',
    action: 'message.created',
    setup: async (t, tenant) => {
      const conversation = await makeConversation(t.app, tenant);
      const url = `/api/v1/conversations/${conversation.id}/messages`;
      return { url, body: () => ({ content: 'Hello, is anyone there?' }), list: url };
    },
  },
];


// The writes the requests made: the agent's own reply to a message (actor `system`) may land at any moment.
async function eventsFor(t: TestApp, tenant: Tenant, action: string) {
  return (await auditEvents(t.app, tenant.workspaceId)).filter((e) => e.action === action && e.actor.type !== 'system');
}

describe('idempotency of every POST', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  describe.each(CASES)('$name', (c) => {
    it('replays the identical status, body and Location with Idempotent-Replayed, and writes once', async () => {
      const tenant = await t.tenant();
      const post = await c.setup(t, tenant);
      const key = uniqueKey();
      const first = await tenant.request('POST', post.url, post.body(), { 'idempotency-key': key });
      expect(first.statusCode, first.body).toBe(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const id = (first.json() as { id: string }).id;
      if (post.modify) await post.modify(id);

      const replay = await tenant.request('POST', post.url, post.body(), { 'idempotency-key': key });
      expect(replay.statusCode).toBe(201);
      expect(replay.payload).toBe(first.payload);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.headers.location).toBeDefined();
      expect(replay.headers.location).toBe(first.headers.location);
      expect(replay.headers['content-type']).toBe(first.headers['content-type']);

      expect(await listCount(tenant, post.list)).toBe(1);
      const events = await eventsFor(t, tenant, c.action);
      expect(events.map((e) => e.target.id)).toEqual([id]);
    });

    it('creates exactly one resource from 50 concurrent POSTs with one key', async () => {
      const tenant = await t.tenant();
      const post = await c.setup(t, tenant);
      const key = uniqueKey('burst');
      const responses = await Promise.all(
        Array.from({ length: 50 }, () => tenant.request('POST', post.url, post.body(), { 'idempotency-key': key })),
      );
      const originals = responses.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined);
      expect(originals).toHaveLength(1);
      const original = originals[0]!;
      for (const response of responses) {
        if (response === original) continue;
        if (response.statusCode === 201) {
          expect(response.headers['idempotent-replayed']).toBe('true');
          expect(response.payload).toBe(original.payload);
        } else {
          expectProblem(response, 409, 'idempotency_key_in_use');
        }
      }
      expect(await listCount(tenant, post.list)).toBe(1);
      expect(await eventsFor(t, tenant, c.action)).toHaveLength(1);
    });

    it('refuses the same key with a different body (422) and stores nothing new', async () => {
      const tenant = await t.tenant();
      const post = await c.setup(t, tenant);
      const key = uniqueKey();
      const first = await tenant.request('POST', post.url, post.body(), { 'idempotency-key': key });
      expect(first.statusCode).toBe(201);
      const other = { ...post.body(), ...(c.action === 'message.created' ? { content: 'Different' } : { name: 'Different' }) };
      expectProblem(await tenant.request('POST', post.url, other, { 'idempotency-key': key }), 422, 'idempotency_key_reused');
      expect(await listCount(tenant, post.list)).toBe(1);
      expect(await eventsFor(t, tenant, c.action)).toHaveLength(1);
    });
  });

  it('refuses the same key on a different path (422)', async () => {
    const tenant = await t.tenant();
    const key = uniqueKey();
    const body = { name: 'Same', email: 'same@example.com' };
    expect((await tenant.request('POST', '/api/v1/leads', body, { 'idempotency-key': key })).statusCode).toBe(201);
    expectProblem(await tenant.request('POST', '/api/v1/chatbots', { name: 'Same' }, { 'idempotency-key': key }), 422, 'idempotency_key_reused');
    expect(await listCount(tenant, '/api/v1/chatbots')).toBe(0);
  });

  it('scopes keys per API key: another key of the workspace creates a second resource', async () => {
    const tenant = await t.tenant();
    const second = await tenant.newKey(['leads:write', 'leads:read']);
    const key = uniqueKey();
    const body = { name: 'Twin', email: 'twin@example.com' };
    const a = await tenant.request('POST', '/api/v1/leads', body, { 'idempotency-key': key });
    const b = await send(t.app, second.key, 'POST', '/api/v1/leads', body, { 'idempotency-key': key });
    expect(a.statusCode).toBe(201);
    expect(b.statusCode).toBe(201);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
    expect(b.json().id).not.toBe(a.json().id);
    expect(await listCount(tenant, '/api/v1/leads')).toBe(2);
  });

  it('treats the quoted Structured-Field form as the same key', async () => {
    const tenant = await t.tenant();
    const base = uniqueKey('quoted');
    const body = { name: 'Quote', email: 'quote@example.com' };
    const plain = await tenant.request('POST', '/api/v1/leads', body, { 'idempotency-key': base });
    const quoted = await tenant.request('POST', '/api/v1/leads', body, { 'idempotency-key': `"${base}"` });
    expect(quoted.statusCode).toBe(201);
    expect(quoted.headers['idempotent-replayed']).toBe('true');
    expect(quoted.payload).toBe(plain.payload);
    // Escapes inside the quoted form: "a\"b\\c" names the key a"b\c.
    const escaped = await tenant.request('POST', '/api/v1/leads', body, { 'idempotency-key': `"${base}\\"x\\\\"` });
    expect(escaped.statusCode).toBe(201);
    const raw = await tenant.request('POST', '/api/v1/leads', body, { 'idempotency-key': `${base}"x\\` });
    expect(raw.headers['idempotent-replayed']).toBe('true');
    expect(raw.payload).toBe(escaped.payload);
    expect(await listCount(tenant, '/api/v1/leads')).toBe(2);
  });

  it('accepts a 255-character key', async () => {
    const tenant = await t.tenant();
    const key = 'k'.repeat(255);
    const response = await tenant.request('POST', '/api/v1/leads', { email: 'long@example.com' }, { 'idempotency-key': key });
    expect(response.statusCode, response.body).toBe(201);
    expect(await idempotencyRows(t.app, key)).toHaveLength(1);
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'x'.repeat(256)],
    ['non-ASCII', 'caf\u00e9'],
    ['a control character', 'a\u0001b'],
    ['a tab', 'a\tb'],
    ['an unterminated quote', '"abc'],
    ['an unescaped inner quote', '"a"b"'],
    ['a bad escape', '"a\\x"'],
    ['an empty quoted string', '""'],
    ['256 characters quoted', `"${'y'.repeat(256)}"`],
  ])('refuses an invalid key (%s) with 400 and stores nothing', async (_label, key) => {
    const tenant = await t.tenant();
    const response = await tenant.request('POST', '/api/v1/leads', { email: 'bad-key@example.com' }, { 'idempotency-key': key });
    const problem = expectProblem(response, 400, 'invalid_request');
    expect(problem.errors).toEqual([expect.objectContaining({ parameter: 'Idempotency-Key' })]);
    expect(await listCount(tenant, '/api/v1/leads')).toBe(0);
    const rows = await t.app.database.db.selectFrom('idempotency_records').selectAll().where('api_key_id', '=', tenant.keyId).execute();
    expect(rows).toEqual([]);
  });
});

describe('the 24-hour window', () => {
  const time = testClock('2030-01-01T00:00:00.000Z');
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({}, { clock: time });
  });
  afterAll(() => t.close());

  it('replays until the window ends, then frees the key for a new request', async () => {
    const tenant = await t.tenant();
    const key = uniqueKey('window');
    const body = { name: 'Window', email: 'window@example.com' };
    const start = time.ms;
    const first = await tenant.request('POST', '/api/v1/leads', body, { 'idempotency-key': key });
    expect(first.statusCode).toBe(201);

    time.set(start + 23 * HOUR + 59 * 60_000);
    const late = await tenant.request('POST', '/api/v1/leads', body, { 'idempotency-key': key });
    expect(late.headers['idempotent-replayed']).toBe('true');
    expect(late.payload).toBe(first.payload);
    time.set(start + 24 * HOUR - 1);
    expect((await tenant.request('POST', '/api/v1/leads', body, { 'idempotency-key': key })).headers['idempotent-replayed']).toBe('true');

    time.set(start + 24 * HOUR + 1);
    const fresh = await tenant.request('POST', '/api/v1/leads', body, { 'idempotency-key': key });
    expect(fresh.statusCode).toBe(201);
    expect(fresh.headers['idempotent-replayed']).toBeUndefined();
    expect(fresh.json().id).not.toBe(first.json().id);
    expect(await listCount(tenant, '/api/v1/leads')).toBe(2);
    // The expired record was replaced by the fresh one.
    const rows = await idempotencyRows(t.app, key);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.created_at).toBe(new Date(start + 24 * HOUR + 1).toISOString());
    expect(rows[0]!.response_body).toBe(fresh.payload);
    // And the new record is replayed from now on.
    const again = await tenant.request('POST', '/api/v1/leads', body, { 'idempotency-key': key });
    expect(again.payload).toBe(fresh.payload);
    expect(again.headers['idempotent-replayed']).toBe('true');
  });

  it.runIf(backend === 'postgres')('answers 409 with Retry-After while another transaction holds the key, and runs the retry once it is free', async () => {
    const tenant = await t.tenant();
    const key = uniqueKey('inflight');
    const body = { email: 'inflight@example.com' };
    // The lock a request in flight on another instance holds (released by the database when it ends or dies).
    await t.app.database.db
      .transaction()
      .execute(async (trx) => {
        expect(await tryTransactionLock(trx, idempotencyLockName(tenant.keyId, key))).toBe(true);
        const busy = await tenant.request('POST', '/api/v1/leads', body, { 'idempotency-key': key });
        expectProblem(busy, 409, 'idempotency_key_in_use');
        expect(busy.headers['retry-after']).toBe('1');
        throw new Error('the holder dies');
      })
      .catch((error: Error) => expect(error.message).toBe('the holder dies'));
    const retry = await tenant.request('POST', '/api/v1/leads', body, { 'idempotency-key': key });
    expect(retry.statusCode, retry.body).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    const replay = await tenant.request('POST', '/api/v1/leads', body, { 'idempotency-key': key });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.payload).toBe(retry.payload);
    expect(await listCount(tenant, '/api/v1/leads')).toBe(1);
  });

  it('sweeps expired records when an app starts, keeping live ones', async () => {
    const tenant = await t.tenant();
    const oldKey = uniqueKey('old');
    const liveKey = uniqueKey('live');
    const start = time.ms;
    expect((await tenant.request('POST', '/api/v1/leads', { email: 'old@example.com' }, { 'idempotency-key': oldKey })).statusCode).toBe(201);
    time.set(start + 12 * HOUR);
    expect((await tenant.request('POST', '/api/v1/leads', { email: 'live@example.com' }, { 'idempotency-key': liveKey })).statusCode).toBe(201);
    time.set(start + 24 * HOUR + 1);
    const restarted = await buildApp(t.config, { clock: time });
    try {
      await restarted.ready();
      expect(await idempotencyRows(restarted, oldKey)).toEqual([]);
      expect(await idempotencyRows(restarted, liveKey)).toHaveLength(1);
      const expired = await restarted.database.db
        .selectFrom('idempotency_records')
        .select('idempotency_key')
        .where('expires_at', '<=', new Date(time.ms).toISOString())
        .execute();
      expect(expired).toEqual([]);
    } finally {
      await restarted.close();
    }
  });
});
