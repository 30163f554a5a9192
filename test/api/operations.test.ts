import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemContext } from '../../src/lib/actor.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { makeChatbot, makeConversation, makeLead } from '../helpers/factories.js';
import { expectProblem, expectSnakeCase, OPERATIONS, PREFIX, testClock, TIMESTAMP } from './support.js';

// The success path of each of the 13 operations: status, shape and headers. Filters are in
// operations-lists, analytics in operations-analytics, error statuses in operations-errors.

let t: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  t = await createTestApp({}, { clock: testClock(), replyWorker: false }); // exact fixtures: no agent answers appear in the background
  tenant = await t.tenant();
});
afterAll(() => t.close());

function expectRequestId(response: { headers: Record<string, unknown> }) {
  expect(response.headers['request-id']).toMatch(/^req_[0-9A-HJKMNP-TV-Z]{26}$/);
}


/** The distinct JSON pointers of a validation problem. */
function pointersOf(problem: Record<string, unknown>): string[] {
  return [...new Set((problem.errors as { pointer?: string }[]).map((e) => e.pointer ?? ''))];
}

describe('AI Agents (chatbots)', () => {
  it('POST /chatbots creates a draft: 201, Location, ETag, Request-Id, snake_case shape', async () => {
    const response = await tenant.request('POST', '/api/v1/chatbots', {
      name: 'Front desk',
      instructions: 'Be brief.',
      knowledge: [{ title: 'Hours', content: '9 to 5' }],
      metadata: { teamName: 'x' },
    });
    expect(response.statusCode).toBe(201);
    const bot = response.json();
    expect(bot.id).toMatch(PREFIX.chatbot);
    expect(bot).toMatchObject({
      object: 'chatbot',
      name: 'Front desk',
      status: 'draft',
      instructions: 'Be brief.',
      description: null,
      published_at: null,
      knowledge: [{ title: 'Hours', content: '9 to 5' }],
      lead_capture: { enabled: expect.any(Boolean), fields: expect.any(Array) },
      allowed_origins: [],
      metadata: { teamName: 'x' },
    });
    expect(bot.created_at).toMatch(TIMESTAMP);
    expect(bot.updated_at).toBe(bot.created_at);
    expectSnakeCase(bot);
    expect(response.headers.location).toBe(`/api/v1/chatbots/${bot.id}`);
    expect(response.headers.etag).toMatch(/^"[^"]+"$/);
    expectRequestId(response);
  });

  it('GET /chatbots/{id} returns the agent with the same ETag as its creation', async () => {
    const created = await tenant.request('POST', '/api/v1/chatbots', { name: 'ETag agent' });
    const response = await tenant.request('GET', `/api/v1/chatbots/${created.json().id}`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(created.json());
    expect(response.headers.etag).toBe(created.headers.etag);
    expectRequestId(response);
  });

  it('GET /chatbots lists agents newest first in the list envelope', async () => {
    const own = await t.tenant();
    const first = await makeChatbot(own, { name: 'first' });
    const second = await makeChatbot(own, { name: 'second' });
    const response = await own.request('GET', '/api/v1/chatbots');
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    expect(body.data.map((b: { id: string }) => b.id)).toEqual([second.id, first.id]);
    expect(body.data[0].object).toBe('chatbot');
    expectSnakeCase(body);
    expect(response.headers.link).toBeUndefined();
    expectRequestId(response);
  });

  it('PATCH /chatbots/{id} updates given fields only, bumps updated_at and returns a new ETag', async () => {
    const created = await tenant.request('POST', '/api/v1/chatbots', { name: 'Patch me', description: 'old', instructions: 'Keep.' });
    const bot = created.json();
    const response = await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { description: 'new', temperature: 0.5 });
    expect(response.statusCode).toBe(200);
    const patched = response.json();
    expect(patched).toMatchObject({ id: bot.id, object: 'chatbot', name: 'Patch me', description: 'new', instructions: 'Keep.', temperature: 0.5 });
    expect(patched.updated_at > bot.updated_at).toBe(true);
    expect(patched.created_at).toBe(bot.created_at);
    expect(response.headers.etag).toMatch(/^"[^"]+"$/);
    expect(response.headers.etag).not.toBe(created.headers.etag);
    const reread = await tenant.request('GET', `/api/v1/chatbots/${bot.id}`);
    expect(reread.json()).toEqual(patched);
    expect(reread.headers.etag).toBe(response.headers.etag);
  });

  it('PATCH with null clears a nullable field, and an absent field stays unchanged', async () => {
    const bot = await makeChatbot(tenant, { description: 'to clear', welcome_message: 'Hi', model: 'gpt-x', temperature: 1 });
    const response = await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { description: null, temperature: null });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ description: null, temperature: null, welcome_message: 'Hi', model: 'gpt-x' });
    expect((await tenant.request('GET', `/api/v1/chatbots/${bot.id}`)).json()).toMatchObject({ description: null, temperature: null });
  });
});

