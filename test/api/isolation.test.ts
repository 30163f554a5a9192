import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { makeChatbot, makeConversation, makeLead } from '../helpers/factories.js';
import { expectProblem, must, testClock } from './support.js';

// Workspaces are isolated: another workspace's resources do not exist for the caller (404, never 403),
// and malformed ids are 404 too, never 400 or 500.

let t: TestApp;
let a: Tenant;
let b: Tenant;
const mine = {} as { bot: { id: string }; conversation: { id: string }; lead: { id: string } };

beforeAll(async () => {
  t = await createTestApp({}, { clock: testClock(), replyWorker: false }); // exact fixtures: no agent answers appear in the background
  a = await t.tenant();
  b = await t.tenant();
  mine.bot = await makeChatbot(a, { name: 'A agent', description: 'of A' });
  mine.conversation = await makeConversation(t.app, a, mine.bot.id);
  await must(a.request('POST', `/api/v1/conversations/${mine.conversation.id}/messages`, { content: 'A says hi' }), 201);
  mine.lead = await makeLead(a, { chatbot_id: mine.bot.id, company: 'A Corp' });
  // B has data of its own, so its lists are not trivially empty
  const theirs = await makeChatbot(b, { name: 'B agent' });
  await makeConversation(t.app, b, theirs.id);
  await makeLead(b);
});
afterAll(() => t.close());

/** Everything A can see of its own resources, with ETags, to compare before and after B's attempts. */
async function snapshot() {
  const urls = [
    `/api/v1/chatbots/${mine.bot.id}`,
    `/api/v1/conversations/${mine.conversation.id}`,
    `/api/v1/conversations/${mine.conversation.id}/messages`,
    `/api/v1/leads/${mine.lead.id}`,
  ];
  const out: Record<string, unknown> = {};
  for (const url of urls) {
    const response = await a.request('GET', url);
    expect(response.statusCode).toBe(200);
    out[url] = { body: response.json(), etag: response.headers.etag ?? null };
  }
  return out;
}

describe("another workspace's ids are 404", () => {
  const attempts: [string, string, string, unknown?][] = [
    ['GET chatbot', 'GET', 'chatbots/{bot}'],
    ['PATCH chatbot', 'PATCH', 'chatbots/{bot}', { name: 'hijacked', status: 'archived' }],
    ['PATCH chatbot with If-Match *', 'PATCH', 'chatbots/{bot}', { description: 'hijacked' }],
    ['GET conversation', 'GET', 'conversations/{conv}'],
    ['GET messages', 'GET', 'conversations/{conv}/messages'],
    ['POST message', 'POST', 'conversations/{conv}/messages', { content: 'injected', role: 'operator' }],
    ['GET lead', 'GET', 'leads/{lead}'],
    ['PATCH lead', 'PATCH', 'leads/{lead}', { email: 'attacker@example.com', status: 'archived' }],
  ];

  it.each(attempts)("B's key: %s of A's resource is 404 not_found and A's data is unchanged", async (label, method, path, body) => {
    const before = await snapshot();
    const url = `/api/v1/${path.replace('{bot}', mine.bot.id).replace('{conv}', mine.conversation.id).replace('{lead}', mine.lead.id)}`;
    const headers: Record<string, string> = label.includes('If-Match') ? { 'if-match': '*' } : {};
    const problem = expectProblem(await b.request(method, url, body, headers), 404, 'not_found');
    expect(JSON.stringify(problem)).not.toContain('A agent');
    expect(await snapshot()).toEqual(before);
  });

  it("B cannot link a lead to A's agent or conversation (400), and A's conversation keeps no lead", async () => {
    const byBot = expectProblem(await b.request('POST', '/api/v1/leads', { email: 'x@example.com', chatbot_id: mine.bot.id }), 400, 'validation_failed');
    expect(byBot.errors).toEqual(expect.arrayContaining([expect.objectContaining({ pointer: '/chatbot_id' })]));
    const byConv = expectProblem(
      await b.request('POST', '/api/v1/leads', { email: 'x@example.com', conversation_id: mine.conversation.id }),
      400,
      'validation_failed',
    );
    expect(byConv.errors).toEqual(expect.arrayContaining([expect.objectContaining({ pointer: '/conversation_id' })]));
    expect((await a.request('GET', `/api/v1/conversations/${mine.conversation.id}`)).json().lead_id).toBeNull();
  });
});

