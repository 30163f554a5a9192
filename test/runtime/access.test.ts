import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/http.js';
import { makeActiveChatbot, randomIp, startConversation, widget } from './support.js';

describe('widget access: visitor tokens', () => {
  let t: TestApp;
  let tenant: Tenant;
  let botId: string;

  beforeAll(async () => {
    t = await createTestApp();
    tenant = await t.tenant();
    botId = (await makeActiveChatbot(tenant)).id;
  });
  afterAll(async () => t.close());

  it('a token opens only its own conversation', async () => {
    const mine = await startConversation(t.app, botId);
    const other = await startConversation(t.app, botId);
    for (const [method, path, body] of [
      ['GET', 'messages', undefined],
      ['POST', 'messages', { content: 'peek' }],
      ['POST', 'lead', { email: 'x@example.com' }],
    ] as const) {
      const response = await widget(t.app, method, `/widget/v1/conversations/${other.conversation_id}/${path}`, { token: mine.visitor_token, ...(body ? { body } : {}) });
      expectProblem(response, 404, 'not_found');
    }
    const otherMessages = (await tenant.request('GET', `/api/v1/conversations/${other.conversation_id}/messages`)).json();
    expect(otherMessages.data).toEqual([]);
  });

  it('a missing or unknown token is a 401 with a bearer challenge', async () => {
    const { conversation_id: id } = await startConversation(t.app, botId);
    const missing = await widget(t.app, 'GET', `/widget/v1/conversations/${id}/messages`);
    expectProblem(missing, 401, 'invalid_visitor_token');
    expect(missing.headers['www-authenticate']).toMatch(/^Bearer realm="widget"$/);
    const unknown = await widget(t.app, 'GET', `/widget/v1/conversations/${id}/messages`, { token: 'vtk_not-a-real-token' });
    expectProblem(unknown, 401, 'invalid_visitor_token');
    expect(unknown.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    const apiKey = await widget(t.app, 'GET', `/widget/v1/conversations/${id}/messages`, { token: tenant.key });
    expectProblem(apiKey, 401, 'invalid_visitor_token');
  });

  it('stores only a hash of the token', async () => {
    const { visitor_token: token } = await startConversation(t.app, botId);
    const rows = await t.app.database.db.selectFrom('visitor_tokens').selectAll().execute();
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(JSON.stringify(rows)).not.toContain(token.slice(4));
  });
});

describe('widget access: CORS follows allowed_origins', () => {
  let t: TestApp;
  let tenant: Tenant;
  const allowed = 'https://shop.example.com';

  beforeAll(async () => {
    t = await createTestApp({ publicUrl: 'https://chat.example.net' });
    tenant = await t.tenant();
  });
  afterAll(async () => t.close());

  it('answers a preflight from an allowed origin, for the agent and for its conversations', async () => {
    const bot = await makeActiveChatbot(tenant, { allowed_origins: [allowed] });
    const preflight = await widget(t.app, 'OPTIONS', `/widget/v1/chatbots/${bot.id}/conversations`, {
      origin: allowed,
      headers: { 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers).toMatchObject({ 'access-control-allow-origin': allowed, vary: expect.stringContaining('Origin') });
    expect(preflight.headers['access-control-allow-headers']).toMatch(/Authorization/);
    expect(preflight.headers['access-control-allow-methods']).toMatch(/POST/);
    expect(Number(preflight.headers['access-control-max-age'])).toBeGreaterThan(0);
    const started = await startConversation(t.app, bot.id);
    const conversationPreflight = await widget(t.app, 'OPTIONS', `/widget/v1/conversations/${started.conversation_id}/messages`, {
      origin: allowed,
      headers: { 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    expect(conversationPreflight.statusCode).toBe(204);
    expect(conversationPreflight.headers['access-control-allow-origin']).toBe(allowed);
    const post = await widget(t.app, 'POST', `/widget/v1/conversations/${started.conversation_id}/messages`, { origin: allowed, token: started.visitor_token, body: { content: 'hi' } });
    expect(post.statusCode).toBe(201);
    expect(post.headers['access-control-allow-origin']).toBe(allowed);
  });

  it('lets the widget resume its event stream from another origin: the preflight allows Last-Event-ID', async () => {
    const bot = await makeActiveChatbot(tenant, { allowed_origins: [allowed] });
    const started = await startConversation(t.app, bot.id);
    const preflight = await widget(t.app, 'OPTIONS', `/widget/v1/conversations/${started.conversation_id}/events`, {
      origin: allowed,
      headers: { 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization, last-event-id' },
    });
    expect(preflight.statusCode).toBe(204);
    const allowedHeaders = String(preflight.headers['access-control-allow-headers']).toLowerCase().split(/\s*,\s*/);
    expect(allowedHeaders).toEqual(expect.arrayContaining(['authorization', 'last-event-id']));
  });

  it('refuses a disallowed origin with 403 origin_not_allowed (its preflight is answered, the request refused)', async () => {
    const bot = await makeActiveChatbot(tenant, { allowed_origins: [allowed] });
    const evil = 'https://evil.example.org';
    const preflight = await widget(t.app, 'OPTIONS', `/widget/v1/chatbots/${bot.id}/conversations`, { origin: evil, headers: { 'access-control-request-method': 'POST' } });
    // Issue 33 §4: the preflight passes so that the widget can read the refusal below (test/runtime/widget-not-allowed.test.ts).
    expect(preflight.statusCode).toBe(204);
    expectProblem(await widget(t.app, 'POST', `/widget/v1/chatbots/${bot.id}/conversations`, { origin: evil, body: {} }), 403, 'origin_not_allowed');
    const started = await startConversation(t.app, bot.id);
    const read = await widget(t.app, 'GET', `/widget/v1/conversations/${started.conversation_id}/messages`, { origin: evil, token: started.visitor_token });
    expectProblem(read, 403, 'origin_not_allowed');
    const send = await widget(t.app, 'POST', `/widget/v1/conversations/${started.conversation_id}/messages`, { origin: evil, token: started.visitor_token, body: { content: 'x' } });
    expectProblem(send, 403, 'origin_not_allowed');
    expect((await tenant.request('GET', `/api/v1/conversations/${started.conversation_id}/messages`)).json().data).toEqual([]);
  });

  it('an empty list allows only the service\'s own pages; "*" allows any; no Origin always passes', async () => {
    const closed = await makeActiveChatbot(tenant, { allowed_origins: [] });
    expectProblem(await widget(t.app, 'POST', `/widget/v1/chatbots/${closed.id}/conversations`, { origin: allowed, body: {} }), 403, 'origin_not_allowed');
    const own = await widget(t.app, 'POST', `/widget/v1/chatbots/${closed.id}/conversations`, { origin: 'https://chat.example.net', body: {} });
    expect(own.statusCode).toBe(201);
    expect(own.headers['access-control-allow-origin']).toBe('https://chat.example.net');
    expect((await widget(t.app, 'POST', `/widget/v1/chatbots/${closed.id}/conversations`, { body: {} })).statusCode).toBe(201);
    const open = await makeActiveChatbot(tenant, { allowed_origins: ['*'] });
    const anywhere = await widget(t.app, 'POST', `/widget/v1/chatbots/${open.id}/conversations`, { origin: 'https://anywhere.example', body: {} });
    expect(anywhere.statusCode).toBe(201);
    expect(anywhere.headers['access-control-allow-origin']).toBe('https://anywhere.example');
  });
});

describe('widget access: rate limits', () => {
  let t: TestApp;
  let tenant: Tenant;
  let botId: string;

  beforeAll(async () => {
    // A clock that stands still: the budgets cannot refill between requests, however slow the machine.
    const frozen = new Date();
    t = await createTestApp({ widget: { ratePerIpPerMinute: 5, messagesPerConversationPerMinute: 3 } }, { clock: { now: () => frozen, monotonicMs: () => 0 } });
    tenant = await t.tenant();
    botId = (await makeActiveChatbot(tenant)).id;
  });
  afterAll(async () => t.close());

  it('a flood from one IP gets 429 with Retry-After; another IP is unaffected', async () => {
    const ip = randomIp();
    const statuses: number[] = [];
    let refused;
    for (let i = 0; i < 8; i++) {
      const response = await widget(t.app, 'POST', `/widget/v1/chatbots/${botId}/conversations`, { ip, body: {} });
      statuses.push(response.statusCode);
      if (response.statusCode === 429) refused = response;
    }
    expect(statuses.slice(0, 5)).toEqual([201, 201, 201, 201, 201]);
    expect(statuses.slice(5)).toEqual([429, 429, 429]);
    const problem = expectProblem(refused!, 429, 'rate_limited');
    expect(problem['violated-policies']).toEqual(['ip']);
    expect(Number(refused!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await widget(t.app, 'POST', `/widget/v1/chatbots/${botId}/conversations`, { ip: randomIp(), body: {} })).statusCode).toBe(201);
  });

  it('a conversation takes a limited number of messages per minute, whatever the IP', async () => {
    const { conversation_id: id, visitor_token: token } = await startConversation(t.app, botId);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await widget(t.app, 'POST', `/widget/v1/conversations/${id}/messages`, { token, ip: randomIp(), body: { content: `m${i}` } })).statusCode);
    }
    expect(statuses).toEqual([201, 201, 201, 429]);
    const refused = await widget(t.app, 'POST', `/widget/v1/conversations/${id}/messages`, { token, ip: randomIp(), body: { content: 'again' } });
    expect(expectProblem(refused, 429, 'rate_limited')['violated-policies']).toEqual(['conversation']);
    const stored = (await tenant.request('GET', `/api/v1/conversations/${id}/messages`)).json().data.filter((m: { role: string }) => m.role === 'user');
    expect(stored).toHaveLength(3);
  });
});
