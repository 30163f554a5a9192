import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type Tenant } from '../helpers/app.js';
import { makeChatbot } from '../helpers/factories.js';
import { expectProblem } from '../helpers/http.js';
import { upload, waitForStatus } from './support.js';

// The sources resource through the real app (issue 30, point 2): every type, list/get/delete, documents,
// sync, test retrieval, scopes, isolation, idempotency, audit, and bad input. SQLite by default;
// PostgreSQL + Redis with TEST_DATABASE_URL / TEST_REDIS_URL.
let t: TestApp;
let tenant: Tenant;
let bot: { id: string };

beforeAll(async () => {
  t = await createTestApp({ sources: { ...(await import('../../src/config.js')).loadConfig({}).sources, maxFileBytes: 64 * 1024, allowPrivateHosts: true } });
  tenant = await t.tenant();
  bot = await makeChatbot(tenant);
});
afterAll(async () => t?.close());

const sources = (path = '') => `/api/v1/chatbots/${bot.id}/sources${path}`;
const search = (q: string, chatbotId = bot.id) => tenant.request('GET', `/api/v1/chatbots/${chatbotId}/knowledge/search?q=${encodeURIComponent(q)}&limit=5`);

async function auditActions(targetId: string): Promise<string[]> {
  const rows = await t.app.database.db.selectFrom('audit_events').select(['action']).where('workspace_id', '=', tenant.workspaceId).where('target_id', '=', targetId).orderBy('seq').execute();
  return rows.map((row) => row.action);
}

