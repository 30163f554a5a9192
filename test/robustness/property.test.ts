import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemContext } from '../../src/lib/actor.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { makeChatbot, makeConversation, makeLead } from '../helpers/factories.js';
import { problemDefect } from '../helpers/http.js';

// Property: whatever body, query string, path id or If-Match a client sends to any of the 13
// operations, the answer is a 2xx JSON or a well-formed 4xx problem, never a 5xx.

const SEED = 20_261_122;
const RUNS = 150;
type Method = 'GET' | 'POST' | 'PATCH';
type Kind = 'bot' | 'conv' | 'lead';

interface Operation {
  name: string;
  method: Method;
  path: (id: string) => string;
  idKind?: Kind;
  query: string[];
  /** A valid body, mutated by the generator (write operations only). */
  valid?: Record<string, unknown>;
}

const PAGE = ['limit', 'cursor', 'created_after', 'created_before'];
const OPERATIONS: Operation[] = [
  { name: 'GET /analytics', method: 'GET', path: () => '/api/v1/analytics', query: ['from', 'to', 'chatbot_id'] },
  { name: 'GET /chatbots', method: 'GET', path: () => '/api/v1/chatbots', query: [...PAGE, 'status'] },
  {
    name: 'POST /chatbots',
    method: 'POST',
    path: () => '/api/v1/chatbots',
    query: [],
    valid: {
      name: 'Agent',
      description: 'd',
      instructions: 'Be brief.',
      welcome_message: 'Hi',
      model: 'm',
      temperature: 0.5,
      knowledge: [{ title: 't', content: 'c' }],
      lead_capture: { enabled: true, fields: ['email'], prompt: null },
      allowed_origins: ['https://example.com'],
      metadata: { a: 'b' },
    },
  },
  { name: 'GET /chatbots/{id}', method: 'GET', path: (id) => `/api/v1/chatbots/${id}`, idKind: 'bot', query: [] },
  {
    name: 'PATCH /chatbots/{id}',
    method: 'PATCH',
    path: (id) => `/api/v1/chatbots/${id}`,
    idKind: 'bot',
    query: [],
    valid: { name: 'Renamed', status: 'active', instructions: 'x', temperature: 1, metadata: {}, knowledge: [] },
  },
  { name: 'GET /conversations', method: 'GET', path: () => '/api/v1/conversations', query: [...PAGE, 'chatbot_id', 'status', 'channel'] },
  { name: 'GET /conversations/{id}', method: 'GET', path: (id) => `/api/v1/conversations/${id}`, idKind: 'conv', query: [] },
  { name: 'GET /conversations/{id}/messages', method: 'GET', path: (id) => `/api/v1/conversations/${id}/messages`, idKind: 'conv', query: [...PAGE, 'order'] },
  {
    name: 'POST /conversations/{id}/messages',
    method: 'POST',
    path: (id) => `/api/v1/conversations/${id}/messages`,
    idKind: 'conv',
    query: [],
    valid: { content: 'Hello', role: 'operator' },
  },
  { name: 'GET /leads', method: 'GET', path: () => '/api/v1/leads', query: [...PAGE, 'chatbot_id', 'conversation_id', 'status', 'email', 'updated_after'] },
  {
    name: 'POST /leads',
    method: 'POST',
    path: () => '/api/v1/leads',
    query: [],
    valid: { name: 'Ada', email: 'ada@example.com', phone: '+44 20 7946 0000', company: 'ACME', status: 'new', custom_fields: { k: 'v' } },
  },
  { name: 'GET /leads/{id}', method: 'GET', path: (id) => `/api/v1/leads/${id}`, idKind: 'lead', query: [] },
  {
    name: 'PATCH /leads/{id}',
    method: 'PATCH',
    path: (id) => `/api/v1/leads/${id}`,
    idKind: 'lead',
    query: [],
    valid: { name: 'Grace', email: 'grace@example.com', phone: null, status: 'qualified', custom_fields: {} },
  },
];

let t: TestApp;
let tenant: Tenant;
const ids: Record<Kind, string[]> = { bot: [], conv: [], lead: [] };

beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.tenant();
  const draft = await makeChatbot(tenant);
  const active = await makeChatbot(tenant, { name: 'Live' });
  expect((await tenant.request('PATCH', `/api/v1/chatbots/${active.id}`, { status: 'active' })).statusCode).toBe(200);
  const open = await makeConversation(t.app, tenant, active.id);
  const closed = await makeConversation(t.app, tenant, active.id);
  await t.app.services.conversations.close(systemContext(tenant.workspaceId, 'test'), closed.id);
  expect((await tenant.request('POST', `/api/v1/conversations/${open.id}/messages`, { content: 'Hi' })).statusCode).toBe(201);
  const lead = await makeLead(tenant, { conversation_id: open.id });
  const phoneLead = await makeLead(tenant, { email: null, phone: '+1 555 0100' });
  ids.bot.push(draft.id, active.id);
  ids.conv.push(open.id, closed.id);
  ids.lead.push(lead.id, phoneLead.id);
});
afterAll(() => t.close());

// ---- generators ----

const anyRealId = () => fc.constantFrom(...ids.bot, ...ids.conv, ...ids.lead);
const dateText = fc.date().map((d) => (Number.isNaN(d.getTime()) ? 'Invalid Date' : d.toISOString()));
const recentDate = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true });
const queryValue = () =>
  fc.oneof(
    fc.string(),
    fc.string({ unit: 'grapheme', maxLength: 30 }),
    fc.integer().map(String),
    fc.integer({ min: 1, max: 100 }).map(String),
    fc.double().map(String),
    dateText,
    recentDate.map((d) => d.toISOString()),
    recentDate.map((d) => d.toISOString().slice(0, 10)),
    fc.constantFrom('', '0', '1', '-1', '100', '101', '1e3', 'true', 'null', 'draft', 'active', 'open', 'closed', 'widget', 'api', 'asc', 'desc', 'new', 'qualified'),
    anyRealId(),
    fc.string({ minLength: 100, maxLength: 600 }),
  );
const queryString = (op: Operation) =>
  fc
    .tuple(
      fc.array(fc.tuple(op.query.length > 0 ? fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...op.query) }, fc.string({ maxLength: 12 })) : fc.string({ maxLength: 12 }), queryValue()), { maxLength: 4 }),
      fc.option(fc.string({ unit: fc.constantFrom('&', '=', '%', 'a', '1', '[', ']', '+', ';', ','), maxLength: 8 }), { freq: 6 }),
    )
    .map(([pairs, junk]) => [new URLSearchParams(pairs).toString(), junk ?? ''].filter((part) => part !== '').join('&'));
const maybeQuery = (op: Operation) => fc.oneof({ weight: 1, arbitrary: fc.constant('') }, { weight: 3, arbitrary: queryString(op) });

const stringify = (value: unknown) => {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return 'null';
  }
};
const mutated = (valid: Record<string, unknown>) =>
  fc
    .record({
      drop: fc.subarray(Object.keys(valid), { maxLength: Math.min(3, Object.keys(valid).length) }),
      set: fc.option(
        fc.dictionary(
          fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...Object.keys(valid)) }, fc.string({ maxLength: 10 })),
          fc.oneof(fc.jsonValue(), fc.string({ maxLength: 300 }), fc.constantFrom(null, '', 'active', 'paused', 'archived', 'draft', 'user', 'operator', 'converted')),
          { maxKeys: 2 },
        ),
        { freq: 2 },
      ),
    })
    .map(({ drop, set }) => {
      const body: Record<string, unknown> = { ...valid };
      for (const key of drop) delete body[key];
      for (const [key, value] of Object.entries(set ?? {})) Object.defineProperty(body, key, { value, enumerable: true, writable: true, configurable: true });
      return JSON.stringify(body);
    });
const bodyText = (op: Operation) =>
  fc.oneof(
    { weight: 3, arbitrary: op.valid ? mutated(op.valid) : fc.constant('{}') },
    fc.anything().map(stringify),
    fc.json(),
    fc.object().map(stringify),
    fc.string(),
    fc.constantFrom('', '{', '[]', 'null', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}'),
  );
