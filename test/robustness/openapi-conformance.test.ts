import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { makeChatbot } from '../helpers/factories.js';
import { expectProblem } from '../helpers/http.js';

// The document is precise where clients rely on it: shared shapes as components, date formats, If-Match,
// 503, the lead's contact rule, the 429 member's name, and a 409 that names only the moves really open.

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- walking a JSON document

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const SHARED = ['Problem', 'Chatbot', 'Lead', 'Conversation', 'Message', 'ChatbotList', 'LeadList', 'ConversationList', 'MessageList'];

let t: TestApp;
let tenant: Tenant;
let doc: Json;

beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.tenant();
  doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi' })).json();
});
afterAll(() => t.close());

function operations(): { label: string; method: string; path: string; op: Json }[] {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, op]) => ({ label: `${method.toUpperCase()} ${path}`, method, path, op: op as Json })),
  );
}

/** Every object in a JSON value, depth first. */
function* objects(value: unknown): Generator<Json> {
  if (Array.isArray(value)) for (const item of value) yield* objects(item);
  else if (value !== null && typeof value === 'object') {
    yield value as Json;
    for (const child of Object.values(value)) yield* objects(child);
  }
}

describe('shared shapes', () => {
  it('are components.schemas, and the paths hold no inline copy of them', () => {
    const components = (doc.components?.schemas ?? {}) as Json;
    for (const name of SHARED) expect(components[name], name).toBeDefined();
    const inlineProblems = [...objects(doc.paths)].filter((o) => o.title === 'Problem' || (o.properties && o.properties.request_id && o.properties.code));
    expect(inlineProblems.length).toBe(0);
    const inlineShared = [...objects(doc.paths)].filter((o) => typeof o.title === 'string' && SHARED.includes(o.title as string));
    expect(inlineShared.map((o) => o.title)).toEqual([]);
  });

  it('every problem response and every success of a shared shape is a $ref', () => {
    for (const { label, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses as Json)) {
        const content = (response as Json).content as Json | undefined;
        if (!content) continue;
        const [type, media] = Object.entries(content)[0]!;
        if (type === 'application/problem+json') expect((media as Json).schema, `${label} ${status}`).toEqual({ $ref: '#/components/schemas/Problem' });
        else expect(String((media as Json).schema.$ref ?? ''), `${label} ${status}`).toMatch(/^#\/components\/schemas\//);
      }
    }
    const refs = new Set([...objects(doc.paths)].map((o) => o.$ref).filter(Boolean));
    for (const name of ['Problem', 'Chatbot', 'ChatbotList', 'Lead', 'LeadList', 'Conversation', 'ConversationList', 'Message', 'MessageList']) {
      expect(refs.has(`#/components/schemas/${name}`), name).toBe(true);
    }
  });

  it('the 429 problem member is violated-policies (the RateLimit draft\'s name)', () => {
    const problem = doc.components.schemas.Problem as Json;
    expect(Object.keys(problem.properties)).toContain('violated-policies');
    expect(Object.keys(problem.properties)).not.toContain('violated_policies');
  });
});

describe('parameters and statuses', () => {
  it('/analytics from and to declare their date format (a date or a date-time)', () => {
    const params = doc.paths['/analytics'].get.parameters as Json[];
    for (const name of ['from', 'to']) {
      const schema = params.find((p) => p.in === 'query' && p.name === name)?.schema as Json;
      const formats = (schema.anyOf ?? [schema]).map((s: Json) => s.format).sort();
      expect(formats, name).toEqual(['date', 'date-time']);
    }
  });

  it('every PATCH operation declares the If-Match header parameter', () => {
    const patches = operations().filter(({ method }) => method === 'patch');
    expect(patches.map(({ path }) => path).sort()).toEqual(['/chatbots/{id}', '/leads/{id}', '/webhook_endpoints/{id}']);
    for (const { label, op } of patches) {
      const param = ((op.parameters ?? []) as Json[]).find((p) => p.in === 'header' && String(p.name).toLowerCase() === 'if-match');
      expect(param, label).toBeDefined();
      expect(param?.required ?? false, label).toBe(false);
      expect(param?.schema?.type, label).toBe('string');
    }
  });

  it('every operation declares 503 with Retry-After', () => {
    for (const { label, op } of operations()) {
      const unavailable = (op.responses as Json)['503'] as Json | undefined;
      expect(unavailable, label).toBeDefined();
      expect(Object.keys(unavailable!.headers ?? {}), label).toContain('Retry-After');
      expect(unavailable!.content['application/problem+json'].schema, label).toEqual({ $ref: '#/components/schemas/Problem' });
    }
  });
});

