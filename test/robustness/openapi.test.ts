import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import createClient from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import type { paths } from '../generated/api-v1.js';

// The served OpenAPI document is valid, complete and honest: it lists exactly the specification's
// operations with their scopes and conventions, and a client generated from it works against the server.

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- walking a JSON document

/** The specification's operations (spec/api-v1-spec.md §4) and their scopes. */
const SPEC: [string, string, string][] = [
  ['get', '/analytics', 'analytics:read'],
  ['get', '/analytics/unanswered', 'analytics:read'], // issue 31
  ['get', '/chatbots', 'chatbots:read'],
  ['post', '/chatbots', 'chatbots:write'],
  ['get', '/chatbots/{id}', 'chatbots:read'],
  ['patch', '/chatbots/{id}', 'chatbots:write'],
  ['get', '/conversations', 'conversations:read'],
  ['get', '/conversations/export', 'conversations:read'], // issue 33 §6
  ['get', '/conversations/{id}', 'conversations:read'],
  ['get', '/conversations/{id}/messages', 'conversations:read'],
  ['post', '/conversations/{id}/messages', 'messages:write'],
  ['get', '/leads', 'leads:read'],
  ['post', '/leads', 'leads:write'],
  ['get', '/leads/{id}', 'leads:read'],
  ['patch', '/leads/{id}', 'leads:write'],
  // Knowledge sources (issue 30).
  ['get', '/chatbots/{id}/sources', 'chatbots:read'],
  ['post', '/chatbots/{id}/sources', 'chatbots:write'],
  ['get', '/chatbots/{id}/sources/{source_id}', 'chatbots:read'],
  ['delete', '/chatbots/{id}/sources/{source_id}', 'chatbots:write'],
  ['post', '/chatbots/{id}/sources/{source_id}/sync', 'chatbots:write'],
  ['get', '/chatbots/{id}/sources/{source_id}/documents', 'chatbots:read'],
  ['get', '/chatbots/{id}/knowledge/search', 'chatbots:read'],
  ['get', '/events', 'events:read'], // issue 32
  // Webhooks (issue 32, point 4).
  ['post', '/webhook_endpoints', 'webhooks:write'],
  ['get', '/webhook_endpoints', 'webhooks:read'],
  ['get', '/webhook_endpoints/{id}', 'webhooks:read'],
  ['patch', '/webhook_endpoints/{id}', 'webhooks:write'],
  ['delete', '/webhook_endpoints/{id}', 'webhooks:write'],
  ['post', '/webhook_endpoints/{id}/rotate_secret', 'webhooks:write'],
  ['get', '/webhook_endpoints/{id}/deliveries', 'webhooks:read'],
  ['post', '/webhook_endpoints/{id}/test', 'webhooks:write'],
  ['post', '/webhook_endpoints/{id}/deliveries/{delivery_id}/resend', 'webhooks:write'],
];
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

let t: TestApp;
let doc: Json;

beforeAll(async () => {
  t = await createTestApp();
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/openapi' });
  expect(res.statusCode).toBe(200);
  doc = res.json();
});
afterAll(() => t.close());

function operations(): { method: string; path: string; op: Json }[] {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, op]) => ({ method, path, op: op as Json })),
  );
}
const header = (headers: Json | undefined, name: string) =>
  Object.entries(headers ?? {}).find(([key]) => key.toLowerCase() === name.toLowerCase())?.[1] as Json | undefined;

