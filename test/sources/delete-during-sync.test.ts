import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { lockedForUpdate } from '../../src/db/dialect.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { expectProblem } from '../helpers/http.js';
import { htmlPage, startSite, type TestSite } from '../helpers/site-server.js';
import { eventually, makeActiveChatbot } from '../runtime/support.js';

// Deleting a source while its ingest job syncs it: one 204, never a 503 (the deletion does not queue behind
// the sync's transactions under the statement timeout); the source, its documents, chunks and job are gone,
// and the job ends (the crawl stops) without recreating anything. SQLite by default; PostgreSQL with
// TEST_DATABASE_URL.
const PAGES = 60;
// Each page answers after this long: the crawl is still going when the deletion comes.
const PAGE_DELAY_MS = 100;

let t: TestApp;
let tenant: Tenant;
let site: TestSite;

// Words of a made-up language, many per page: each stored page adds chunks and grows the agent's vocabulary.
function pageText(page: number): string {
  const syllables = ['ka', 'lo', 'mi', 'ser', 'tun', 'bra', 'vel', 'do', 'rin', 'pas'];
  const words: string[] = [];
  for (let i = 0; i < 600; i++) words.push(`${syllables[(page + i) % 10]}${syllables[(i * 7) % 10]}${syllables[(page * 3 + i) % 10]}${String.fromCharCode(97 + (i % 26))}`);
  return words.join(' ');
}

beforeAll(async () => {
  const defaults = loadConfig({});
  t = await createTestApp({ sources: { ...defaults.sources, allowPrivateHosts: true, maxPages: PAGES + 1 } });
  tenant = await t.tenant();
  const pages: Record<string, string> = { '/': htmlPage('Handbook', 'The index of the handbook.', Array.from({ length: PAGES }, (_, i) => `/p${i}`)) };
  for (let i = 0; i < PAGES; i++) pages[`/p${i}`] = htmlPage(`Chapter ${i}`, pageText(i));
  site = await startSite({ pages, delayMs: PAGE_DELAY_MS });
});
afterAll(async () => {
  await t?.close();
  await site?.close();
});

/** Rows of a source left in each table that holds them. */
async function leftOf(sourceId: string): Promise<Record<string, number>> {
  const { db } = t.app.database;
  const count = async (table: 'sources' | 'source_documents' | 'source_files' | 'knowledge_chunks' | 'reply_jobs', column: 'id' | 'source_id') =>
    Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('n')).where(column, '=', sourceId).executeTakeFirstOrThrow()).n);
  return {
    sources: await count('sources', 'id'),
    documents: await count('source_documents', 'source_id'),
    files: await count('source_files', 'source_id'),
    chunks: await count('knowledge_chunks', 'source_id'),
    jobs: await count('reply_jobs', 'source_id'),
  };
}

const NOTHING = { sources: 0, documents: 0, files: 0, chunks: 0, jobs: 0 };

describe('deleting a source while it syncs', () => {
  it('answers 204 during a crawl of many slow pages; everything of the source is gone and the crawl stops', async () => {
    const bot = await makeActiveChatbot(tenant);
    const source = `/api/v1/chatbots/${bot.id}/sources`;
    const created = (await tenant.request('POST', source, { type: 'website', url: `${site.url}/`, crawl: { max_pages: PAGES + 1, max_depth: 2 } })).json();
    await eventually(async () => {
      const current = (await tenant.request('GET', `${source}/${created.id}`)).json();
      return current.status === 'syncing' && current.progress?.done >= 5 ? current : undefined;
    }, 60_000);
    const stored = await leftOf(created.id);
    expect(stored.chunks).toBeGreaterThan(0);

    const deleted = await tenant.request('DELETE', `${source}/${created.id}`);
    expect(deleted.statusCode, deleted.body).toBe(204);
    const requestsAtDeletion = site.requests.length;

    expectProblem(await tenant.request('GET', `${source}/${created.id}`), 404, 'not_found');
    expectProblem(await tenant.request('GET', `${source}/${created.id}/documents`), 404, 'not_found');
    expect((await tenant.request('GET', source)).json().data).toEqual([]);
    expect(await leftOf(created.id)).toEqual(NOTHING);

    // The job finds its source gone at its next page and ends: a crawl going on would fetch about ten pages a second.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(site.requests.length - requestsAtDeletion).toBeLessThanOrEqual(2);
    expect(await leftOf(created.id)).toEqual(NOTHING);
    const hits = (await tenant.request('GET', `/api/v1/chatbots/${bot.id}/knowledge/search?q=${encodeURIComponent(pageText(1).split(' ')[0]!)}`)).json();
    expect(hits.data).toEqual([]);
  }, 120_000);

  it('stops a re-sync that meets only unchanged pages when its source is deleted', async () => {
    const bot = await makeActiveChatbot(tenant);
    const source = `/api/v1/chatbots/${bot.id}/sources`;
    const created = (await tenant.request('POST', source, { type: 'website', url: `${site.url}/`, crawl: { max_pages: 30, max_depth: 2 } })).json();
    await eventually(async () => ((await tenant.request('GET', `${source}/${created.id}`)).json().status === 'ready' ? true : undefined), 60_000);
    expect((await tenant.request('POST', `${source}/${created.id}/sync`)).statusCode).toBe(202);
    // Every page is as it was: the re-sync skips them, storing nothing; once the source is deleted, the next
    // page has no stored document to match and its store finds the source gone.
    await eventually(async () => {
      const current = (await tenant.request('GET', `${source}/${created.id}`)).json();
      return current.status === 'syncing' && current.progress?.done >= 5 ? current : undefined;
    }, 60_000);

    expect((await tenant.request('DELETE', `${source}/${created.id}`)).statusCode).toBe(204);
    const requestsAtDeletion = site.requests.length;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(site.requests.length - requestsAtDeletion).toBeLessThanOrEqual(2);
    expect(await leftOf(created.id)).toEqual(NOTHING);
  }, 120_000);

  it('waits out a document transaction that holds the source longer than the statement timeout, then answers 204', async () => {
    const bot = await makeActiveChatbot(tenant);
    const source = `/api/v1/chatbots/${bot.id}/sources`;
    const created = (await tenant.request('POST', source, { type: 'text', title: 'Hours', content: 'Open at nine.' })).json();
    const { db } = t.app.database;
    const holdMs = (t.config.database.kind === 'postgres' ? t.config.database.statementTimeoutMs : 5_000) + 1_000;
    // What a sync storing a large document does: its transaction holds the source row (PostgreSQL) or the
    // one writer (SQLite) for a while.
    let held!: () => void;
    const locked = new Promise<void>((resolve) => (held = resolve));
    let releasedAt = 0;
    const holder = db.transaction().execute(async (trx) => {
      await lockedForUpdate(trx, trx.selectFrom('sources').select('id').where('id', '=', created.id)).executeTakeFirst();
      held();
      await new Promise((resolve) => setTimeout(resolve, holdMs));
      releasedAt = Date.now();
    });
    await locked;
    const deleted = await tenant.request('DELETE', `${source}/${created.id}`);
    const answeredAt = Date.now();
    await holder;
    expect(deleted.statusCode, deleted.body).toBe(204);
    // It waited for the holder (it could not delete under it), and was not cut off by the statement timeout.
    expect(releasedAt).toBeGreaterThan(0);
    expect(answeredAt).toBeGreaterThanOrEqual(releasedAt);
    expect(await leftOf(created.id)).toEqual(NOTHING);
  }, 60_000);
});
