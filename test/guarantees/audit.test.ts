import { sql } from 'kysely';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKeySecret } from '../../src/lib/api-key-format.js';
import { systemContext } from '../../src/lib/actor.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { makeChatbot, makeConversation, makeLead } from '../helpers/factories.js';
import { cli } from '../helpers/processes.js';
import { auditEvents, expectProblem, failInserts, send, testClock } from './support.js';

const UA = 'guarantees-suite/1.0';

/** The one event a write appended: the events after `before` must be exactly one. */
async function onlyNewEvent(t: TestApp, tenant: Tenant, before: number) {
  const events = await auditEvents(t.app, tenant.workspaceId);
  expect(events).toHaveLength(before + 1);
  return events[0]!;
}

function expectRequestFacts(event: Awaited<ReturnType<typeof onlyNewEvent>>, response: LightMyRequestResponse, tenant: Tenant, idempotencyKey: string | null) {
  expect(event.actor).toEqual({ type: 'api_key', id: tenant.keyId, name: 'test key' });
  expect(event.actor.id).toMatch(/^key_/);
  expect(event.request_id).toBe(response.headers['request-id']);
  expect(event.idempotency_key).toBe(idempotencyKey);
  expect(event.ip).toBe('127.0.0.1');
  expect(event.user_agent).toBe(UA);
  expect(event.workspace_id).toBe(tenant.workspaceId);
}