describe('the lead\'s contact rule', () => {
  it('is in the schema of POST /leads: anyOf a required email or a required phone', () => {
    const ref = doc.paths['/leads'].post.requestBody.content['application/json'].schema as Json;
    const schema = (ref.$ref ? doc.components.schemas[String(ref.$ref).split('/').pop()!] : ref) as Json;
    const required = (schema.anyOf as Json[]).map((branch) => branch.required).sort();
    expect(required).toEqual([['email'], ['phone']]);
  });

  it('still gives the same 400 for neither (absent or null)', async () => {
    for (const body of [{ name: 'No contact' }, { email: null, phone: null }, { name: 'x', phone: null }]) {
      const problem = expectProblem(await tenant.request('POST', '/api/v1/leads', body), 400, 'validation_failed');
      expect(problem.detail, JSON.stringify(body)).toBe('A lead needs an email or a phone number.');
      expect(problem.errors, JSON.stringify(body)).toEqual([
        { pointer: '/email', message: 'an email or a phone is required' },
        { pointer: '/phone', message: 'an email or a phone is required' },
      ]);
    }
    // Either one is enough; a bad one is reported on its own pointer only.
    expect((await tenant.request('POST', '/api/v1/leads', { phone: '+1 555 0100', email: null })).statusCode).toBe(201);
    expect((await tenant.request('POST', '/api/v1/leads', { email: 'only@example.com' })).statusCode).toBe(201);
    const bad = expectProblem(await tenant.request('POST', '/api/v1/leads', { email: 'nope' }), 400, 'validation_failed');
    expect(bad.errors?.map((e) => e.pointer)).toEqual(['/email']);
  });
});

describe('409 invalid_status_transition', () => {
  const statuses = ['draft', 'active', 'paused', 'archived'];

  it('lists exactly the moves open from the current state, and its detail names no other', async () => {
    // A publishable draft asked to pause: it could be published or archived.
    const ready = await makeChatbot(tenant);
    const paused = expectProblem(await tenant.request('PATCH', `/api/v1/chatbots/${ready.id}`, { status: 'paused' }), 409, 'invalid_status_transition');
    expect(paused.allowed_transitions).toEqual(['active', 'archived']);
    // A draft with nothing to answer with cannot be published: only archiving is open.
    const empty = await makeChatbot(tenant, { instructions: '' });
    for (const to of ['active', 'paused']) {
      const problem = expectProblem(await tenant.request('PATCH', `/api/v1/chatbots/${empty.id}`, { status: to }), 409, 'invalid_status_transition');
      expect(problem.allowed_transitions, to).toEqual(['archived']);
      for (const status of statuses.filter((s) => s !== 'draft' && s !== 'archived')) expect(problem.detail, `${to}: ${problem.detail}`).not.toContain(`"${status}"`);
    }
    // An active agent asked to become a draft.
    await tenant.request('PATCH', `/api/v1/chatbots/${ready.id}`, { status: 'active' });
    const back = expectProblem(await tenant.request('PATCH', `/api/v1/chatbots/${ready.id}`, { status: 'draft' }), 409, 'invalid_status_transition');
    expect(back.allowed_transitions).toEqual(['paused', 'archived']);
    for (const problem of [paused, back]) {
      const open = problem.allowed_transitions as string[];
      for (const status of statuses.filter((s) => !open.includes(s) && s !== problem.from)) {
        expect(problem.detail, problem.detail).not.toContain(`"${status}"`);
        expect(problem.detail, problem.detail).not.toMatch(new RegExp(`\\b${status}\\b`));
      }
    }
  });
});
