import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createTestApp, type TestApp, type Tenant } from '../helpers/app.js';
import { testClock } from '../helpers/clock.js';
import { makeCorruptPdf, makeDocx, makeDocxBomb, makeEncryptedPdf, makePdf } from '../helpers/documents.js';
import { makeChatbot } from '../helpers/factories.js';
import { htmlPage, sitemapXml, startSite, type TestSite } from '../helpers/site-server.js';
import { upload, waitForStatus } from './support.js';

// Ingestion through the real app and its job runner (issue 30, points 1, 3, 4 and 6): website crawls of a
// local site, file uploads of every kind, re-sync with the content hash, and bad inputs failing one document.
let t: TestApp;
let tenant: Tenant;
let bot: { id: string };
const sites: TestSite[] = [];

beforeAll(async () => {
  const defaults = loadConfig({}).sources;
  t = await createTestApp({ sources: { ...defaults, allowPrivateHosts: true, fetchTimeoutMs: 1500 }, runtime: { ...loadConfig({}).runtime, pollIntervalMs: 50 } });
  tenant = await t.tenant();
  bot = await makeChatbot(tenant);
});
afterAll(async () => {
  for (const site of sites) await site.close();
  await t?.close();
});

async function site(options: Parameters<typeof startSite>[0]): Promise<TestSite> {
  const started = await startSite(options);
  sites.push(started);
  return started;
}

async function website(url: string, crawl: Record<string, unknown> = {}) {
  const response = await tenant.request('POST', `/api/v1/chatbots/${bot.id}/sources`, { type: 'website', url, crawl });
  expect(response.statusCode, response.body).toBe(201);
  const source = response.json();
  return { source, settled: await waitForStatus(tenant, bot.id, source.id, ['ready', 'failed']) };
}

type Doc = { id: string; url: string; title: string | null; status: string; error: string | null; chunks: number; updated_at: string };
async function documents(sourceId: string): Promise<Doc[]> {
  return (await tenant.request('GET', `/api/v1/chatbots/${bot.id}/sources/${sourceId}/documents?limit=100`)).json().data;
}
const paths = (docs: Doc[]) => docs.map((d) => new URL(d.url).pathname).sort();
async function topHit(q: string) {
  return (await tenant.request('GET', `/api/v1/chatbots/${bot.id}/knowledge/search?q=${encodeURIComponent(q)}`)).json().data[0];
}