describe('conversations and messages', () => {
  it('GET /conversations and GET /conversations/{id}: shape, ETag, Request-Id', async () => {
    const own = await t.tenant();
    const conversation = await makeConversation(t.app, own);
    const list = await own.request('GET', '/api/v1/conversations');
    expect(list.statusCode).toBe(200);
    expect(list.json()).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    expect(list.json().data).toHaveLength(1);
    expectRequestId(list);

    const one = await own.request('GET', `/api/v1/conversations/${conversation.id}`);
    expect(one.statusCode).toBe(200);
    const body = one.json();
    expect(body.id).toMatch(PREFIX.conversation);
    expect(body.chatbot_id).toMatch(PREFIX.chatbot);
    expect(body.visitor.id).toMatch(PREFIX.visitor);
    expect(body).toMatchObject({ object: 'conversation', status: 'open', mode: 'agent', channel: 'widget', lead_id: null, message_count: 0, last_message_at: null });
    expect(body.visitor.name).toBe('Visitor');
    expectSnakeCase(body);
    expect(list.json().data[0]).toEqual(body);
    expect(one.headers.etag).toMatch(/^"[^"]+"$/);
    expectRequestId(one);
  });

  it('POST /conversations/{id}/messages stores a user message authored by the key: 201, Location, counters', async () => {
    const conversation = await makeConversation(t.app, tenant);
    const response = await tenant.request('POST', `/api/v1/conversations/${conversation.id}/messages`, { content: 'Hello' });
    expect(response.statusCode).toBe(201);
    const message = response.json();
    expect(message.id).toMatch(PREFIX.message);
    expect(message).toEqual({
      id: message.id,
      object: 'message',
      conversation_id: conversation.id,
      role: 'user',
      content: 'Hello',
      author: { type: 'api_key', id: tenant.keyId },
      sources: [],
      feedback: null,
      outcome: null,
      created_at: expect.stringMatching(TIMESTAMP),
    });
    expect(response.headers.location).toMatch(new RegExp(`^/api/v1/conversations/${conversation.id}/messages`));
    expectRequestId(response);

    const after = (await tenant.request('GET', `/api/v1/conversations/${conversation.id}`)).json();
    expect(after).toMatchObject({ message_count: 1, last_message_at: message.created_at, mode: 'agent' });
    expect(after.updated_at > conversation.updated_at).toBe(true);
  });

  it('GET /conversations/{id}/messages lists oldest first by default and newest first with order=desc', async () => {
    const conversation = await makeConversation(t.app, tenant);
    const sent: string[] = [];
    for (const content of ['one', 'two', 'three']) {
      sent.push((await tenant.request('POST', `/api/v1/conversations/${conversation.id}/messages`, { content })).json().id);
    }
    const asc = await tenant.request('GET', `/api/v1/conversations/${conversation.id}/messages`);
    expect(asc.statusCode).toBe(200);
    expect(asc.json()).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
    expect(asc.json().data.map((m: { id: string }) => m.id)).toEqual(sent);
    expect(asc.json().data.map((m: { content: string }) => m.content)).toEqual(['one', 'two', 'three']);
    expectRequestId(asc);
    const desc = await tenant.request('GET', `/api/v1/conversations/${conversation.id}/messages?order=desc`);
    expect(desc.json().data.map((m: { id: string }) => m.id)).toEqual([...sent].reverse());
    const explicitAsc = await tenant.request('GET', `/api/v1/conversations/${conversation.id}/messages?order=asc`);
    expect(explicitAsc.json().data.map((m: { id: string }) => m.id)).toEqual(sent);
  });

  it('an operator message switches the conversation to mode human', async () => {
    const conversation = await makeConversation(t.app, tenant);
    await tenant.request('POST', `/api/v1/conversations/${conversation.id}/messages`, { content: 'visitor' });
    expect((await tenant.request('GET', `/api/v1/conversations/${conversation.id}`)).json().mode).toBe('agent');
    const response = await tenant.request('POST', `/api/v1/conversations/${conversation.id}/messages`, { content: 'human here', role: 'operator' });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toMatchObject({ role: 'operator', content: 'human here' });
    const after = (await tenant.request('GET', `/api/v1/conversations/${conversation.id}`)).json();
    expect(after).toMatchObject({ mode: 'human', message_count: 2 });
    // a later user message does not hand the conversation back to the agent
    await tenant.request('POST', `/api/v1/conversations/${conversation.id}/messages`, { content: 'thanks', role: 'user' });
    expect((await tenant.request('GET', `/api/v1/conversations/${conversation.id}`)).json().mode).toBe('human');
  });

  it('a closed conversation refuses new messages with 409 conversation_closed and stores nothing', async () => {
    const conversation = await makeConversation(t.app, tenant);
    await tenant.request('POST', `/api/v1/conversations/${conversation.id}/messages`, { content: 'before close' });
    await t.app.services.conversations.close(systemContext(tenant.workspaceId), conversation.id);
    const closed = (await tenant.request('GET', `/api/v1/conversations/${conversation.id}`)).json();
    expect(closed.status).toBe('closed');
    for (const role of ['user', 'operator']) {
      const response = await tenant.request('POST', `/api/v1/conversations/${conversation.id}/messages`, { content: 'late', role });
      expectProblem(response, 409, 'conversation_closed');
    }
    const list = await tenant.request('GET', `/api/v1/conversations/${conversation.id}/messages`);
    expect(list.json().data.map((m: { content: string }) => m.content)).toEqual(['before close']);
    expect((await tenant.request('GET', `/api/v1/conversations/${conversation.id}`)).json()).toEqual(closed);
  });
});

