import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { loadConfig } from '../../src/config.js';
import { makeChatbot, makeConversation, makeLead } from '../helpers/factories.js';
import { htmlPage, startSite, type TestSite } from '../helpers/site-server.js';

// Every header an operation's success sends is declared in /api/v1/openapi for that status, and every
// header declared there is sent: one walk over every operation of the served document.

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- walking a JSON document

/** Headers of the transport that every response has; the document does not describe them. */
const TRANSPORT_HEADERS = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive', 'transfer-encoding']);
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** A valid body for each operation that takes one (an operation missing here fails the walk). */
const BODIES: Record<string, () => unknown> = {
  createChatbot: () => ({ name: 'Header walk agent', instructions: 'Be brief.' }),
  updateChatbot: () => ({ description: `changed ${Math.random()}` }),
  createConversationMessage: () => ({ content: 'Hello', role: 'operator' }),
  createLead: () => ({ email: `walk-${Math.random().toString(36).slice(2, 8)}@example.com` }),
  updateLead: () => ({ company: `Company ${Math.random()}` }),
  createSource: () => ({ type: 'text', title: 'Header walk', content: `Walked at ${Math.random()}.` }),
  createWebhookEndpoint: () => ({ url: 'http://127.0.0.1:9/hooks', events: ['*'] }),
  updateWebhookEndpoint: () => ({ description: `changed ${Math.random()}` }),
};

let t: TestApp;
let tenant: Tenant;
let site: TestSite;
let doc: Json;
const ids: Record<string, string> = {};

beforeAll(async () => {
  // A two-page local site, so a source's documents list has a next page too.
  site = await startSite({ pages: { '/': htmlPage('One', 'First page.', ['/two']), '/two': htmlPage('Two', 'Second page.') } });
  // Webhook receivers on 127.0.0.1 too (port 9: deliveries fail at once, nothing leaves the machine).
  t = await createTestApp({ sources: { ...loadConfig({}).sources, allowPrivateHosts: true }, webhooks: { ...loadConfig({}).webhooks, allowPrivateHosts: true } });
  tenant = await t.tenant();
  doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi' })).json();
  // Two of everything, so a list with limit=1 has a next page (and sends Link).
  const bot = await makeChatbot(tenant);
  await makeChatbot(tenant);
  const conversation = await makeConversation(t.app, tenant, bot.id);
  await makeConversation(t.app, tenant, bot.id);
  for (const content of ['one', 'two']) {
    const sent = await tenant.request('POST', `/api/v1/conversations/${conversation.id}/messages`, { content, role: 'operator' });
    expect(sent.statusCode, sent.body).toBe(201);
  }
  const lead = await makeLead(tenant);
  await makeLead(tenant);
  const source = (body: unknown) => tenant.request('POST', `/api/v1/chatbots/${bot.id}/sources`, body).then((r) => r.json().id as string);
  const website = await source({ type: 'website', url: `${site.url}/` });
  const disposable = await source({ type: 'text', title: 'To delete', content: 'Deleted by the walk.' });
  for (let ready = false; !ready; await new Promise((resolve) => setTimeout(resolve, 50))) {
    ready = (await tenant.request('GET', `/api/v1/chatbots/${bot.id}/sources/${website}`)).json().status === 'ready';
  }
  // Two webhook endpoints (one for DELETE), and two deliveries of the first (test events).
  const webhook = async () => (await tenant.request('POST', '/api/v1/webhook_endpoints', BODIES.createWebhookEndpoint!())).json().id as string;
  const endpoint = await webhook();
  const disposableWebhook = await webhook();
  const delivery = (await tenant.request('POST', `/api/v1/webhook_endpoints/${endpoint}/test`)).json().id as string;
  await tenant.request('POST', `/api/v1/webhook_endpoints/${endpoint}/test`);
  Object.assign(ids, { chatbots: bot.id, conversations: conversation.id, leads: lead.id, sources: website, disposableSource: disposable, webhook_endpoints: endpoint, disposableWebhook, delivery });
});
afterAll(async () => {
  await t.close();
  await site.close();
});

/** The concrete URL of a documented path: `{id}` becomes an existing resource of the path's first segment. */
function urlOf(path: string, op: Json, method: string): string {
  // A source's own operations run on the website source, except DELETE, which takes a disposable one.
  // So does a webhook endpoint's DELETE.
  const resource = method === 'delete' && path === '/webhook_endpoints/{id}' ? 'disposableWebhook' : path.split('/')[1]!;
  const concrete = path
    .replace('{id}', () => ids[resource]!)
    .replace('{source_id}', () => ids[method === 'delete' ? 'disposableSource' : 'sources']!)
    .replace('{delivery_id}', () => ids.delivery!);
  const takesLimit = ((op.parameters ?? []) as Json[]).some((p) => p.in === 'query' && p.name === 'limit');
  const query = [takesLimit ? 'limit=1' : '', op.operationId === 'searchKnowledge' ? 'q=walked' : ''].filter(Boolean).join('&');
  return `/api/v1${concrete}${query ? `?${query}` : ''}`;
}

/** The header names a response carries, lower-cased, without the transport's. */
function sentHeaders(response: LightMyRequestResponse): string[] {
  return Object.keys(response.headers)
    .map((name) => name.toLowerCase())
    .filter((name) => !TRANSPORT_HEADERS.has(name))
    .sort();
}

describe('the headers of every operation', () => {
  it('are exactly the ones the document declares for the success status', async () => {
    const mismatches: string[] = [];
    let walked = 0;
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      for (const [method, op] of Object.entries(item as Json).filter(([m]) => HTTP_METHODS.includes(m)) as [string, Json][]) {
        walked++;
        const label = `${method.toUpperCase()} ${path}`;
        const status = Object.keys(op.responses as Json).find((s) => /^2\d\d$/.test(s))!;
        const declared = Object.keys((op.responses as Json)[status].headers ?? {}).map((name) => name.toLowerCase()).sort();
        const body = op.requestBody ? BODIES[op.operationId as string] : undefined;
        if (op.requestBody && !body) {
          mismatches.push(`${label}: no request body in this test for ${String(op.operationId)}`);
          continue;
        }
        const url = urlOf(path, op, method);
        const takesKey = ((op.parameters ?? []) as Json[]).some((p) => p.in === 'header' && String(p.name).toLowerCase() === 'idempotency-key');
        const headers: Record<string, string> = takesKey ? { 'idempotency-key': `walk-${walked}-${Date.now()}` } : {};
        const payload = body?.();
        const responses = [await tenant.request(method.toUpperCase(), url, payload, headers)];
        // A stored result is replayed with Idempotent-Replayed: the replay is part of what the operation sends.
        if (takesKey) responses.push(await tenant.request(method.toUpperCase(), url, payload, headers));
        const union = new Set<string>();
        for (const response of responses) {
          expect(response.statusCode, `${label}: ${response.body}`).toBe(Number(status));
          const sent = sentHeaders(response);
          sent.forEach((name) => union.add(name));
          const undeclared = sent.filter((name) => !declared.includes(name));
          if (undeclared.length > 0) mismatches.push(`${label} ${status}: sends undeclared ${undeclared.join(', ')}`);
        }
        const neverSent = declared.filter((name) => !union.has(name));
        if (neverSent.length > 0) mismatches.push(`${label} ${status}: declares but never sends ${neverSent.join(', ')}`);
      }
    }
    expect(walked).toBeGreaterThanOrEqual(13);
    expect(mismatches).toEqual([]);
  });
});
