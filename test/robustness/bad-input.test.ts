import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { makeChatbot, makeConversation, makeLead } from '../helpers/factories.js';
import { expectProblem, type ProblemBody } from '../helpers/http.js';
import { namedFields } from './support.js';

// Bad input never yields a 5xx, a hang or a partial write: every refusal is a 4xx problem, and the
// workspace reads exactly the same before and after a refused write.

type Method = 'GET' | 'POST' | 'PATCH';
const JSON_TYPE = { 'content-type': 'application/json' };
const s = {} as {
  t: TestApp;
  tenant: Tenant;
  bot: { id: string };
  lead: { id: string };
  conv: { id: string };
  other: { bot: { id: string }; lead: { id: string }; conv: { id: string } };
};

function send(method: Method, url: string, payload?: string | Buffer, headers: Record<string, string> = {}) {
  return s.t.app.inject({ method, url, headers: { authorization: `Bearer ${s.tenant.key}`, ...headers }, ...(payload === undefined ? {} : { payload }) });
}

/** Everything a write of the tenant could change: every list, with counters and updated_at. */
async function snapshot(): Promise<unknown[]> {
  const urls = ['/api/v1/chatbots?limit=100', '/api/v1/leads?limit=100', '/api/v1/conversations?limit=100', `/api/v1/conversations/${s.conv.id}/messages?limit=100`];
  return Promise.all(
    urls.map(async (url) => {
      const res = await send('GET', url);
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    }),
  );
}

/** Sends a request that must be refused with a problem, and checks nothing was written. */
async function refused(method: Method, url: string, payload: string | Buffer | undefined, headers: Record<string, string>, status: number, code?: string | string[]): Promise<ProblemBody> {
  const before = await snapshot();
  const problem = expectProblem(await send(method, url, payload, headers), status, code);
  expect(await snapshot()).toEqual(before);
  return problem;
}

interface WriteOp {
  name: string;
  method: 'POST' | 'PATCH';
  url: () => string;
  valid: Record<string, unknown>;
}
const WRITES: WriteOp[] = [
  { name: 'POST /chatbots', method: 'POST', url: () => '/api/v1/chatbots', valid: { name: 'Valid agent' } },
  { name: 'PATCH /chatbots/{id}', method: 'PATCH', url: () => `/api/v1/chatbots/${s.bot.id}`, valid: { name: 'Renamed agent' } },
  { name: 'POST /leads', method: 'POST', url: () => '/api/v1/leads', valid: { email: 'valid@example.com' } },
  { name: 'PATCH /leads/{id}', method: 'PATCH', url: () => `/api/v1/leads/${s.lead.id}`, valid: { name: 'Renamed lead' } },
  { name: 'POST /conversations/{id}/messages', method: 'POST', url: () => `/api/v1/conversations/${s.conv.id}/messages`, valid: { content: 'Hello' } },
];
const write = (name: string) => WRITES.find((w) => w.name === name)!;

beforeAll(async () => {
  s.t = await createTestApp();
  s.tenant = await s.t.tenant();
  s.bot = await makeChatbot(s.tenant);
  for (let i = 0; i < 3; i++) await makeChatbot(s.tenant, { name: `Agent ${i}` });
  s.lead = await makeLead(s.tenant);
  await makeLead(s.tenant);
  s.conv = await makeConversation(s.t.app, s.tenant, s.bot.id);
  const stranger = await s.t.tenant();
  const strangerBot = await makeChatbot(stranger);
  s.other = { bot: strangerBot, lead: await makeLead(stranger), conv: await makeConversation(s.t.app, stranger, strangerBot.id) };
});
afterAll(() => s.t.close());

describe('malformed and non-object JSON', () => {
  const MALFORMED = ['{"name":"x"', '{"name":"x"} garbage', '{"a":', '{', ']', "{'name':'x'}", '{"name":"x",}', 'NaN'];
  it.each(WRITES.flatMap((w) => MALFORMED.map((body) => [w.name, body] as const)))('%s refuses %s with 400 invalid_request', async (name, body) => {
    const op = write(name);
    await refused(op.method, op.url(), body, JSON_TYPE, 400, 'invalid_request');
  });

  const NOT_OBJECTS = ['[]', '[{"name":"x","email":"a@example.com","content":"x"}]', '"a string"', '42', 'null', 'true'];
  it.each(WRITES.flatMap((w) => NOT_OBJECTS.map((body) => [w.name, body] as const)))('%s refuses the non-object %s with 400', async (name, body) => {
    const op = write(name);
    await refused(op.method, op.url(), body, JSON_TYPE, 400, ['validation_failed', 'invalid_request']);
  });
});