describe('leads', () => {
  it('POST /leads creates a lead from the API: 201, Location, ETag, normalised email', async () => {
    const response = await tenant.request('POST', '/api/v1/leads', { name: 'Ada', email: 'Ada@Example.COM', custom_fields: { plan: 'pro' } });
    expect(response.statusCode).toBe(201);
    const lead = response.json();
    expect(lead.id).toMatch(PREFIX.lead);
    expect(lead).toMatchObject({
      object: 'lead',
      name: 'Ada',
      email: 'ada@example.com',
      phone: null,
      company: null,
      status: 'new',
      source: 'api',
      chatbot_id: null,
      conversation_id: null,
      custom_fields: { plan: 'pro' },
    });
    expect(lead.created_at).toMatch(TIMESTAMP);
    expectSnakeCase(lead);
    expect(response.headers.location).toBe(`/api/v1/leads/${lead.id}`);
    expect(response.headers.etag).toMatch(/^"[^"]+"$/);
    expectRequestId(response);
  });

  it('accepts a phone without an email', async () => {
    const response = await tenant.request('POST', '/api/v1/leads', { phone: '+44 20 7946 0018' });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toMatchObject({ phone: '+44 20 7946 0018', email: null });
  });

  it('GET /leads/{id} and GET /leads return the lead with an ETag', async () => {
    const own = await t.tenant();
    const lead = await makeLead(own);
    const one = await own.request('GET', `/api/v1/leads/${lead.id}`);
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual(lead);
    expect(one.headers.etag).toMatch(/^"[^"]+"$/);
    expectRequestId(one);
    const list = await own.request('GET', '/api/v1/leads');
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({ object: 'list', data: [lead], has_more: false, next_cursor: null });
    expectRequestId(list);
  });

  it('PATCH /leads/{id} updates, returns a new ETag; null clears a nullable field', async () => {
    const lead = await makeLead(tenant, { company: 'Acme', phone: '+1 555 0100' });
    const before = await tenant.request('GET', `/api/v1/leads/${lead.id}`);
    const response = await tenant.request('PATCH', `/api/v1/leads/${lead.id}`, { status: 'qualified', company: null });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ id: lead.id, status: 'qualified', company: null, phone: '+1 555 0100', email: lead.email, name: lead.name });
    expect(response.json().updated_at > lead.updated_at).toBe(true);
    expect(response.headers.etag).not.toBe(before.headers.etag);
    const cleared = await tenant.request('PATCH', `/api/v1/leads/${lead.id}`, { email: null });
    expect(cleared.statusCode).toBe(200);
    expect(cleared.json()).toMatchObject({ email: null, phone: '+1 555 0100' });
    expect((await tenant.request('GET', `/api/v1/leads/${lead.id}`)).json()).toEqual(cleared.json());
  });

  it('refuses to clear the last contact detail of a lead (400), leaving it unchanged', async () => {
    const lead = await makeLead(tenant);
    const response = await tenant.request('PATCH', `/api/v1/leads/${lead.id}`, { email: null });
    const problem = expectProblem(response, 400, 'validation_failed');
    expect(problem.errors).toEqual(expect.arrayContaining([expect.objectContaining({ pointer: '/email' })]));
    expect((await tenant.request('GET', `/api/v1/leads/${lead.id}`)).json()).toEqual(lead);
  });

  it('validates contact details: needs an email or a phone; invalid email or phone is 400 with a pointer', async () => {
    const none = expectProblem(await tenant.request('POST', '/api/v1/leads', { name: 'No contact' }), 400, 'validation_failed');
    const pointers = (none.errors as { pointer: string }[]).map((e) => e.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/email', '/phone']));
    expectProblem(await tenant.request('POST', '/api/v1/leads', { email: null, phone: null }), 400, 'validation_failed');
    for (const email of ['not-an-email', 'a@', '@example.com', 'a b@example.com']) {
      const problem = expectProblem(await tenant.request('POST', '/api/v1/leads', { email }), 400, 'validation_failed');
      expect(pointersOf(problem)).toEqual(['/email']);
    }
    const phone = expectProblem(await tenant.request('POST', '/api/v1/leads', { phone: 'call me' }), 400, 'validation_failed');
    expect(pointersOf(phone)).toEqual(['/phone']);
    const patched = expectProblem(await tenant.request('PATCH', `/api/v1/leads/${(await makeLead(tenant)).id}`, { email: 'nope' }), 400, 'validation_failed');
    expect(pointersOf(patched)).toEqual(['/email']);
  });

  it('refuses unknown chatbot_id and conversation_id with 400 and a pointer', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ chatbot_id: 'bot_01ARZ3NDEKTSV4RRFFQ69G5FAV' }, '/chatbot_id'],
      [{ chatbot_id: 'not-an-id' }, '/chatbot_id'],
      [{ conversation_id: 'conv_01ARZ3NDEKTSV4RRFFQ69G5FAV' }, '/conversation_id'],
      [{ conversation_id: 'garbage' }, '/conversation_id'],
    ];
    for (const [link, pointer] of cases) {
      const problem = expectProblem(await tenant.request('POST', '/api/v1/leads', { email: 'x@example.com', ...link }), 400, 'validation_failed');
      expect(pointersOf(problem)).toEqual([pointer]);
    }
  });

  it('a lead linked to a conversation sets conversation.lead_id and inherits its chatbot', async () => {
    const conversation = await makeConversation(t.app, tenant);
    const response = await tenant.request('POST', '/api/v1/leads', { email: 'linked@example.com', conversation_id: conversation.id });
    expect(response.statusCode).toBe(201);
    const lead = response.json();
    expect(lead).toMatchObject({ conversation_id: conversation.id, chatbot_id: conversation.chatbot_id });
    const after = await tenant.request('GET', `/api/v1/conversations/${conversation.id}`);
    expect(after.json().lead_id).toBe(lead.id);
    expect(after.json().updated_at > conversation.updated_at).toBe(true);
    // a second lead does not steal the link
    await tenant.request('POST', '/api/v1/leads', { email: 'second@example.com', conversation_id: conversation.id });
    expect((await tenant.request('GET', `/api/v1/conversations/${conversation.id}`)).json().lead_id).toBe(lead.id);
  });

  it('refuses a chatbot_id that does not match the conversation', async () => {
    const conversation = await makeConversation(t.app, tenant);
    const other = await makeChatbot(tenant);
    const problem = expectProblem(
      await tenant.request('POST', '/api/v1/leads', { email: 'x@example.com', conversation_id: conversation.id, chatbot_id: other.id }),
      400,
      'validation_failed',
    );
    expect(pointersOf(problem)).toEqual(['/chatbot_id']);
    expect((await tenant.request('GET', `/api/v1/conversations/${conversation.id}`)).json().lead_id).toBeNull();
  });
});