describe('audit log: one event per successful write', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({}, { replyWorker: false }); // counts audit events exactly: no agent answers in the background
  });
  afterAll(() => t.close());

  const count = async (tenant: Tenant) => (await auditEvents(t.app, tenant.workspaceId)).length;

  it('chatbot.created and chatbot.updated (only the changed fields)', async () => {
    const tenant = await t.tenant();
    let before = await count(tenant);
    const created = await tenant.request('POST', '/api/v1/chatbots', { name: 'Bot', instructions: 'Help.' }, { 'idempotency-key': 'bot-1', 'user-agent': UA });
    expect(created.statusCode).toBe(201);
    const bot = created.json();
    const event = await onlyNewEvent(t, tenant, before);
    expect(event.action).toBe('chatbot.created');
    expect(event.target).toEqual({ type: 'chatbot', id: bot.id });
    expect(event.changes.name).toEqual({ before: null, after: 'Bot' });
    expect(event.changes.status).toEqual({ before: null, after: 'draft' });
    expectRequestFacts(event, created, tenant, 'bot-1');

    before = await count(tenant);
    const patched = await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { status: 'active' }, { 'user-agent': UA });
    expect(patched.statusCode, patched.body).toBe(200);
    const update = await onlyNewEvent(t, tenant, before);
    expect(update.action).toBe('chatbot.updated');
    expect(update.target).toEqual({ type: 'chatbot', id: bot.id });
    expect(update.changes).toEqual({
      status: { before: 'draft', after: 'active' },
      published_at: { before: null, after: patched.json().published_at },
    });
    expectRequestFacts(update, patched, tenant, null);
  });

  it('lead.created and lead.updated', async () => {
    const tenant = await t.tenant();
    let before = await count(tenant);
    // A client's Request-Id is echoed and recorded; X-Forwarded-For is not trusted by default (TRUST_PROXY off).
    const headers = { 'user-agent': UA, 'request-id': 'client-req-42', 'x-forwarded-for': '203.0.113.9' };
    const created = await tenant.request('POST', '/api/v1/leads', { name: 'Ada', email: 'ada@example.com' }, headers);
    expect(created.statusCode).toBe(201);
    expect(created.headers['request-id']).toBe('client-req-42');
    const lead = created.json();
    const event = await onlyNewEvent(t, tenant, before);
    expect(event.action).toBe('lead.created');
    expect(event.target).toEqual({ type: 'lead', id: lead.id });
    expect(event.changes.email).toEqual({ before: null, after: 'ada@example.com' });
    // A creation records exactly the fields that are set, each from null.
    const setFields = Object.keys(lead).filter((field) => !['id', 'object', 'created_at', 'updated_at'].includes(field) && lead[field] !== null);
    expect(Object.keys(event.changes).sort()).toEqual(expect.arrayContaining(['email', 'name', 'status']));
    expect(Object.entries(event.changes).every(([field, change]) => setFields.includes(field) && change.before === null)).toBe(true);
    expectRequestFacts(event, created, tenant, null);
    expect(event.request_id).toBe('client-req-42');

    before = await count(tenant);
    const patched = await tenant.request('PATCH', `/api/v1/leads/${lead.id}`, { status: 'qualified' }, { 'user-agent': UA });
    expect(patched.statusCode).toBe(200);
    const update = await onlyNewEvent(t, tenant, before);
    expect(update.action).toBe('lead.updated');
    expect(update.target).toEqual({ type: 'lead', id: lead.id });
    expect(update.changes).toEqual({ status: { before: 'new', after: 'qualified' } });
    expectRequestFacts(update, patched, tenant, null);
  });

  it('message.created, with the Idempotency-Key recorded', async () => {
    const tenant = await t.tenant();
    const conversation = await makeConversation(t.app, tenant);
    const before = await count(tenant);
    const sent = await tenant.request('POST', `/api/v1/conversations/${conversation.id}/messages`, { content: 'Hi' }, { 'idempotency-key': '"msg-1"', 'user-agent': UA });
    expect(sent.statusCode).toBe(201);
    const event = await onlyNewEvent(t, tenant, before);
    expect(event.action).toBe('message.created');
    expect(event.target).toEqual({ type: 'message', id: sent.json().id });
    expect(event.changes.content).toEqual({ before: null, after: 'Hi' });
    expectRequestFacts(event, sent, tenant, 'msg-1');
  });

  it('writes nothing for refused requests (400/401/403/404/409/412/422) or idempotent replays', async () => {
    const tenant = await t.tenant();
    const bot = await makeChatbot(tenant);
    const lead = await makeLead(tenant);
    const reader = await tenant.newKey(['leads:read']);
    const revoked = await tenant.newKey(['leads:write']);
    await t.app.services.apiKeys.revoke(systemContext(tenant.workspaceId), revoked.id);
    expect((await tenant.request('POST', '/api/v1/leads', { email: 'x@example.com' }, { 'idempotency-key': 'once' })).statusCode).toBe(201);
    const before = await auditEvents(t.app, tenant.workspaceId);

    const refusals: [number, string, Promise<LightMyRequestResponse>][] = [
      [400, 'validation_failed', tenant.request('POST', '/api/v1/leads', { email: 'nope' })],
      [400, 'validation_failed', tenant.request('POST', '/api/v1/leads', { name: 'no contact' })],
      [400, 'validation_failed', tenant.request('PATCH', `/api/v1/leads/${lead.id}`, { email: null, phone: null })],
      [401, 'missing_api_key', send(t.app, null, 'POST', '/api/v1/leads', { email: 'y@example.com' })],
      [401, 'invalid_api_key', send(t.app, generateApiKeySecret(), 'POST', '/api/v1/leads', { email: 'y@example.com' })],
      [401, 'invalid_api_key', send(t.app, revoked.key, 'POST', '/api/v1/leads', { email: 'y@example.com' })],
      [403, 'insufficient_scope', send(t.app, reader.key, 'POST', '/api/v1/leads', { email: 'y@example.com' })],
      [404, 'not_found', tenant.request('PATCH', '/api/v1/leads/lead_01ARZ3NDEKTSV4RRFFQ69G5FAV', { status: 'contacted' })],
      [409, 'invalid_status_transition', tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { status: 'paused' })],
      [412, 'precondition_failed', tenant.request('PATCH', `/api/v1/leads/${lead.id}`, { status: 'contacted' }, { 'if-match': '"stale"' })],
      [422, 'idempotency_key_reused', tenant.request('POST', '/api/v1/leads', { email: 'z@example.com' }, { 'idempotency-key': 'once' })],
    ];
    for (const [status, code, pending] of refusals) expectProblem(await pending, status, code);
    const replay = await tenant.request('POST', '/api/v1/leads', { email: 'x@example.com' }, { 'idempotency-key': 'once' });
    expect(replay.headers['idempotent-replayed']).toBe('true');

    expect(await auditEvents(t.app, tenant.workspaceId)).toEqual(before);
    expect(await t.app.services.audit.verify(tenant.workspaceId)).toMatchObject({ ok: true, events: before.length });
  });

  it('a malformed API key gets a 401 problem (with WWW-Authenticate) and writes nothing', async () => {
    const tenant = await t.tenant();
    const before = await auditEvents(t.app, tenant.workspaceId);
    const refused = await send(t.app, 'wsk_bogus', 'POST', '/api/v1/leads', { email: 'malformed@example.com' });
    expect(await auditEvents(t.app, tenant.workspaceId)).toEqual(before);
    expectProblem(refused, 401, 'invalid_api_key');
    expect(refused.headers['www-authenticate']).toMatch(/^Bearer realm="api", error="invalid_token"/);
  });

  it.each([
    ['without an Idempotency-Key', {}],
    ['with an Idempotency-Key', { 'idempotency-key': 'audit-fails' }],
  ])('no write without its event: a failing audit insert fails the write too (%s)', async (_label, headers) => {
    const tenant = await t.tenant();
    const lead = await makeLead(tenant, { status: 'new' });
    const before = await auditEvents(t.app, tenant.workspaceId);
    const restore = await failInserts(t.app.database.db, 'audit_events');
    try {
      expectProblem(await tenant.request('POST', '/api/v1/leads', { email: 'lost@example.com' }, headers), 500, 'internal_error');
      expectProblem(await tenant.request('POST', '/api/v1/chatbots', { name: 'Lost' }, headers), 500, 'internal_error');
      expectProblem(await tenant.request('PATCH', `/api/v1/leads/${lead.id}`, { status: 'converted' }), 500, 'internal_error');
    } finally {
      await restore();
    }
    const leads = (await tenant.request('GET', '/api/v1/leads')).json().data as { id: string; status: string }[];
    expect(leads.map((l) => [l.id, l.status])).toEqual([[lead.id, 'new']]);
    expect((await tenant.request('GET', '/api/v1/chatbots')).json().data).toEqual([]);
    expect(await auditEvents(t.app, tenant.workspaceId)).toEqual(before);
    expect(await t.app.services.audit.verify(tenant.workspaceId)).toMatchObject({ ok: true });
  });

  it('keeps the chain sound under many concurrent writes from several keys', async () => {
    const tenant = await t.tenant();
    const keys = [tenant.key, (await tenant.newKey(['leads:write', 'chatbots:write'])).key, (await tenant.newKey(['leads:write', 'chatbots:write'])).key];
    const before = (await auditEvents(t.app, tenant.workspaceId)).length;
    const writes = Array.from({ length: 60 }, (_, i) => {
      const key = keys[i % keys.length]!;
      const headers: Record<string, string> = i % 2 ? { 'idempotency-key': `chain-${i}` } : {};
      return i % 3 === 0
        ? send(t.app, key, 'POST', '/api/v1/chatbots', { name: `Bot ${i}` }, headers)
        : send(t.app, key, 'POST', '/api/v1/leads', { email: `lead${i}@example.com` }, headers);
    });
    const responses = await Promise.all(writes);
    expect(responses.map((r) => r.statusCode)).toEqual(responses.map(() => 201));
    const events = await auditEvents(t.app, tenant.workspaceId);
    expect(events).toHaveLength(before + 60);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => events.length - i));
    expect(new Set(events.slice(0, 60).map((e) => e.target.id))).toEqual(new Set(responses.map((r) => r.json().id)));
    expect(await t.app.services.audit.verify(tenant.workspaceId)).toMatchObject({ ok: true, events: before + 60 });
  });

  it('verifies a live chain: writes that commit while it reads are not reported as a break', async () => {
    const tenant = await t.tenant();
    const before = (await auditEvents(t.app, tenant.workspaceId)).length;
    // Writers keep committing while verification runs over and over: each verification reads the events,
    // then the recorded head, and writes land in between.
    let writing = true;
    let written = 0;
    const writer = async (w: number) => {
      for (let i = 0; writing; i++) {
        expect((await send(t.app, tenant.key, 'POST', '/api/v1/leads', { email: `live${w}-${i}@example.com` })).statusCode).toBe(201);
        written += 1;
      }
    };
    const writers = Array.from({ length: 8 }, (_, w) => writer(w));
    const verifications = [];
    for (let i = 0; i < 150; i++) verifications.push(await t.app.services.audit.verify(tenant.workspaceId));
    writing = false;
    await Promise.all(writers);
    expect(verifications.filter((v) => !v.ok)).toEqual([]);
    expect(await t.app.services.audit.verify(tenant.workspaceId)).toMatchObject({ ok: true, events: before + written });
  });

  it('is append-only: the database refuses UPDATE and DELETE of events', async () => {
    const tenant = await t.tenant();
    await makeLead(tenant);
    const db = t.app.database.db;
    await expect(sql`update audit_events set action = 'lead.forged' where workspace_id = ${tenant.workspaceId}`.execute(db)).rejects.toThrow(/append-only/);
    await expect(sql`delete from audit_events where workspace_id = ${tenant.workspaceId}`.execute(db)).rejects.toThrow(/append-only/);
    const events = await auditEvents(t.app, tenant.workspaceId);
    expect(events.map((e) => e.action)).toContain('lead.created');
    expect(await t.app.services.audit.verify(tenant.workspaceId)).toMatchObject({ ok: true, events: events.length });
  });

  describe('CLI', { timeout: 60_000 }, () => {
    let tenant: Tenant;
    beforeAll(async () => {
      tenant = await t.tenant();
      const bot = await makeChatbot(tenant);
      await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { status: 'active' });
      for (let i = 0; i < 4; i++) await makeLead(tenant);
      await tenant.request('POST', '/api/v1/leads', { email: 'idem@example.com' }, { 'idempotency-key': 'cli-key', 'user-agent': UA });
    });

    it('audit list --limit 5 --json prints the newest five events, newest first, in the documented shape', async () => {
      const { code, stdout } = await cli(t.databaseEnv, 'audit', 'list', '--workspace', tenant.workspaceId, '--limit', '5', '--json');
      expect(code).toBe(0);
      const listed = JSON.parse(stdout) as Record<string, unknown>[];
      const newest = await t.app.services.audit.list(tenant.workspaceId, 5);
      expect(listed.map((e) => e.id)).toEqual(newest.map((e) => e.id));
      expect(listed).toHaveLength(5);
      const seqs = listed.map((e) => e.seq as number);
      expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
      for (const event of listed) {
        expect(event).toMatchObject({
          id: expect.stringMatching(/^evt_/),
          workspace_id: tenant.workspaceId,
          occurred_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
          action: expect.stringMatching(/^[a-z_]+\.[a-z_]+$/),
          actor: { type: expect.any(String), id: expect.any(String), name: expect.any(String) },
          target: { type: expect.any(String), id: expect.any(String) },
          changes: expect.any(Object),
        });
        for (const field of ['request_id', 'idempotency_key', 'ip', 'user_agent']) expect(event).toHaveProperty(field);
      }
      expect(listed[0]).toMatchObject({ action: 'lead.created', idempotency_key: 'cli-key', user_agent: UA, ip: '127.0.0.1', actor: { type: 'api_key', id: tenant.keyId } });
    });

    it('audit verify exits 0 with a one-line summary', async () => {
      const { code, stdout } = await cli(t.databaseEnv, 'audit', 'verify', '--workspace', tenant.workspaceId);
      expect(code).toBe(0);
      const events = (await auditEvents(t.app, tenant.workspaceId)).length;
      expect(stdout.trimEnd().split('\n')).toHaveLength(1);
      expect(stdout).toMatch(new RegExp(`intact: ${events} events`));
    });

    it('audit export prints JSON Lines, one per event, oldest first', async () => {
      const { code, stdout } = await cli(t.databaseEnv, 'audit', 'export', '--workspace', tenant.workspaceId);
      expect(code).toBe(0);
      const lines = stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { id: string; seq: number });
      const all = await auditEvents(t.app, tenant.workspaceId);
      expect(lines.map((e) => e.id)).toEqual([...all].reverse().map((e) => e.id));
      expect(lines.map((e) => e.seq)).toEqual(lines.map((_, i) => i + 1));
    });
  });
});

describe('audit log: rate-limited requests write nothing', () => {
  it('a 429 appends no event', async () => {
    const time = testClock('2030-01-01T00:00:00.000Z');
    const t = await createTestApp({ rateLimit: { keyPerMinute: 1, workspacePerMinute: 100 } }, { clock: time });
    try {
      const tenant = await t.tenant();
      expect((await tenant.request('POST', '/api/v1/leads', { email: 'first@example.com' })).statusCode).toBe(201);
      const before = await auditEvents(t.app, tenant.workspaceId);
      expectProblem(await tenant.request('POST', '/api/v1/leads', { email: 'second@example.com' }), 429, 'rate_limited');
      expectProblem(await tenant.request('POST', '/api/v1/chatbots', { name: 'Second' }, { 'idempotency-key': 'rl' }), 429, 'rate_limited');
      expect(await auditEvents(t.app, tenant.workspaceId)).toEqual(before);
    } finally {
      await t.close();
    }
  });
});