const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant<string | undefined>('application/json') },
  fc.constantFrom<string | undefined>('application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'application/merge-patch+json', 'application/xml', undefined),
);
const pathId = (kind: Kind) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...ids[kind]) },
    anyRealId(),
    fc.string({ maxLength: 40 }).map(encodeURIComponent),
    fc.string({ unit: 'grapheme', maxLength: 20 }).map(encodeURIComponent),
  );

interface Input {
  id: string;
  query: string;
  body: string | null;
  type: string | undefined;
  ifMatch: string | null;
}
const inputFor = (op: Operation): fc.Arbitrary<Input> =>
  fc.record({
    id: op.idKind ? pathId(op.idKind) : fc.constant(''),
    query: maybeQuery(op),
    body: op.method === 'GET' ? fc.option(bodyText(op), { freq: 4 }) : bodyText(op),
    type: contentType,
    ifMatch: op.method === 'PATCH' ? fc.option(fc.oneof(fc.string(), fc.constant('*'), fc.constant('"stale"')), { freq: 2 }) : fc.constant(null),
  });

// ---- the property ----

async function send(op: Operation, input: Input): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { authorization: `Bearer ${tenant.key}` };
  if (input.body !== null && input.type !== undefined) headers['content-type'] = input.type;
  if (input.ifMatch !== null) headers['if-match'] = input.ifMatch;
  const url = op.path(input.id) + (input.query ? `?${input.query}` : '');
  return t.app.inject({ method: op.method, url, headers, ...(input.body !== null ? { payload: input.body } : {}) });
}

/** Why the response breaks the contract (null when it keeps it). */
function defect(res: LightMyRequestResponse): string | null {
  if (res.statusCode >= 200 && res.statusCode < 300) {
    if (!String(res.headers['content-type']).startsWith('application/json')) return `2xx with content-type ${String(res.headers['content-type'])}`;
    try {
      JSON.parse(res.body);
      return null;
    } catch {
      return '2xx body is not JSON';
    }
  }
  return problemDefect(res);
}

describe('every operation answers 2xx or a well-formed 4xx problem to random input', () => {
  it.each(OPERATIONS.map((op) => [op.name, op] as const))('%s', async (_name, op) => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(inputFor(op), async (input) => {
        const res = await send(op, input);
        seen.set(res.statusCode, (seen.get(res.statusCode) ?? 0) + 1);
        expect(defect(res), `${op.method} ${op.path(input.id)}?${input.query} → ${res.statusCode} ${res.body.slice(0, 300)}`).toBeNull();
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    // The generators reach both the accepting and the refusing paths (the property is not vacuous).
    const statuses = [...seen.keys()];
    expect(statuses.some((status) => status < 300), JSON.stringify([...seen])).toBe(true);
    expect(statuses.some((status) => status >= 400), JSON.stringify([...seen])).toBe(true);
  });
});

describe('random path ids get a 404 problem', () => {
  const withId = OPERATIONS.filter((op) => op.idKind);
  const body = (op: Operation) => (op.valid ? JSON.stringify(op.name.startsWith('POST') ? { content: 'x' } : {}) : null);

  it.each(withId.map((op) => [op.name, op] as const))('%s', async (_name, op) => {
    const id = fc.oneof(
      fc.string({ maxLength: 300, size: 'max' }).map(encodeURIComponent),
      fc.string({ unit: 'grapheme', maxLength: 120, size: 'max' }).map(encodeURIComponent),
      fc.stringMatching(/^[a-z]{2,5}_[0-9A-Z]{20,140}$/, { size: 'max' }),
    );
    await fc.assert(
      fc.asyncProperty(id, async (raw) => {
        const res = await send(op, { id: raw, query: '', body: body(op), type: 'application/json', ifMatch: null });
        const summary = `${op.method} ${op.path(raw)} → ${res.statusCode} ${res.body.slice(0, 200)}`;
        expect(problemDefect(res), summary).toBeNull();
        expect(res.statusCode, summary).toBe(404);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });
});

describe('after the storm', () => {
  it('the service is still ready and the seeded resources still read', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    for (const lead of ids.lead) expect((await tenant.request('GET', `/api/v1/leads/${lead}`)).statusCode).toBe(200);
  });
});