describe('schema violations name the field', () => {
  const metadata51 = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
  const CASES: [string, Record<string, unknown>, string][] = [
    ['POST /chatbots', { name: 123 }, '/name'],
    ['POST /chatbots', { name: null }, '/name'],
    ['POST /chatbots', { name: '' }, '/name'],
    ['POST /chatbots', {}, '/name'],
    ['POST /chatbots', { name: 'x'.repeat(201) }, '/name'],
    ['POST /chatbots', { name: 'x', description: 5 }, '/description'],
    ['POST /chatbots', { name: 'x', description: 'd'.repeat(1001) }, '/description'],
    ['POST /chatbots', { name: 'x', instructions: ['x'] }, '/instructions'],
    ['POST /chatbots', { name: 'x', instructions: 'i'.repeat(20_001) }, '/instructions'],
    ['POST /chatbots', { name: 'x', welcome_message: {} }, '/welcome_message'],
    ['POST /chatbots', { name: 'x', model: '' }, '/model'],
    ['POST /chatbots', { name: 'x', temperature: 'hot' }, '/temperature'],
    ['POST /chatbots', { name: 'x', temperature: 2.5 }, '/temperature'],
    ['POST /chatbots', { name: 'x', temperature: -1 }, '/temperature'],
    ['POST /chatbots', { name: 'x', knowledge: 'x' }, '/knowledge'],
    ['POST /chatbots', { name: 'x', knowledge: [{ title: 't' }] }, '/knowledge/0/content'],
    ['POST /chatbots', { name: 'x', knowledge: [{ title: 't', content: 'c', extra: 1 }] }, '/knowledge/0/extra'],
    ['POST /chatbots', { name: 'x', lead_capture: true }, '/lead_capture'],
    ['POST /chatbots', { name: 'x', lead_capture: { enabled: 'yes', fields: [], prompt: null } }, '/lead_capture/enabled'],
    ['POST /chatbots', { name: 'x', lead_capture: { enabled: true, fields: ['fax'], prompt: null } }, '/lead_capture/fields/0'],
    ['POST /chatbots', { name: 'x', allowed_origins: 'https://example.com' }, '/allowed_origins'],
    ['POST /chatbots', { name: 'x', allowed_origins: ['ftp://example.com'] }, '/allowed_origins/0'],
    ['POST /chatbots', { name: 'x', metadata: 'x' }, '/metadata'],
    ['POST /chatbots', { name: 'x', metadata: { a: 1 } }, '/metadata/a'],
    ['POST /chatbots', { name: 'x', metadata: metadata51 }, '/metadata'],
    ['POST /chatbots', { name: 'x', metadata: { a: 'v'.repeat(501) } }, '/metadata/a'],
    ['POST /chatbots', { name: 'x', unexpected_field: 1 }, '/unexpected_field'],
    ['POST /chatbots', { name: 'x', status: 'active' }, '/status'],
    ['PATCH /chatbots/{id}', { name: 123 }, '/name'],
    ['PATCH /chatbots/{id}', { name: null }, '/name'],
    ['PATCH /chatbots/{id}', { name: 'x'.repeat(201) }, '/name'],
    ['PATCH /chatbots/{id}', { status: 'deleted' }, '/status'],
    ['PATCH /chatbots/{id}', { status: 1 }, '/status'],
    ['PATCH /chatbots/{id}', { temperature: 'hot' }, '/temperature'],
    ['PATCH /chatbots/{id}', { knowledge: 'x' }, '/knowledge'],
    ['PATCH /chatbots/{id}', { metadata: metadata51 }, '/metadata'],
    ['PATCH /chatbots/{id}', { lead_capture: { enabled: true } }, '/lead_capture/fields'],
    ['PATCH /chatbots/{id}', { unexpected_field: 1 }, '/unexpected_field'],
    ['POST /leads', {}, '/email'],
    ['POST /leads', { name: 'No contact' }, '/email'],
    ['POST /leads', { email: 'not-an-email' }, '/email'],
    ['POST /leads', { email: 5 }, '/email'],
    ['POST /leads', { email: `${'a'.repeat(250)}@example.com` }, '/email'],
    ['POST /leads', { phone: 'abc' }, '/phone'],
    ['POST /leads', { phone: 12345678 }, '/phone'],
    ['POST /leads', { email: 'a@example.com', name: 123 }, '/name'],
    ['POST /leads', { email: 'a@example.com', name: 'x'.repeat(201) }, '/name'],
    ['POST /leads', { email: 'a@example.com', company: [] }, '/company'],
    ['POST /leads', { email: 'a@example.com', status: 'hot' }, '/status'],
    ['POST /leads', { email: 'a@example.com', source: 'api' }, '/source'],
    ['POST /leads', { email: 'a@example.com', custom_fields: 'x' }, '/custom_fields'],
    ['POST /leads', { email: 'a@example.com', custom_fields: metadata51 }, '/custom_fields'],
    ['POST /leads', { email: 'a@example.com', chatbot_id: 5 }, '/chatbot_id'],
    ['POST /leads', { email: 'a@example.com', chatbot_id: 'bot_01ARZ3NDEKTSV4RRFFQ69G5FAV' }, '/chatbot_id'],
    ['POST /leads', { email: 'a@example.com', conversation_id: {} }, '/conversation_id'],
    ['POST /leads', { email: 'a@example.com', conversation_id: 'conv_nope' }, '/conversation_id'],
    ['POST /leads', { email: 'a@example.com', unexpected_field: 1 }, '/unexpected_field'],
    ['PATCH /leads/{id}', { email: null }, '/email'],
    ['PATCH /leads/{id}', { email: 'not-an-email' }, '/email'],
    ['PATCH /leads/{id}', { phone: true }, '/phone'],
    ['PATCH /leads/{id}', { status: 'hot' }, '/status'],
    ['PATCH /leads/{id}', { name: 'x'.repeat(201) }, '/name'],
    ['PATCH /leads/{id}', { custom_fields: metadata51 }, '/custom_fields'],
    ['PATCH /leads/{id}', { chatbot_id: 'bot_01ARZ3NDEKTSV4RRFFQ69G5FAV' }, '/chatbot_id'],
    ['PATCH /leads/{id}', { unexpected_field: 1 }, '/unexpected_field'],
    ['POST /conversations/{id}/messages', {}, '/content'],
    ['POST /conversations/{id}/messages', { content: 5 }, '/content'],
    ['POST /conversations/{id}/messages', { content: '' }, '/content'],
    ['POST /conversations/{id}/messages', { content: 'x'.repeat(10_001) }, '/content'],
    ['POST /conversations/{id}/messages', { content: 'x', role: 'assistant' }, '/role'],
    ['POST /conversations/{id}/messages', { content: 'x', role: 5 }, '/role'],
    ['POST /conversations/{id}/messages', { content: 'x', unexpected_field: 1 }, '/unexpected_field'],
  ];
  const short = (body: unknown) => {
    const text = JSON.stringify(body);
    return text.length > 70 ? `${text.slice(0, 60)}…(${text.length} chars)` : text;
  };
  it.each(CASES.map(([name, body, pointer]) => [name, short(body), pointer, body] as const))('%s refuses %s naming %s', async (name, _label, pointer, body) => {
    const op = write(name);
    const problem = await refused(op.method, op.url(), JSON.stringify(body), JSON_TYPE, 400, 'validation_failed');
    expect(namedFields(problem).some((field) => field === pointer || field.startsWith(`${pointer}/`)), JSON.stringify(problem.errors)).toBe(true);
  });
});

