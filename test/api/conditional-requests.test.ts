import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { makeChatbot, makeConversation, makeLead } from '../helpers/factories.js';
import { expectProblem } from './support.js';

// RFC 9110 §13.1.2: a GET whose If-None-Match matches the current ETag (weak comparison, `*`, or one of a
// list) answers 304 with the ETag and no body; anything else answers 200 as usual.

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- reading a JSON document

let t: TestApp;
let tenant: Tenant;
const urls: Record<string, string> = {};

beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.tenant();
  const bot = await makeChatbot(tenant);
  const conversation = await makeConversation(t.app, tenant, bot.id);
  const lead = await makeLead(tenant);
  urls.chatbot = `/api/v1/chatbots/${bot.id}`;
  urls.conversation = `/api/v1/conversations/${conversation.id}`;
  urls.lead = `/api/v1/leads/${lead.id}`;
});
afterAll(() => t.close());

describe.each(['chatbot', 'conversation', 'lead'])('GET one %s with If-None-Match', (kind) => {
  it('answers 304 with the ETag and no body when a tag matches (exact, weak, in a list, or *)', async () => {
    const first = await tenant.request('GET', urls[kind]!);
    expect(first.statusCode).toBe(200);
    const etag = String(first.headers.etag);
    expect(etag).toMatch(/^"[^"]+"$/);
    for (const condition of [etag, `W/${etag}`, `"other", ${etag}`, `"a",W/${etag} , "b"`, '*']) {
      const again = await tenant.request('GET', urls[kind]!, undefined, { 'if-none-match': condition });
      expect(again.statusCode, `If-None-Match: ${condition}`).toBe(304);
      expect(again.headers.etag, condition).toBe(etag);
      expect(again.body, condition).toBe('');
      expect(again.headers['content-length'] ?? '0', condition).toBe('0');
    }
  });

  it('answers 200 with the body when no tag matches', async () => {
    const first = await tenant.request('GET', urls[kind]!);
    for (const condition of ['"stale"', `"x${String(first.headers.etag).slice(1)}`, `"a", "b"`]) {
      const again = await tenant.request('GET', urls[kind]!, undefined, { 'if-none-match': condition });
      expect(again.statusCode, condition).toBe(200);
      expect(again.json(), condition).toEqual(first.json());
      expect(again.headers.etag).toBe(first.headers.etag);
    }
  });
});

describe('conditional GETs after a change', () => {
  it('an ETag read before a PATCH no longer matches: 200 with the new version', async () => {
    const lead = await makeLead(tenant);
    const url = `/api/v1/leads/${lead.id}`;
    const before = String((await tenant.request('GET', url)).headers.etag);
    const patched = await tenant.request('PATCH', url, { company: 'Changed' });
    expect(patched.statusCode).toBe(200);
    const after = await tenant.request('GET', url, undefined, { 'if-none-match': before });
    expect(after.statusCode).toBe(200);
    expect(after.json().company).toBe('Changed');
    expect(after.headers.etag).toBe(patched.headers.etag);
    expect((await tenant.request('GET', url, undefined, { 'if-none-match': String(patched.headers.etag) })).statusCode).toBe(304);
  });

  it('If-None-Match: * on a missing resource is still 404, and a PATCH ignores If-None-Match', async () => {
    expectProblem(await tenant.request('GET', '/api/v1/leads/lead_01ARZ3NDEKTSV4RRFFQ69G5FAV', undefined, { 'if-none-match': '*' }), 404, 'not_found');
    const lead = await makeLead(tenant);
    const url = `/api/v1/leads/${lead.id}`;
    const etag = String((await tenant.request('GET', url)).headers.etag);
    const patched = await tenant.request('PATCH', url, { company: 'Again' }, { 'if-none-match': etag });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().company).toBe('Again');
  });

  it('a list (no ETag) ignores If-None-Match', async () => {
    const res = await tenant.request('GET', '/api/v1/leads', undefined, { 'if-none-match': '*' });
    expect(res.statusCode).toBe(200);
    expect(res.json().object).toBe('list');
  });
});

describe('the OpenAPI document', () => {
  it('declares 304 (with ETag) and the If-None-Match parameter on every GET that sends an ETag, and nowhere else', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi' })).json() as Json;
    const gets = Object.entries(doc.paths as Json).filter(([, item]) => (item as Json).get).map(([path, item]) => [path, (item as Json).get as Json] as const);
    expect(gets.length).toBeGreaterThan(5);
    for (const [path, op] of gets) {
      const sendsEtag = Object.keys(op.responses['200'].headers ?? {}).includes('ETag');
      const notModified = op.responses['304'] as Json | undefined;
      const param = ((op.parameters ?? []) as Json[]).find((p) => p.in === 'header' && String(p.name).toLowerCase() === 'if-none-match');
      if (sendsEtag) {
        expect(notModified, path).toBeDefined();
        expect(Object.keys(notModified!.headers ?? {}), path).toContain('ETag');
        expect(notModified!.content, path).toBeUndefined();
        expect(param, path).toBeDefined();
      } else {
        expect(notModified, path).toBeUndefined();
        expect(param, path).toBeUndefined();
      }
    }
    expect(gets.filter(([, op]) => op.responses['304']).map(([path]) => path).sort()).toEqual(['/chatbots/{id}', '/conversations/{id}', '/leads/{id}', '/webhook_endpoints/{id}']);
  });
});