describe("B's lists never include A's items", () => {
  it('the plain lists of B hold only B items', async () => {
    for (const [resource, ownId] of [
      ['chatbots', mine.bot.id],
      ['conversations', mine.conversation.id],
      ['leads', mine.lead.id],
    ] as const) {
      const response = await b.request('GET', `/api/v1/${resource}?limit=100`);
      expect(response.statusCode).toBe(200);
      const ids = response.json().data.map((item: { id: string }) => item.id);
      expect(ids.length).toBeGreaterThan(0);
      expect(ids).not.toContain(ownId);
      const aIds = (await a.request('GET', `/api/v1/${resource}?limit=100`)).json().data.map((item: { id: string }) => item.id);
      expect(ids.filter((id: string) => aIds.includes(id))).toEqual([]);
    }
  });

  it("filtering B's lists by A's ids finds nothing", async () => {
    const urls = [
      `/api/v1/conversations?chatbot_id=${mine.bot.id}`,
      `/api/v1/leads?chatbot_id=${mine.bot.id}`,
      `/api/v1/leads?conversation_id=${mine.conversation.id}`,
    ];
    for (const url of urls) {
      const response = await b.request('GET', url);
      expect(response.statusCode).toBe(200);
      expect(response.json().data).toEqual([]);
    }
    const leadEmail = (await a.request('GET', `/api/v1/leads/${mine.lead.id}`)).json().email as string;
    expect((await b.request('GET', `/api/v1/leads?email=${encodeURIComponent(leadEmail)}`)).json().data).toEqual([]);
  });

  it("B's analytics never count A's data, even filtered by A's agent", async () => {
    const response = await b.request('GET', `/api/v1/analytics?chatbot_id=${mine.bot.id}`);
    expect(response.statusCode).toBe(200);
    const s = response.json();
    expect(s.conversations.total).toBe(0);
    expect(s.messages.total).toBe(0);
    expect(s.leads.total).toBe(0);
    expect(s.chatbots.total).toBe(0);
    const all = (await b.request('GET', '/api/v1/analytics')).json();
    expect(all.conversations.total).toBe(1);
    expect(all.messages.total).toBe(0);
    expect(all.leads.total).toBe(1);
    expect(all.chatbots.total).toBe(1);
  });

  it("a cursor from A's list does not reveal A's items to B", async () => {
    await makeChatbot(a, { name: 'A second' });
    const first = (await a.request('GET', '/api/v1/chatbots?limit=1')).json();
    expect(first.next_cursor).toEqual(expect.any(String));
    const response = await b.request('GET', `/api/v1/chatbots?limit=100&cursor=${encodeURIComponent(first.next_cursor)}`);
    if (response.statusCode === 200) {
      const ids = response.json().data.map((item: { id: string }) => item.id);
      expect(ids).not.toContain(mine.bot.id);
    } else {
      expectProblem(response, 400, 'invalid_cursor');
    }
  });
});

describe('malformed ids are 404, never 400 or 500', () => {
  const LONG = 'bot_' + '7'.repeat(300);
  const malformed = [
    'abc',
    'bot_x',
    'bot_',
    '0',
    '-1',
    'null',
    'undefined',
    '%20',
    encodeURIComponent("1' OR '1'='1"),
    encodeURIComponent("bot_01ARZ3NDEKTSV4RRFFQ69G5FAV' OR 1=1 --"),
    encodeURIComponent('"; DROP TABLE chatbots; --'),
    encodeURIComponent('%'),
    encodeURIComponent('bot_%'),
    encodeURIComponent('../leads'),
    encodeURIComponent('bot_01arz3ndektsv4rrffq69g5fav'),
    'bot_01ARZ3NDEKTSV4RRFFQ69G5FAVX',
    '%F0%9F%A4%96',
  ];

  const routes: [string, string, string, unknown?][] = [
    ['GET /chatbots/{id}', 'GET', 'chatbots/{id}'],
    ['PATCH /chatbots/{id}', 'PATCH', 'chatbots/{id}', { name: 'x' }],
    ['GET /conversations/{id}', 'GET', 'conversations/{id}'],
    ['GET /conversations/{id}/messages', 'GET', 'conversations/{id}/messages'],
    ['POST /conversations/{id}/messages', 'POST', 'conversations/{id}/messages', { content: 'x' }],
    ['GET /leads/{id}', 'GET', 'leads/{id}'],
    ['PATCH /leads/{id}', 'PATCH', 'leads/{id}', { company: 'x' }],
  ];
  const url = (path: string, id: string) => `/api/v1/${path.replace('{id}', id)}`;

  it.each(routes)('%s with malformed ids', async (_label, method, path, body) => {
    for (const id of malformed) {
      const response = await a.request(method, url(path, id), body);
      expect(response.statusCode, `${method} ${url(path, id)}`).toBe(404);
      expectProblem(response, 404, 'not_found');
    }
  });

  it.each(routes)('%s with the id of another kind of resource', async (_label, method, path, body) => {
    const others = path.startsWith('chatbots')
      ? [mine.conversation.id, mine.lead.id, a.keyId, a.workspaceId]
      : path.startsWith('conversations')
        ? [mine.bot.id, mine.lead.id, a.keyId]
        : [mine.bot.id, mine.conversation.id, a.keyId];
    for (const id of others) expectProblem(await a.request(method, url(path, id), body), 404, 'not_found');
  });

  it('every {id} operation answers 404 not_found to a very long id (300 characters)', async () => {
    for (const [label, method, path, body] of routes) {
      const response = await a.request(method, url(path, LONG), body);
      expect(response.statusCode, `${label}: ${response.body.slice(0, 120)}`).toBe(404);
      expectProblem(response, 404, 'not_found');
    }
  });

  it('a path segment that is not valid percent-encoding answers problem details with a Request-Id', async () => {
    const response = await a.request('GET', '/api/v1/chatbots/%zz');
    expect([400, 404]).toContain(response.statusCode);
    expect(response.headers['request-id']).toEqual(expect.any(String));
    expectProblem(response, response.statusCode, response.statusCode === 404 ? 'not_found' : 'invalid_request');
  });

  it('the malformed-id attempts changed nothing', async () => {
    const response = await a.request('GET', `/api/v1/conversations/${mine.conversation.id}/messages`);
    expect(response.json().data.map((m: { content: string }) => m.content)).toEqual(['A says hi']);
    expect((await a.request('GET', `/api/v1/chatbots/${mine.bot.id}`)).json()).toMatchObject({ name: 'A agent', description: 'of A', status: 'draft' });
    expect((await a.request('GET', `/api/v1/leads/${mine.lead.id}`)).json()).toMatchObject({ company: 'A Corp', status: 'new' });
  });
});
