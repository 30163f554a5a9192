import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { htmlPage, startSite, type TestSite } from '../helpers/site-server.js';
import { eventually, makeActiveChatbot } from '../runtime/support.js';
import { waitForStatus } from './support.js';

// A sync shows how far it has got (issue 30, the dashboard's progress bar): `progress: {done, found}` while
// syncing, where a crawl's `found` grows as it meets links (up to its page limit), and null once it settles.
let t: TestApp;
let tenant: Tenant;
let site: TestSite;

beforeAll(async () => {
  const defaults = loadConfig({});
  t = await createTestApp({ sources: { ...defaults.sources, allowPrivateHosts: true } });
  tenant = await t.tenant();
  site = await startSite({
    pages: {
      '/': htmlPage('Home', 'Welcome to the bakery.', ['/a', '/b', '/c']),
      '/a': htmlPage('Bread', 'Sourdough every day.'),
      '/b': htmlPage('Cakes', 'Carrot cake on Fridays.'),
      '/c': htmlPage('Coffee', 'Beans from the hills.'),
    },
    // One page every half second: the sync is seen half way.
    robots: 'User-agent: *\nCrawl-delay: 0.5\n',
  });
});
afterAll(async () => {
  await t?.close();
  await site?.close();
});

describe('sync progress', () => {
  it('counts documents done against documents found while syncing, and is null before and after', async () => {
    const bot = await makeActiveChatbot(tenant);
    const created = (await tenant.request('POST', `/api/v1/chatbots/${bot.id}/sources`, { type: 'website', url: `${site.url}/`, crawl: { max_pages: 3 } })).json();
    expect(created).toMatchObject({ status: 'queued', progress: null });

    const halfway = await eventually(async () => {
      const source = (await tenant.request('GET', `/api/v1/chatbots/${bot.id}/sources/${created.id}`)).json();
      return source.status === 'syncing' && source.progress?.done >= 1 && source.progress.done < 3 ? source.progress : undefined;
    });
    // The home page links to three pages: four found, the page limit keeps three.
    expect(halfway.found).toBe(3);

    const ready = await waitForStatus(tenant, bot.id, created.id, ['ready', 'failed']);
    expect(ready).toMatchObject({ status: 'ready', progress: null, stats: { documents: 3, failed_documents: 0 } });
  });

  it('is null for text and Q&A sources, ready at once', async () => {
    const bot = await makeActiveChatbot(tenant);
    const created = (await tenant.request('POST', `/api/v1/chatbots/${bot.id}/sources`, { type: 'text', title: 'Hours', content: 'Open at nine.' })).json();
    expect(created).toMatchObject({ status: 'ready', progress: null });
  });
});