describe('body size and media type', () => {
  it.each(WRITES.map((w) => w.name))('%s refuses a 2 MiB body with 413 payload_too_large', async (name) => {
    const op = write(name);
    const huge = JSON.stringify({ ...op.valid, padding: 'a'.repeat(2 * 1024 * 1024) });
    await refused(op.method, op.url(), huge, JSON_TYPE, 413, 'payload_too_large');
  });

  const MEDIA = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=b', 'application/xml', 'application/jsonx'];
  it.each(WRITES.flatMap((w) => MEDIA.map((type) => [w.name, type] as const)))('%s refuses Content-Type %s with 415', async (name, type) => {
    const op = write(name);
    const payload = type.startsWith('multipart') ? '--b\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--b--\r\n' : JSON.stringify(op.valid);
    await refused(op.method, op.url(), payload, { 'content-type': type }, 415, 'unsupported_media_type');
  });

  it.each(WRITES.map((w) => w.name))('%s refuses a body without Content-Type with 415', async (name) => {
    const op = write(name);
    await refused(op.method, op.url(), JSON.stringify(op.valid), {}, 415, 'unsupported_media_type');
  });

  it.each(WRITES.map((w) => w.name))('%s refuses an empty body labelled JSON with 400', async (name) => {
    const op = write(name);
    await refused(op.method, op.url(), '', JSON_TYPE, 400, 'invalid_request');
  });
});