describe('sources API', () => {
  it('creates a text source that is ready at once and retrievable, with its document and audit event', async () => {
    const response = await tenant.request('POST', sources(), { type: 'text', title: 'Address and parking', content: 'We are at 12 Harbour Street, Portsmouth. Free parking behind the shop.' });
    expect(response.statusCode).toBe(201);
    const source = response.json();
    expect(source).toMatchObject({ object: 'source', chatbot_id: bot.id, type: 'text', title: 'Address and parking', url: null, status: 'ready', error: null });
    expect(source.id).toMatch(/^src_[0-9A-Z]{26}$/);
    expect(source.stats).toEqual({ documents: 1, chunks: 1, failed_documents: 0 });
    expect(response.headers.location).toBe(`/api/v1/chatbots/${bot.id}/sources/${source.id}`);

    const hits = (await search('where can I park?')).json();
    expect(hits.object).toBe('list');
    expect(hits.data[0]).toMatchObject({ source_id: source.id, title: 'Address and parking', url: null });
    expect(hits.data[0].content).toContain('Harbour Street');
    expect(hits.data[0].score).toBeGreaterThan(0);
    expect(hits.data[0].score).toBeLessThanOrEqual(1);

    const documents = (await tenant.request('GET', sources(`/${source.id}/documents`))).json();
    expect(documents.data).toHaveLength(1);
    expect(documents.data[0]).toMatchObject({ object: 'source_document', source_id: source.id, status: 'ready', error: null, chunks: 1 });
    expect(await auditActions(source.id)).toEqual(['source.created']);
  });

  it('creates a Q&A source found by its question', async () => {
    const response = await tenant.request('POST', sources(), { type: 'qa', question: 'Do you deliver on Sundays?', answer: 'No, deliveries run Monday to Saturday.' });
    expect(response.statusCode).toBe(201);
    expect(response.json()).toMatchObject({ type: 'qa', title: 'Do you deliver on Sundays?', status: 'ready' });
    const hits = (await search('sunday delivery')).json();
    expect(hits.data[0].content).toContain('Monday to Saturday');
  });

  it('uploads a file: queued, then ingested by the job runner into a ready document', async () => {
    const response = await upload(t.app, tenant, bot.id, { name: 'returns.md', type: 'text/markdown', bytes: '# Returns policy\n\nUnworn shoes can be returned within 45 days.\n' }, { title: 'Returns' });
    expect(response.statusCode).toBe(201);
    const source = response.json();
    expect(source).toMatchObject({ type: 'file', title: 'Returns', status: 'queued' });
    const ready = await waitForStatus(tenant, bot.id, source.id, ['ready', 'failed']);
    expect(ready).toMatchObject({ status: 'ready', stats: { documents: 1, failed_documents: 0 } });
    expect((ready.stats as { chunks: number }).chunks).toBeGreaterThan(0);
    const documents = (await tenant.request('GET', sources(`/${source.id}/documents`))).json();
    expect(documents.data[0]).toMatchObject({ url: 'file:returns.md', status: 'ready', title: 'Returns policy' });
    expect((await search('how long to return shoes')).json().data[0].source_id).toBe(source.id);
  });

  it('creates a website source (queued, with a job) and re-syncs on request with 202', async () => {
    const response = await tenant.request('POST', sources(), { type: 'website', url: 'http://127.0.0.1:9/', crawl: { max_pages: 1 } });
    expect(response.statusCode).toBe(201);
    const source = response.json();
    expect(source).toMatchObject({ type: 'website', url: 'http://127.0.0.1:9/', title: '127.0.0.1', status: 'queued' });
    // Nothing answers on port 9: the only page fails, so the source fails with a readable error.
    const failed = await waitForStatus(tenant, bot.id, source.id, ['ready', 'failed']);
    expect(failed.status).toBe('failed');
    expect(failed.error).toEqual(expect.any(String));
    const sync = await tenant.request('POST', sources(`/${source.id}/sync`));
    expect(sync.statusCode).toBe(202);
    expect(sync.json()).toMatchObject({ id: source.id, status: 'queued' });
    expect(await auditActions(source.id)).toEqual(['source.created', 'source.sync_requested']);
  });

  it('lists, gets and deletes; a deleted source leaves retrieval at once', async () => {
    const created = (await tenant.request('POST', sources(), { type: 'text', title: 'Gift cards', content: 'Gift cards never expire and work in every shop.' })).json();
    const list = (await tenant.request('GET', sources('?limit=100'))).json();
    expect(list.object).toBe('list');
    expect(list.data.map((s: { id: string }) => s.id)).toContain(created.id);
    expect((await tenant.request('GET', sources(`/${created.id}`))).json()).toMatchObject({ id: created.id, status: 'ready' });
    expect((await search('gift cards expire')).json().data[0]?.source_id).toBe(created.id);

    const deleted = await tenant.request('DELETE', sources(`/${created.id}`));
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    expect((await search('gift cards expire')).json().data.map((h: { source_id: string }) => h.source_id)).not.toContain(created.id);
    expectProblem(await tenant.request('GET', sources(`/${created.id}`)), 404, 'not_found');
    expectProblem(await tenant.request('DELETE', sources(`/${created.id}`)), 404, 'not_found');
    expect(await auditActions(created.id)).toEqual(['source.created', 'source.deleted']);
  });

  it('replays an idempotent create without a second source', async () => {
    const body = { type: 'text', title: 'Idempotent', content: 'Created once.' };
    const first = await tenant.request('POST', sources(), body, { 'idempotency-key': 'source-once' });
    const second = await tenant.request('POST', sources(), body, { 'idempotency-key': 'source-once' });
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.json().id).toBe(first.json().id);
    const all = (await tenant.request('GET', sources('?limit=100'))).json().data.filter((s: { title: string }) => s.title === 'Idempotent');
    expect(all).toHaveLength(1);
    // The same key with another file is another request: 422.
    const a = await upload(t.app, tenant, bot.id, { name: 'a.txt', type: 'text/plain', bytes: 'first file' }, {}, { 'idempotency-key': 'upload-once' });
    const b = await upload(t.app, tenant, bot.id, { name: 'a.txt', type: 'text/plain', bytes: 'second file' }, {}, { 'idempotency-key': 'upload-once' });
    expect(a.statusCode).toBe(201);
    expectProblem(b, 422, 'idempotency_key_reused');
  });

  it('enforces scopes (403) and workspaces (404)', async () => {
    const reader = await tenant.newKey(['chatbots:read']);
    const asReader = (method: string, url: string, body?: unknown) => t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${reader.key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { payload: JSON.stringify(body) } : {}) });
    expectProblem(await asReader('POST', sources(), { type: 'text', title: 'x', content: 'y' }), 403, 'insufficient_scope');
    expect((await asReader('GET', sources())).statusCode).toBe(200);
    const leadsOnly = await tenant.newKey(['leads:read']);
    expectProblem(await t.app.inject({ method: 'GET', url: `/api/v1/chatbots/${bot.id}/knowledge/search?q=hours`, headers: { authorization: `Bearer ${leadsOnly.key}` } }), 403, 'insufficient_scope');

    const other = await t.tenant();
    const mine = (await tenant.request('POST', sources(), { type: 'text', title: 'Private', content: 'Only for this workspace.' })).json();
    expectProblem(await other.request('GET', sources(`/${mine.id}`)), 404, 'not_found');
    expectProblem(await other.request('GET', sources()), 404, 'not_found');
    expectProblem(await other.request('POST', sources(), { type: 'text', title: 'x', content: 'y' }), 404, 'not_found');
    expectProblem(await other.request('DELETE', sources(`/${mine.id}`)), 404, 'not_found');
    expectProblem(await other.request('GET', `/api/v1/chatbots/${bot.id}/knowledge/search?q=private`), 404, 'not_found');
    expectProblem(await tenant.request('GET', sources('/src_nope')), 404, 'not_found');
  });

  it('refuses bad input: 400 for a bad body, 413 for a file over the limit, 415 for an unsupported file or body type', async () => {
    expectProblem(await tenant.request('POST', sources(), { type: 'video', url: 'x' }), 400, 'validation_failed');
    expectProblem(await tenant.request('POST', sources(), { type: 'website', url: 'ftp://example.com/' }), 400, 'validation_failed');
    expectProblem(await tenant.request('POST', sources(), { type: 'website', url: 'https://example.com/', crawl: { max_pages: 501 } }), 400, 'validation_failed');
    expectProblem(await tenant.request('POST', sources(), { type: 'text', title: 'No content' }), 400, 'validation_failed');
    const big = await upload(t.app, tenant, bot.id, { name: 'big.txt', type: 'text/plain', bytes: 'a'.repeat(65 * 1024) });
    expectProblem(big, 413, 'payload_too_large');
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
    expectProblem(await upload(t.app, tenant, bot.id, { name: 'logo.png', type: 'image/png', bytes: png }), 415, 'unsupported_media_type');
    expectProblem(await upload(t.app, tenant, bot.id, { name: 'a.txt', type: 'text/plain', bytes: 'x', field: 'document' }), 400, 'validation_failed');
    const xml = await t.app.inject({ method: 'POST', url: sources(), headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/xml' }, payload: '<a/>' });
    expectProblem(xml, 415, 'unsupported_media_type');
  });

  it('keeps the agent\'s knowledge field working: writing it replaces its knowledge sources in the same transaction', async () => {
    const agent = await makeChatbot(tenant, { knowledge: [{ title: 'Opening hours', content: 'Open Monday to Friday, 9am to 5pm.' }] });
    expect((await search('when are you open', agent.id)).json().data[0]).toMatchObject({ title: 'Opening hours' });
    const patched = await tenant.request('PATCH', `/api/v1/chatbots/${agent.id}`, { knowledge: [{ title: 'Warranty', content: 'Every bike has a two-year warranty.' }] });
    expect(patched.statusCode).toBe(200);
    const titles = (await search('warranty opening hours', agent.id)).json().data.map((h: { title: string }) => h.title);
    expect(titles).toEqual(['Warranty']);
    const list = (await tenant.request('GET', `/api/v1/chatbots/${agent.id}/sources`)).json();
    expect(list.data).toHaveLength(1);
    expect(list.data[0]).toMatchObject({ type: 'text', title: 'Warranty', status: 'ready' });
  });

  it('documents every operation in OpenAPI, the upload with both request content types', async () => {
    const document = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi' })).json();
    const create = document.paths['/chatbots/{id}/sources'].post;
    expect(Object.keys(create.requestBody.content).sort()).toEqual(['application/json', 'multipart/form-data']);
    expect(document.paths['/chatbots/{id}/sources'].get.operationId).toBe('listSources');
    expect(document.paths['/chatbots/{id}/sources/{source_id}'].delete.responses['204']).toBeDefined();
    expect(document.paths['/chatbots/{id}/sources/{source_id}/sync'].post.responses['202']).toBeDefined();
    expect(document.paths['/chatbots/{id}/sources/{source_id}/documents'].get.operationId).toBe('listSourceDocuments');
    expect(document.paths['/chatbots/{id}/knowledge/search'].get.operationId).toBe('searchKnowledge');
    expect(Object.keys(document.components.schemas)).toEqual(expect.arrayContaining(['Source', 'SourceList', 'SourceDocument', 'SourceDocumentList', 'KnowledgeSearchResult']));
  });
});