describe('headers', () => {
  it('each of the 13 operations succeeds with its status and a Request-Id; ETag on one resource, Location on 201', async () => {
    const own = await t.tenant();
    const bot = await makeChatbot(own);
    const conversation = await makeConversation(t.app, own, bot.id);
    const lead = await makeLead(own);
    const fixtures = { chatbotId: bot.id, conversationId: conversation.id, leadId: lead.id };
    expect(OPERATIONS).toHaveLength(13);
    for (const op of OPERATIONS) {
      const response = await own.request(op.method, op.url(fixtures), op.body?.(fixtures));
      expect(response.statusCode, `${op.name}: ${response.body}`).toBe(op.success);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expectRequestId(response);
      const oneResource = op.method === 'PATCH' || (op.method === 'GET' && /\{id\}$/.test(op.name));
      if (oneResource) expect(response.headers.etag, op.name).toMatch(/^"[^"]+"$/);
      if (op.success === 201) expect(response.headers.location, op.name).toMatch(/^\/api\/v1\//);
      const body = response.json();
      expectSnakeCase(body);
      expect(body.object, op.name).toEqual(expect.any(String));
    }
  });

  it('echoes a well-formed client Request-Id, on success and on errors, and replaces a malformed one', async () => {
    const echoed = await tenant.request('GET', '/api/v1/chatbots', undefined, { 'request-id': 'client-id.123' });
    expect(echoed.headers['request-id']).toBe('client-id.123');
    const failed = await tenant.request('GET', '/api/v1/chatbots/bot_nope', undefined, { 'request-id': 'client-id.456' });
    expect(expectProblem(failed, 404, 'not_found').request_id).toBe('client-id.456');
    const replaced = await tenant.request('GET', '/api/v1/chatbots', undefined, { 'request-id': 'has spaces <script>' });
    expectRequestId(replaced);
  });

  it('sends Link rel="next" exactly when has_more, and following it gives the next page', async () => {
    const own = await t.tenant();
    const bots = [];
    for (let i = 0; i < 3; i++) bots.push(await makeChatbot(own, { name: `b${i}` }));
    const first = await own.request('GET', '/api/v1/chatbots?limit=2');
    expect(first.json().has_more).toBe(true);
    const match = /^<([^>]+)>; rel="next"$/.exec(String(first.headers.link));
    expect(match).not.toBeNull();
    const next = new URL(match![1]!, 'http://x');
    expect(next.pathname).toBe('/api/v1/chatbots');
    expect(next.searchParams.get('cursor')).toBe(first.json().next_cursor);
    expect(next.searchParams.get('limit')).toBe('2');
    const second = await own.request('GET', `${next.pathname}${next.search}`);
    expect(second.statusCode).toBe(200);
    expect(second.json()).toMatchObject({ has_more: false, next_cursor: null });
    expect(second.headers.link).toBeUndefined();
    const ids = [...first.json().data, ...second.json().data].map((b: { id: string }) => b.id);
    expect(ids).toEqual(bots.map((b) => b.id).reverse());
  });
});