describe('the document', () => {
  it('is served without a key as JSON, OpenAPI 3.1', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/openapi' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(doc.openapi).toMatch(/^3\.1\./);
  });

  it('lints clean with the recommended rules and operation-4xx-problem-details-rfc7807 as an error', async () => {
    const config = await createConfig({ extends: ['recommended'], rules: { 'operation-4xx-problem-details-rfc7807': 'error' } });
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: 'openapi.json', config });
    const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? ''}`);
    expect(errors).toEqual([]);

    // The linter is live: a 4xx answered with plain JSON is reported by the RFC 7807 rule.
    const broken = structuredClone(doc);
    const notFound = broken.paths['/chatbots/{id}'].get.responses['404'];
    notFound.content = { 'application/json': notFound.content['application/problem+json'] };
    const flagged = await lintFromString({ source: JSON.stringify(broken), absoluteRef: 'openapi.json', config });
    expect(flagged.some((p) => p.severity === 'error' && p.ruleId.includes('operation-4xx-problem-details-rfc7807'))).toBe(true);
  });

  it('lists exactly the operations of the specification, with unique operationIds and a summary each', () => {
    const listed = operations().map(({ method, path }) => `${method} ${path}`).sort();
    expect(listed).toEqual(SPEC.map(([method, path]) => `${method} ${path}`).sort());
    const ids = operations().map(({ op }) => op.operationId);
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(SPEC.length);
    for (const { method, path, op } of operations()) expect(String(op.summary ?? '').trim(), `${method} ${path}`).not.toBe('');
  });

  it('gives every operation bearerAuth, x-required-scopes equal to the spec scope, and names the scope in its description', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const [method, path, scope] of SPEC) {
      const op = doc.paths[path][method] as Json;
      expect(op.security, `${method} ${path}`).toEqual([{ bearerAuth: [] }]);
      expect(op['x-required-scopes'], `${method} ${path}`).toEqual([scope]);
      expect(op.description, `${method} ${path}`).toContain(scope);
    }
  });

  it('documents the optional Idempotency-Key header on every POST', () => {
    const posts = operations().filter(({ method }) => method === 'post');
    expect(posts).toHaveLength(SPEC.filter(([method]) => method === 'post').length);
    for (const { path, op } of posts) {
      const param = (op.parameters as Json[] | undefined)?.find((p) => p.in === 'header' && String(p.name).toLowerCase() === 'idempotency-key');
      expect(param, `POST ${path}`).toBeDefined();
      expect(param?.required ?? false, `POST ${path}`).toBe(false);
      expect(param?.schema?.type, `POST ${path}`).toBe('string');
    }
  });

  it('documents 401, 403, 429 and 500 on every operation, and every 4xx as application/problem+json', () => {
    for (const { method, path, op } of operations()) {
      const responses = op.responses as Json;
      for (const status of ['401', '403', '429', '500']) expect(Object.keys(responses), `${method} ${path}`).toContain(status);
      for (const [status, response] of Object.entries(responses).filter(([s]) => s.startsWith('4'))) {
        expect(Object.keys((response as Json).content ?? {}), `${method} ${path} ${status}`).toEqual(['application/problem+json']);
      }
    }
  });

  it('documents Retry-After on 429, and RateLimit and RateLimit-Policy on every answer a key can be charged for', () => {
    for (const { method, path, op } of operations()) {
      const responses = op.responses as Json;
      expect(header(responses['429'].headers, 'Retry-After'), `${method} ${path} 429`).toBeDefined();
      // Every success and every refusal after authentication (401 precedes knowing whose budget to charge).
      const charged = Object.entries(responses).filter(([status]) => /^[24]/.test(status) && status !== '401');
      expect(charged.length).toBeGreaterThan(3);
      for (const [status, response] of charged) {
        for (const name of ['RateLimit', 'RateLimit-Policy']) expect(header((response as Json).headers, name), `${method} ${path} ${status} ${name}`).toBeDefined();
      }
    }
  });

  it('serves a /docs page that mentions every operation path', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toMatch(/^<!doctype html>/i);
    for (const [method, path] of SPEC) {
      expect(res.body, path).toContain(`/api/v1${path}`);
      expect(res.body, `${method} ${path}`).toContain(`id="${doc.paths[path][method].operationId}"`);
    }
  });
});

describe('a client generated from the document works against the server', () => {
  let tenant: Tenant;
  let client: ReturnType<typeof createClient<paths>>;
  const ajv = new Ajv({ strict: false, allErrors: true });
  (addFormatsModule as unknown as (a: Ajv) => Ajv)(ajv);

  /** Asserts a body matches the document's schema for that operation and status. */
  function conforms(path: string, method: string, status: number, body: unknown): void {
    const content = doc.paths[path][method].responses[String(status)].content as Json;
    const schema = (content['application/json'] ?? content['application/problem+json']).schema as Json;
    // Shared shapes are $refs into components.schemas: compile beside them.
    const validate = ajv.compile({ allOf: [schema], components: doc.components });
    expect(validate(body), `${method} ${path} ${status}: ${ajv.errorsText(validate.errors)}`).toBe(true);
  }

  beforeAll(async () => {
    tenant = await t.tenant();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    client = createClient<paths>({ baseUrl: `http://127.0.0.1:${address.port}/api/v1`, headers: { Authorization: `Bearer ${tenant.key}` } });
  });

  it('creates, publishes and reads an AI Agent, captures and lists leads, and reads analytics', async () => {
    const created = await client.POST('/chatbots', {
      params: { header: { 'idempotency-key': `typed-${Date.now()}` } },
      body: { name: 'Typed agent', instructions: 'Answer questions about ACME.', temperature: 0.3, metadata: { team: 'sales' } },
    });
    expect(created.error).toBeUndefined();
    expect(created.response.status).toBe(201);
    const bot = created.data!;
    conforms('/chatbots', 'post', 201, bot);
    expect(bot).toMatchObject({ object: 'chatbot', name: 'Typed agent', status: 'draft', temperature: 0.3, metadata: { team: 'sales' }, published_at: null });
    expect(created.response.headers.get('location')).toBe(`/api/v1/chatbots/${bot.id}`);

    const published = await client.PATCH('/chatbots/{id}', { params: { path: { id: bot.id } }, body: { status: 'active' } });
    expect(published.response.status).toBe(200);
    conforms('/chatbots/{id}', 'patch', 200, published.data);
    expect(published.data?.status).toBe('active');
    expect(published.data?.published_at).toEqual(expect.any(String));
    expect(published.response.headers.get('etag')).toBeTruthy();

    const read = await client.GET('/chatbots/{id}', { params: { path: { id: bot.id } } });
    conforms('/chatbots/{id}', 'get', 200, read.data);
    expect(read.data?.status).toBe('active');

    const lead = await client.POST('/leads', { body: { chatbot_id: bot.id, name: 'Ada', email: 'Ada@Example.com', custom_fields: { plan: 'pro' } } });
    expect(lead.response.status).toBe(201);
    conforms('/leads', 'post', 201, lead.data);
    expect(lead.data).toMatchObject({ object: 'lead', chatbot_id: bot.id, email: 'ada@example.com', status: 'new', source: 'api' });
    await client.POST('/leads', { body: { chatbot_id: bot.id, phone: '+1 555 0100' } });

    const page = await client.GET('/leads', { params: { query: { chatbot_id: bot.id, limit: 1 } } });
    expect(page.response.status).toBe(200);
    conforms('/leads', 'get', 200, page.data);
    expect(page.data?.data).toHaveLength(1);
    expect(page.data?.has_more).toBe(true);
    const next = await client.GET('/leads', { params: { query: { chatbot_id: bot.id, limit: 1, cursor: page.data!.next_cursor! } } });
    expect(next.data?.data.map((l) => l.email)).toEqual(['ada@example.com']);
    expect(next.data?.has_more).toBe(false);

    const analytics = await client.GET('/analytics', { params: { query: { chatbot_id: bot.id } } });
    expect(analytics.response.status).toBe(200);
    conforms('/analytics', 'get', 200, analytics.data);
    expect(analytics.data).toMatchObject({ object: 'analytics_summary', chatbot_id: bot.id, chatbots: { total: 1, active: 1 }, leads: { total: 2 } });
    expect(analytics.data?.daily.length).toBeGreaterThanOrEqual(30);
  });

  it('receives the documented problem for a refusal', async () => {
    const missing = await client.GET('/chatbots/{id}', { params: { path: { id: 'bot_nope' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    conforms('/chatbots/{id}', 'get', 404, missing.error);
    expect(missing.error).toMatchObject({ status: 404, code: 'not_found' });

    const invalid = await client.POST('/leads', { body: { name: 'No contact' } });
    expect(invalid.response.status).toBe(400);
    conforms('/leads', 'post', 400, invalid.error);
    expect(invalid.error?.code).toBe('validation_failed');
  });
});