describe('website sources', () => {
  it('crawls links and the sitemap, honours robots.txt, include/exclude, depth and page limits', async () => {
    const s = await site({
      robots: 'User-agent: *\nDisallow: /private',
      sitemap: sitemapXml(['/from-sitemap']),
      pages: {
        '/': htmlPage('Home', 'Welcome to the bike shop.', ['/about', '/private/secrets', '/blog/one', '/deep/1']),
        '/about': htmlPage('About', 'Family run since 1984.'),
        '/private/secrets': htmlPage('Secrets', 'Never crawled.'),
        '/blog/one': htmlPage('Blog one', 'A post about saddles.'),
        '/from-sitemap': htmlPage('Sitemap page', 'Only the sitemap links here.'),
        '/deep/1': htmlPage('Deep 1', 'Level one.', ['/deep/2']),
        '/deep/2': htmlPage('Deep 2', 'Level two.', ['/deep/3']),
        '/deep/3': htmlPage('Deep 3', 'Level three.'),
      },
    });
    const all = await website(`${s.url}/`, { max_depth: 2 });
    expect(all.settled).toMatchObject({ status: 'ready', error: null });
    const crawled = paths(await documents(all.source.id));
    expect(crawled).toEqual(['/', '/about', '/blog/one', '/deep/1', '/deep/2', '/from-sitemap']);
    expect(s.requests).not.toContain('/private/secrets');
    expect((await topHit('saddles post')).url).toBe(`${s.url}/blog/one`);

    const filtered = await website(`${s.url}/`, { include: ['/', '/deep/**'], exclude: ['/deep/2'] });
    expect(paths(await documents(filtered.source.id))).toEqual(['/', '/deep/1']);
    const one = await website(`${s.url}/`, { max_pages: 1 });
    expect(paths(await documents(one.source.id))).toEqual(['/']);
    const three = await website(`${s.url}/`, { max_pages: 3 });
    expect((await documents(three.source.id)).length).toBe(3);
  });

  it('fails a page that 404s or never answers on its own, and the source is still ready', async () => {
    const s = await site({ pages: { '/': htmlPage('Start', 'The start page.', ['/gone', '/slow']), '/slow': { hang: true } } });
    const { source, settled } = await website(`${s.url}/`);
    expect(settled).toMatchObject({ status: 'ready', stats: { documents: 3, failed_documents: 2 } });
    const docs = await documents(source.id);
    const byPath = Object.fromEntries(docs.map((d) => [new URL(d.url).pathname, d]));
    expect(byPath['/']).toMatchObject({ status: 'ready', error: null });
    expect(byPath['/gone']).toMatchObject({ status: 'failed', error: expect.stringMatching(/404/) });
    expect(byPath['/slow']).toMatchObject({ status: 'failed', error: expect.any(String) });
  });

  it('re-syncs: unchanged pages are skipped by their hash, changed ones re-indexed, removed ones dropped', async () => {
    const s = await site({ pages: { '/': htmlPage('Home', 'Home of the tandem shop.', ['/a', '/b']), '/a': htmlPage('Page A', 'Tandems for rent.'), '/b': htmlPage('Page B', 'Repairs on Tuesdays.') } });
    const { source } = await website(`${s.url}/`);
    const before = Object.fromEntries((await documents(source.id)).map((d) => [new URL(d.url).pathname, d]));
    expect(Object.keys(before).sort()).toEqual(['/', '/a', '/b']);

    s.setPage('/b', htmlPage('Page B', 'Repairs on Thursdays now.'));
    s.setPage('/', htmlPage('Home', 'Home of the tandem shop.', ['/a']));
    expect((await tenant.request('POST', `/api/v1/chatbots/${bot.id}/sources/${source.id}/sync`)).statusCode).toBe(202);
    // The home page changed too (its links), so wait for the sync to finish: /b leaves, the rest settle.
    const deadline = Date.now() + 20_000;
    let after: Record<string, Doc> = {};
    for (;;) {
      const current = await waitForStatus(tenant, bot.id, source.id, ['ready', 'failed']);
      after = Object.fromEntries((await documents(source.id)).map((d) => [new URL(d.url).pathname, d]));
      if ((current.last_synced_at as string) > (before['/']!.updated_at) && !after['/b'] && current.status === 'ready') break;
      if (Date.now() > deadline) throw new Error(`re-sync did not finish: ${JSON.stringify(after)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(after['/a']!.updated_at).toBe(before['/a']!.updated_at);
    expect(after['/a']!.id).toBe(before['/a']!.id);
    expect(after['/']!.updated_at > before['/']!.updated_at).toBe(true);
    expect(Object.keys(after).sort()).toEqual(['/', '/a']);

    // A page brought back with new text is indexed on the next sync, and its old text is gone.
    s.setPage('/', htmlPage('Home', 'Home of the tandem shop.', ['/a', '/b']));
    await tenant.request('POST', `/api/v1/chatbots/${bot.id}/sources/${source.id}/sync`);
    const deadline2 = Date.now() + 20_000;
    while (!(await documents(source.id)).some((d) => d.url.endsWith('/b') && d.status === 'ready')) {
      if (Date.now() > deadline2) throw new Error('page /b did not come back');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect((await topHit('repairs thursdays')).content).toContain('Thursdays');
  });

  it('refuses a private address unless OUTBOUND_ALLOW_PRIVATE_HOSTS is set', async () => {
    const strict = await createTestApp({ sources: { ...loadConfig({}).sources, allowPrivateHosts: false }, runtime: { ...loadConfig({}).runtime, pollIntervalMs: 50 } });
    try {
      const s = await site({ pages: { '/': htmlPage('Intranet', 'Internal only.') }, sitemap: sitemapXml(['/']) });
      const owner = await strict.tenant();
      const agent = (await owner.request('POST', '/api/v1/chatbots', { name: 'Strict', instructions: 'Help.' })).json();
      const created = (await owner.request('POST', `/api/v1/chatbots/${agent.id}/sources`, { type: 'website', url: `${s.url}/` })).json();
      const settled = await waitForStatus(owner, agent.id, created.id, ['ready', 'failed']);
      expect(settled.status).toBe('failed');
      expect(settled.error).toMatch(/private|loopback|refused/i);
      expect(s.requests).toEqual([]);
    } finally {
      await strict.close();
    }
  });
});

describe('file sources', () => {
  it('ingests PDF, DOCX, Markdown, plain text and HTML uploads', async () => {
    const files = [
      { name: 'manual.pdf', type: 'application/pdf', bytes: await makePdf([{ heading: 'Brake pads', paragraphs: ['Replace the brake pads every 2000 kilometres.'] }]), q: 'brake pads kilometres' },
      { name: 'terms.docx', type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', bytes: await makeDocx([{ heading: 'Deposits' }, { paragraph: 'A rental deposit of 80 euros is refunded on return.' }]), q: 'rental deposit refund' },
      { name: 'faq.md', type: 'text/markdown', bytes: '# Helmets\n\nHelmets are included with every rental.\n', q: 'helmets included' },
      { name: 'notes.txt', type: 'text/plain', bytes: 'Our workshop closes at noon on Saturdays.\n', q: 'workshop saturday noon' },
      { name: 'page.html', type: 'text/html', bytes: htmlPage('Insurance', 'Theft insurance costs 5 euros per day.'), q: 'theft insurance cost' },
    ];
    for (const file of files) {
      const response = await upload(t.app, tenant, bot.id, file);
      expect(response.statusCode, `${file.name}: ${response.body}`).toBe(201);
      const settled = await waitForStatus(tenant, bot.id, response.json().id, ['ready', 'failed']);
      expect(settled, file.name).toMatchObject({ status: 'ready', error: null, stats: { documents: 1, failed_documents: 0 } });
      expect((await topHit(file.q))?.source_id, file.name).toBe(response.json().id);
    }
  });

  it('fails a corrupt or encrypted PDF and a DOCX bomb with a readable error, touching nothing else', async () => {
    for (const [name, bytes, type] of [
      ['broken.pdf', makeCorruptPdf(), 'application/pdf'],
      ['locked.pdf', await makeEncryptedPdf(), 'application/pdf'],
      ['bomb.docx', makeDocxBomb({ expandedMb: 200 }), 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'],
    ] as const) {
      const response = await upload(t.app, tenant, bot.id, { name, type, bytes });
      expect(response.statusCode, `${name}: ${response.body}`).toBe(201);
      const settled = await waitForStatus(tenant, bot.id, response.json().id, ['ready', 'failed']);
      expect(settled, name).toMatchObject({ status: 'failed', stats: { documents: 1, chunks: 0, failed_documents: 1 } });
      expect(settled.error, name).toEqual(expect.any(String));
      const [doc] = await documents(response.json().id);
      expect(doc, name).toMatchObject({ status: 'failed', chunks: 0 });
      expect(doc!.error, name).toEqual(expect.any(String));
    }
    // The agent's other sources are untouched.
    expect((await topHit('helmets included'))?.content).toContain('Helmets');
  });
});

describe('scheduled re-sync', () => {
  it('re-syncs a source whose sync_interval_hours has passed, and never one without it', async () => {
    const clock = testClock();
    const scheduled = await createTestApp({ sources: { ...loadConfig({}).sources, allowPrivateHosts: true }, runtime: { ...loadConfig({}).runtime, pollIntervalMs: 50 } }, { clock });
    try {
      const s = await site({ pages: { '/': htmlPage('Menu', 'Soup of the day: tomato.') } });
      const owner = await scheduled.tenant();
      const agent = (await owner.request('POST', '/api/v1/chatbots', { name: 'Scheduled', instructions: 'Help.' })).json();
      const create = async (body: Record<string, unknown>) => {
        const created = (await owner.request('POST', `/api/v1/chatbots/${agent.id}/sources`, { type: 'website', url: `${s.url}/`, ...body })).json();
        return waitForStatus(owner, agent.id, created.id, ['ready', 'failed']);
      };
      const hourly = await create({ sync_interval_hours: 1, title: 'Hourly' });
      const manual = await create({ title: 'Manual' });
      expect(hourly).toMatchObject({ status: 'ready', sync_interval_hours: 1 });
      expect(manual).toMatchObject({ status: 'ready', sync_interval_hours: null });

      s.setPage('/', htmlPage('Menu', 'Soup of the day: pumpkin.'));
      clock.advance(2 * 3_600_000);
      const get = async (id: unknown) => (await owner.request('GET', `/api/v1/chatbots/${agent.id}/sources/${id as string}`)).json();
      const deadline = Date.now() + 20_000;
      while ((await get(hourly.id)).last_synced_at === hourly.last_synced_at || (await get(hourly.id)).status !== 'ready') {
        if (Date.now() > deadline) throw new Error('the scheduled re-sync did not run');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect((await get(manual.id)).last_synced_at).toBe(manual.last_synced_at);
      const hits = (await owner.request('GET', `/api/v1/chatbots/${agent.id}/knowledge/search?q=soup`)).json().data;
      expect(hits.find((h: { source_id: string }) => h.source_id === hourly.id).content).toContain('pumpkin');
    } finally {
      await scheduled.close();
    }
  });
});
