import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { makeChatbot } from '../helpers/factories.js';

// Serving the widget script and the hosted chat page (no browser here; test/browser drives one).

let t: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  t = await createTestApp();
  tenant = await t.tenant();
});
afterAll(() => t.close());

async function agent(status: 'draft' | 'active' | 'paused', name = 'Opening hours helper') {
  const bot = await makeChatbot(tenant, { name });
  if (status !== 'draft') await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { status: 'active' });
  if (status === 'paused') await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { status: 'paused' });
  return bot as { id: string };
}

describe('GET /widget.js', () => {
  it('serves the widget file as public, cacheable JavaScript any site may load', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/widget.js', headers: { origin: 'https://customer.example' } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(response.headers['cache-control']).toBe('public, max-age=300');
    expect(response.headers['access-control-allow-origin']).toBe('*');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(response.body).toBe(readFileSync(new URL('../../widget/widget.js', import.meta.url), 'utf8'));
  });

  it('answers 304 to a matching If-None-Match (also in a list or weak), 200 otherwise', async () => {
    const first = await t.app.inject({ method: 'GET', url: '/widget.js' });
    const etag = first.headers.etag as string;
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await t.app.inject({ method: 'GET', url: '/widget.js', headers: { 'if-none-match': header } });
      expect(again.statusCode, header).toBe(304);
      expect(again.body).toBe('');
      expect(again.headers.etag).toBe(etag);
      expect(again.headers['cache-control']).toBe('public, max-age=300');
    }
    const changed = await t.app.inject({ method: 'GET', url: '/widget.js', headers: { 'if-none-match': '"stale"' } });
    expect(changed.statusCode).toBe(200);
    expect(changed.body.length).toBeGreaterThan(1000);
  });

  it('never inserts markup from text: the script has no innerHTML, outerHTML, insertAdjacentHTML or document.write', () => {
    const source = readFileSync(new URL('../../widget/widget.js', import.meta.url), 'utf8');
    expect(source).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function/);
  });
});

describe('GET /chat/{chatbot_id}', () => {
  it('serves the full-page chat of an active agent: its name as the title, the widget in page mode, a strict CSP', async () => {
    const bot = await agent('active', 'Café <Hours> & "More"');
    const response = await t.app.inject({ method: 'GET', url: `/chat/${bot.id}` });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.body).toContain('<title>Chat with Café &lt;Hours&gt; &amp; &quot;More&quot;</title>');
    expect(response.body).toContain(`<script src="../widget.js" data-chatbot-id="${bot.id}" data-mode="page"></script>`);
    const csp = response.headers['content-security-policy'] as string;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
  });

  it('answers a friendly HTML page with 404 for an unknown or malformed id', async () => {
    for (const id of ['bot_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'nope', 'bot_%3Cscript%3E']) {
      const response = await t.app.inject({ method: 'GET', url: `/chat/${id}` });
      expect(response.statusCode, id).toBe(404);
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.body).toContain('<title>Chat not found</title>');
      expect(response.body).not.toContain('<script');
      expect(response.headers['content-security-policy']).toContain("default-src 'none'");
    }
  });

  it('answers 409 with a friendly page for a draft or paused agent, naming it safely', async () => {
    for (const status of ['draft', 'paused'] as const) {
      const bot = await agent(status, '<b>Sales</b>');
      const response = await t.app.inject({ method: 'GET', url: `/chat/${bot.id}` });
      expect(response.statusCode, status).toBe(409);
      expect(response.body).toContain('&lt;b&gt;Sales&lt;/b&gt; is not taking conversations right now.');
      expect(response.body).not.toContain('<script');
    }
  });

  it('agents of any workspace are reachable by id (the page is public), and nothing but the name is shown', async () => {
    const other = await t.tenant();
    const bot = await makeChatbot(other, { name: 'Other shop', instructions: 'SECRET INSTRUCTIONS' });
    await other.request('PATCH', `/api/v1/chatbots/${bot.id}`, { status: 'active' });
    const response = await t.app.inject({ method: 'GET', url: `/chat/${bot.id}` });
    expect(response.statusCode).toBe(200);
    expect(response.body).not.toContain('SECRET');
  });
});

describe('OpenAPI', () => {
  it('leaves the widget script and the hosted page out of the JSON API document', async () => {
    const doc = (await tenant.request('GET', '/api/v1/openapi')).json() as { paths: Record<string, unknown> };
    const paths = Object.keys(doc.paths);
    expect(paths.some((path) => path.includes('widget.js') || /^\/chat\//.test(path))).toBe(false);
  });
});