describe('prototype poisoning', () => {
  const POISON = [
    '{"name":"x","email":"p@example.com","content":"x","__proto__":{"polluted":"yes"}}',
    '{"name":"x","email":"p@example.com","content":"x","constructor":{"prototype":{"polluted":"yes"}}}',
    '{"name":"x","metadata":{"__proto__":{"polluted":"yes"}}}',
  ];
  it.each(WRITES.flatMap((w) => POISON.map((body) => [w.name, body] as const)))('%s refuses %s without polluting prototypes', async (name, body) => {
    const op = write(name);
    await refused(op.method, op.url(), body, JSON_TYPE, 400, ['invalid_request', 'validation_failed']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('explains the refusal instead of calling valid JSON "not valid JSON"', async () => {
    const problem = await refused('POST', '/api/v1/chatbots', POISON[0], JSON_TYPE, 400);
    expect(problem.detail).not.toMatch(/not valid JSON/i);
    expect(problem.detail).toMatch(/__proto__|constructor|prototype|forbidden/i);
  });
});

describe('malformed ids in paths', () => {
  interface IdOp {
    name: string;
    method: Method;
    path: (id: string) => string;
    body?: Record<string, unknown>;
    kind: 'bot' | 'lead' | 'conv';
  }
  const ID_OPS: IdOp[] = [
    { name: 'GET /chatbots/{id}', method: 'GET', path: (id) => `/api/v1/chatbots/${id}`, kind: 'bot' },
    { name: 'PATCH /chatbots/{id}', method: 'PATCH', path: (id) => `/api/v1/chatbots/${id}`, body: { name: 'x' }, kind: 'bot' },
    { name: 'GET /conversations/{id}', method: 'GET', path: (id) => `/api/v1/conversations/${id}`, kind: 'conv' },
    { name: 'GET /conversations/{id}/messages', method: 'GET', path: (id) => `/api/v1/conversations/${id}/messages`, kind: 'conv' },
    { name: 'POST /conversations/{id}/messages', method: 'POST', path: (id) => `/api/v1/conversations/${id}/messages`, body: { content: 'x' }, kind: 'conv' },
    { name: 'GET /leads/{id}', method: 'GET', path: (id) => `/api/v1/leads/${id}`, kind: 'lead' },
    { name: 'PATCH /leads/{id}', method: 'PATCH', path: (id) => `/api/v1/leads/${id}`, body: { name: 'x' }, kind: 'lead' },
  ];
  const wrongKind = { bot: 'lead', lead: 'conv', conv: 'bot' } as const;
  const IDS: [string, (op: IdOp) => string][] = [
    ['a word', () => 'nope'],
    ['the right prefix with a non-Crockford body', (op) => `${op.kind}_${'I'.repeat(26)}`],
    ['a real id of another kind', (op) => s[wrongKind[op.kind]].id],
    ['a real id with a suffix', (op) => `${s[op.kind].id}x`],
    ['a real id in lower case', (op) => s[op.kind].id.toLowerCase()],
    ['a real id of another workspace', (op) => s.other[op.kind].id],
    ['SQL', () => encodeURIComponent("' OR 1=1 --")],
    ['a NUL byte', () => '%00'],
    ['an encoded slash', () => '..%2F..%2Fetc'],
    ['an id of 101 characters', (op) => `${op.kind}_${'0'.repeat(100 - op.kind.length)}`],
  ];
  it.each(ID_OPS.flatMap((op) => IDS.map(([label, make]) => [op.name, label, op, make] as const)))('%s answers 404 for %s', async (_name, _label, op, make) => {
    const url = op.path(make(op));
    if (op.method === 'GET') expectProblem(await send('GET', url), 404, 'not_found');
    else await refused(op.method, url, JSON.stringify(op.body), JSON_TYPE, 404, 'not_found');
  });

  it.each(ID_OPS.map((op) => [op.name, op] as const))('%s answers a problem (not a framework error) for a broken percent-encoding', async (_name, op) => {
    const url = op.path('%E0%A4%A');
    const res = op.method === 'GET' ? await send('GET', url) : await send(op.method, url, JSON.stringify(op.body), JSON_TYPE);
    expect([400, 404]).toContain(res.statusCode);
    expectProblem(res, res.statusCode);
  });
});

describe('query strings', () => {
  const LISTS = ['/api/v1/chatbots', '/api/v1/conversations', () => `/api/v1/conversations/${s.conv.id}/messages`, '/api/v1/leads'];
  const listUrl = (l: string | (() => string)) => (typeof l === 'string' ? l : l());
  const LIST_NAMES = ['GET /chatbots', 'GET /conversations', 'GET /conversations/{id}/messages', 'GET /leads'];

  it.each(LIST_NAMES.map((name, i) => [name, LISTS[i]!] as const))('%s refuses absurd limits with 400 naming limit', async (_name, list) => {
    for (const query of ['limit=0', 'limit=-1', 'limit=101', 'limit=1e9', 'limit=abc', 'limit=1.5', 'limit=', 'limit=1&limit=2']) {
      const problem = expectProblem(await send('GET', `${listUrl(list)}?${query}`), 400, 'validation_failed');
      expect(namedFields(problem), query).toContain('limit');
    }
  });

  it.each(LIST_NAMES.map((name, i) => [name, LISTS[i]!] as const))('%s refuses invalid dates with 400 naming the parameter', async (name, list) => {
    const params = ['created_after', 'created_before', ...(name === 'GET /leads' ? ['updated_after'] : [])];
    for (const param of params) {
      for (const value of ['yesterday', '2024-13-01T00:00:00Z', '2024-02-30T00:00:00Z', '2024-01-01T25:00:00Z', '0', '']) {
        const problem = expectProblem(await send('GET', `${listUrl(list)}?${param}=${encodeURIComponent(value)}`), 400, 'validation_failed');
        expect(namedFields(problem), `${param}=${value}`).toContain(param);
      }
    }
  });

  async function cursors() {
    const page = (await send('GET', '/api/v1/chatbots?limit=1')).json() as { next_cursor: string };
    expect(page.next_cursor).toEqual(expect.any(String));
    expect((await send('GET', `/api/v1/chatbots?limit=1&cursor=${page.next_cursor}`)).statusCode).toBe(200);
    const leads = (await send('GET', '/api/v1/leads?limit=1')).json() as { next_cursor: string };
    expect(leads.next_cursor).toEqual(expect.any(String));
    return { chatbots: page.next_cursor, leads: leads.next_cursor };
  }
  function expectCursorRefused(res: Awaited<ReturnType<typeof send>>, label: string) {
    expect(res.statusCode, `${label}: ${res.body.slice(0, 200)}`).toBe(400);
    const problem = expectProblem(res, 400, ['invalid_cursor', 'validation_failed']);
    expect(namedFields(problem), label).toContain('cursor');
  }

  it('refuses malformed, tampered and re-filtered cursors with 400', async () => {
    const { chatbots } = await cursors();
    const [createdAt, id, digest] = JSON.parse(Buffer.from(chatbots, 'base64url').toString()) as string[];
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const cases: [string, string][] = [
      ['garbage', 'cursor=abc'],
      ['not base64', `cursor=${encodeURIComponent('!!! not base64 !!!')}`],
      ['an empty array', `cursor=${b64([])}`],
      ['an object', `cursor=${b64({ createdAt, id })}`],
      ['a forged digest', `cursor=${b64([createdAt, id, 'forged'])}`],
      ['a moved position', `cursor=${b64(['2020-01-01T00:00:00.000Z', id, digest])}`],
      ['another filter', `status=active&cursor=${chatbots}`],
      ['too long', `cursor=${'x'.repeat(513)}`],
    ];
    for (const [label, query] of cases) expectCursorRefused(await send('GET', `/api/v1/chatbots?${query}`), label);
  });

  it('refuses a cursor issued by another list (GET /leads cursor on GET /chatbots) with 400', async () => {
    const { leads } = await cursors();
    expectCursorRefused(await send('GET', `/api/v1/chatbots?cursor=${leads}`), 'a /leads cursor');
  });

  const ALL_OPS: [string, Method, () => string, Record<string, unknown>?][] = [
    ['GET /analytics', 'GET', () => '/api/v1/analytics'],
    ['GET /chatbots', 'GET', () => '/api/v1/chatbots'],
    ['POST /chatbots', 'POST', () => '/api/v1/chatbots', { name: 'Query test' }],
    ['GET /chatbots/{id}', 'GET', () => `/api/v1/chatbots/${s.bot.id}`],
    ['PATCH /chatbots/{id}', 'PATCH', () => `/api/v1/chatbots/${s.bot.id}`, { name: 'Query test' }],
    ['GET /conversations', 'GET', () => '/api/v1/conversations'],
    ['GET /conversations/{id}', 'GET', () => `/api/v1/conversations/${s.conv.id}`],
    ['GET /conversations/{id}/messages', 'GET', () => `/api/v1/conversations/${s.conv.id}/messages`],
    ['POST /conversations/{id}/messages', 'POST', () => `/api/v1/conversations/${s.conv.id}/messages`, { content: 'Query test' }],
    ['GET /leads', 'GET', () => '/api/v1/leads'],
    ['POST /leads', 'POST', () => '/api/v1/leads', { email: 'query@example.com' }],
    ['GET /leads/{id}', 'GET', () => `/api/v1/leads/${s.lead.id}`],
    ['PATCH /leads/{id}', 'PATCH', () => `/api/v1/leads/${s.lead.id}`, { name: 'Query test' }],
  ];
  it.each(ALL_OPS)(
    '%s refuses an unknown query parameter with 400 naming it',
    async (_name, method, url, body) => {
      const target = `${url()}?unknown_param=1`;
      const problem =
        method === 'GET'
          ? expectProblem(await send('GET', target), 400, ['validation_failed', 'invalid_request'])
          : await refused(method, target, JSON.stringify(body), JSON_TYPE, 400, ['validation_failed', 'invalid_request']);
      expect(namedFields(problem)).toContain('unknown_param');
    },
  );

  it('GET /analytics refuses invalid periods with 400', async () => {
    const cases = [
      'from=garbage',
      'to=garbage',
      'from=2024-13-01',
      'from=2024-02-01&to=2024-01-01',
      'from=2020-01-01&to=2024-01-01',
      'chatbot_id=not-a-bot',
      `from=${encodeURIComponent('+275760-09-13T00:00:00.000Z')}`,
    ];
    for (const query of cases) {
      const res = await send('GET', `/api/v1/analytics?${query}`);
      expect(res.statusCode, query).toBe(400);
      expectProblem(res, 400, 'validation_failed');
    }
  });

  it('GET /analytics refuses impossible calendar dates instead of rolling them over', async () => {
    for (const query of ['from=2024-02-30&to=2024-03-10', `from=${encodeURIComponent('2024-04-31T00:00:00.000Z')}&to=2024-05-10`]) {
      const res = await send('GET', `/api/v1/analytics?${query}`);
      expect(res.statusCode, `${query}: ${res.body.slice(0, 120)}`).toBe(400);
      expectProblem(res, 400, 'validation_failed');
    }
  });

  it('GET /analytics answers 400, not 500, when the default period would start before the earliest date', async () => {
    // `to` is the earliest instant a Date can hold; the default `from` (30 days earlier) cannot exist.
    expectProblem(await send('GET', `/api/v1/analytics?to=${encodeURIComponent('-271821-04-20T00:00:00.000Z')}`), 400, 'validation_failed');
  });
});
