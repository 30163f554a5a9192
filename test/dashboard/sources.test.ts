import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { signUp, type DashboardUser } from '../helpers/dashboard.js';
import { expectProblem } from '../helpers/http.js';
import { multipart } from '../sources/support.js';

// The agent editor's Sources section: /app/api over the /api/v1 source service (text, Q&A, an uploaded
// file, list, documents, re-sync, retrieval, delete), workspace isolation, and CSRF on JSON and multipart writes.
describe('dashboard knowledge sources', () => {
  let t: TestApp;
  let owner: DashboardUser;
  let botId: string;

  beforeAll(async () => {
    const defaults = loadConfig({});
    t = await createTestApp({ sources: { ...defaults.sources, maxFileBytes: 64 * 1024 }, runtime: { ...defaults.runtime, pollIntervalMs: 50 } });
    owner = await signUp(t.app, { workspaceName: 'Sources' });
    botId = (await owner.request('POST', '/app/api/chatbots', { name: 'Knowledgeable' })).json().id;
  });
  afterAll(async () => t?.close());

  /** A multipart upload as the dashboard's upload() sends it: session cookie, CSRF token, same Origin. */
  function upload(user: DashboardUser, chatbotId: string, file: { name: string; type: string; bytes: string }, fields: Record<string, string> = {}, headers: Record<string, string> = {}) {
    const { payload, contentType } = multipart(file, fields);
    return t.app.inject({
      method: 'POST',
      url: `/app/api/chatbots/${chatbotId}/sources`,
      headers: { cookie: user.cookie, 'x-csrf-token': user.csrf, origin: 'http://localhost:80', 'content-type': contentType, ...headers },
      payload,
    });
  }

  async function settled(sourceId: string): Promise<Record<string, unknown>> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const source = (await owner.request('GET', `/app/api/chatbots/${botId}/sources/${sourceId}`)).json();
      if (['ready', 'failed'].includes(source.status) || Date.now() > deadline) return source;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('creates text and Q&A sources, uploads a markdown file, lists, searches and deletes', async () => {
    const text = await owner.request('POST', `/app/api/chatbots/${botId}/sources`, { type: 'text', title: 'Parking', content: 'Park for free behind the bakery, next to the mill.' });
    expect(text.statusCode, text.body).toBe(201);
    expect(text.json()).toMatchObject({ object: 'source', type: 'text', title: 'Parking', status: 'ready', stats: { documents: 1, failed_documents: 0 } });
    const qa = await owner.request('POST', `/app/api/chatbots/${botId}/sources`, { type: 'qa', question: 'Can I bring my dog?', answer: 'Dogs on a lead are welcome.' });
    expect(qa.statusCode, qa.body).toBe(201);
    expect(qa.json()).toMatchObject({ type: 'qa', status: 'ready' });

    const file = await upload(owner, botId, { name: 'menu.md', type: 'text/markdown', bytes: '# Breakfast\n\nPorridge with blueberries is served until 11am.\n' }, { title: 'Menu' });
    expect(file.statusCode, file.body).toBe(201);
    expect(file.json()).toMatchObject({ type: 'file', title: 'Menu', status: 'queued' });
    const ready = await settled(file.json().id);
    expect(ready).toMatchObject({ status: 'ready', stats: { documents: 1, failed_documents: 0 } });
    const documents = (await owner.request('GET', `/app/api/chatbots/${botId}/sources/${file.json().id}/documents`)).json();
    expect(documents.data).toEqual([expect.objectContaining({ object: 'source_document', url: 'file:menu.md', status: 'ready', error: null })]);

    const list = await owner.request('GET', `/app/api/chatbots/${botId}/sources`);
    expect(list.statusCode).toBe(200);
    expect(list.json().data.map((s: { type: string }) => s.type)).toEqual(['file', 'qa', 'text']);

    const search = await owner.request('GET', `/app/api/chatbots/${botId}/knowledge/search?q=${encodeURIComponent('until when is porridge served?')}&limit=3`);
    expect(search.statusCode, search.body).toBe(200);
    expect(search.json().data[0]).toMatchObject({ source_id: file.json().id, content: expect.stringContaining('served until 11am') });

    const sync = await owner.request('POST', `/app/api/chatbots/${botId}/sources/${file.json().id}/sync`);
    expect(sync.statusCode, sync.body).toBe(202);
    expect(sync.json().status).toBe('queued');
    expect(await settled(file.json().id)).toMatchObject({ status: 'ready' });

    const removed = await owner.request('DELETE', `/app/api/chatbots/${botId}/sources/${text.json().id}`);
    expect(removed.statusCode).toBe(204);
    expectProblem(await owner.request('GET', `/app/api/chatbots/${botId}/sources/${text.json().id}`), 404, 'not_found');
    const after = (await owner.request('GET', `/app/api/chatbots/${botId}/knowledge/search?q=parking`)).json();
    expect(after.data.filter((hit: { source_id: string }) => hit.source_id === text.json().id)).toEqual([]);

    const events = (await t.app.services.audit.list(owner.workspaceId)).filter((e) => e.action.startsWith('source.'));
    expect(events.map((e) => e.action)).toEqual(expect.arrayContaining(['source.created', 'source.sync_requested', 'source.deleted']));
    expect(events[0]?.actor).toMatchObject({ type: 'user', name: owner.email });
  });

  it('refuses bad input with problem details: an invalid body, a file of another type', async () => {
    const invalid = await owner.request('POST', `/app/api/chatbots/${botId}/sources`, { type: 'website', url: 'ftp://example.com' });
    expectProblem(invalid, 400, 'validation_failed');
    const binary = await upload(owner, botId, { name: 'photo.png', type: 'image/png', bytes: '\u0089PNG\r\n\u001a\n' });
    expectProblem(binary, 415, 'unsupported_media_type');
  });

  it("answers 404 for another workspace's agent and its sources", async () => {
    const stranger = await signUp(t.app, { workspaceName: 'Elsewhere' });
    const source = (await owner.request('POST', `/app/api/chatbots/${botId}/sources`, { type: 'qa', question: 'Secret?', answer: 'Only for owners.' })).json();
    expectProblem(await stranger.request('GET', `/app/api/chatbots/${botId}/sources`), 404, 'not_found');
    expectProblem(await stranger.request('GET', `/app/api/chatbots/${botId}/sources/${source.id}`), 404, 'not_found');
    expectProblem(await stranger.request('GET', `/app/api/chatbots/${botId}/knowledge/search?q=secret`), 404, 'not_found');
    expectProblem(await stranger.request('POST', `/app/api/chatbots/${botId}/sources`, { type: 'text', title: 'x', content: 'y' }), 404, 'not_found');
    expectProblem(await upload(stranger, botId, { name: 'a.md', type: 'text/markdown', bytes: '# A\n\nB.\n' }), 404, 'not_found');
    expectProblem(await stranger.request('DELETE', `/app/api/chatbots/${botId}/sources/${source.id}`), 404, 'not_found');
    expect((await owner.request('GET', `/app/api/chatbots/${botId}/sources/${source.id}`)).statusCode).toBe(200);
  });

  it('refuses writes without the CSRF token (403), multipart uploads included, and without a session (401)', async () => {
    const before = (await owner.request('GET', `/app/api/chatbots/${botId}/sources`)).json().data.length;
    expectProblem(await owner.request('POST', `/app/api/chatbots/${botId}/sources`, { type: 'text', title: 'x', content: 'y' }, { 'x-csrf-token': '' }), 403, 'csrf_failed');
    expectProblem(await upload(owner, botId, { name: 'a.md', type: 'text/markdown', bytes: '# A\n\nB.\n' }, {}, { 'x-csrf-token': 'not-the-token' }), 403, 'csrf_failed');
    expectProblem(await upload(owner, botId, { name: 'a.md', type: 'text/markdown', bytes: '# A\n\nB.\n' }, {}, { origin: 'https://evil.example' }), 403, 'csrf_failed');
    const sourceId = (await owner.request('GET', `/app/api/chatbots/${botId}/sources`)).json().data[0].id;
    expectProblem(await owner.request('DELETE', `/app/api/chatbots/${botId}/sources/${sourceId}`, undefined, { 'x-csrf-token': 'nope' }), 403, 'csrf_failed');
    expectProblem(await owner.request('POST', `/app/api/chatbots/${botId}/sources/${sourceId}/sync`, undefined, { 'x-csrf-token': 'nope' }), 403, 'csrf_failed');
    expectProblem(await t.app.inject({ method: 'GET', url: `/app/api/chatbots/${botId}/sources` }), 401, 'not_signed_in');
    expect((await owner.request('GET', `/app/api/chatbots/${botId}/sources`)).json().data.length).toBe(before);
  });
});
