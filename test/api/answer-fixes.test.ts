import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createTestApp, type TestApp, type Tenant } from '../helpers/app.js';
import { makeDocx } from '../helpers/documents.js';
import { makeChatbot } from '../helpers/factories.js';
import { startSite, type TestSite } from '../helpers/site-server.js';
import { makeActiveChatbot, startConversation, widget } from '../runtime/support.js';
import { upload, waitForStatus } from '../sources/support.js';

// What a business meets on its own content, through the real app: publishing an agent that has only knowledge
// sources, thanks inside an ordinary sentence, a Word price table, a page served at two addresses, and the
// absolute confidence of each search hit. SQLite by default; PostgreSQL + Redis with TEST_DATABASE_URL.

const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

let t: TestApp;
let tenant: Tenant;

beforeAll(async () => {
  t = await createTestApp({ sources: { ...loadConfig({}).sources, allowPrivateHosts: true } });
  tenant = await t.tenant();
});
afterAll(async () => t?.close());

const search = (chatbotId: string, q: string) => tenant.request('GET', `/api/v1/chatbots/${chatbotId}/knowledge/search?q=${encodeURIComponent(q)}&limit=5`);

async function ask(chatbotId: string, content: string) {
  const started = await startConversation(t.app, chatbotId);
  const response = await widget(t.app, 'POST', `/widget/v1/conversations/${started.conversation_id}/messages`, { token: started.visitor_token, body: { content } });
  expect(response.statusCode, response.body).toBe(201);
  return (response.json() as { reply: { content: string; outcome: string; sources: { title: string }[] } }).reply;
}

describe('publishing', () => {
  it('an agent with a ready knowledge source and no instructions can be published; one with none cannot', async () => {
    const bot = await makeChatbot(tenant, { instructions: '' });
    const refused = await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { status: 'active' });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().code).toBe('invalid_status_transition');

    const source = await tenant.request('POST', `/api/v1/chatbots/${bot.id}/sources`, { type: 'text', title: 'Hours', content: 'We open at nine every day.' });
    expect(source.json().status).toBe('ready');
    const published = await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { status: 'active' });
    expect(published.statusCode, published.body).toBe(200);
    expect(published.json()).toMatchObject({ status: 'active', instructions: '' });
  });
});

describe('courtesy in ordinary sentences', () => {
  it('"Thanks, you\'ve been very helpful!" is conversational and never listed among the unanswered questions', async () => {
    const bot = await makeActiveChatbot(tenant, { knowledge: [{ title: 'Hours', content: 'We open at nine every day.' }] });
    for (const text of ['Thanks, you\'ve been very helpful!', 'Perfect, see you on Saturday then!', 'Muchas gracias, me has ayudado mucho.']) {
      const reply = await ask(bot.id, text);
      expect(reply, text).toMatchObject({ outcome: 'conversational', sources: [] });
    }
    // A question after the thanks is still a question.
    expect((await ask(bot.id, 'Thanks! When do you open?')).outcome).toBe('answered');
    const listed = await tenant.request('GET', `/api/v1/analytics/unanswered?chatbot_id=${bot.id}`);
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json().data).toEqual([]);
  });
});

describe('a Word price table', () => {
  it('keeps each row\'s cells together under the header, in search hits and in the answer', async () => {
    const bot = await makeActiveChatbot(tenant, { knowledge: [{ title: 'About', content: 'A bike shop by the sea.' }] });
    const docx = await makeDocx([
      { heading: 'Rental prices' },
      { paragraph: 'All prices include a helmet and a lock.' },
      { table: [['Bike', 'Half day', 'Day'], ['City bike', '£12', '£18'], ['Tandem', '£25', '£40'], ['E-bike', '£30', '£45']] },
    ], { title: 'Price list' });
    const created = await upload(t.app, tenant, bot.id, { name: 'prices.docx', type: DOCX_TYPE, bytes: docx });
    expect(created.statusCode, created.body).toBe(201);
    expect(await waitForStatus(tenant, bot.id, created.json().id, ['ready', 'failed'])).toMatchObject({ status: 'ready' });

    const hits = (await search(bot.id, 'tandem day price')).json().data as { title: string; content: string }[];
    const table = hits.find((hit) => hit.title === 'Price list')!;
    expect(table.content).toContain('Bike | Half day | Day\nCity bike | £12 | £18\nTandem | £25 | £40');

    const reply = await ask(bot.id, 'How much is a tandem for a day?');
    expect(reply.outcome).toBe('answered');
    expect(reply.content).toContain('| Bike | Half day | Day |');
    expect(reply.content).toContain('| Tandem | £25 | £40 |');
  });
});

describe('one document at several addresses', () => {
  let site: TestSite;
  afterAll(async () => site?.close());

  it('stores `/` and `/index.html`, a page naming another as canonical, and a copy at a second address as one document each', async () => {
    const page = (title: string, text: string, head = '') => `<!doctype html><html><head><title>${title}</title>${head}</head><body><main><h1>${title}</h1><p>${text}</p></main>`
      + '<footer><a href="/">Home</a> <a href="/index.html">Start</a> <a href="/repairs">Repairs</a> <a href="/repairs?ref=menu">Repairs</a> <a href="/copy.html">Copy</a></footer></body></html>';
    const home = page('Welcome', 'The Harbour Bike Shop repairs and rents bikes by the sea.');
    site = await startSite({
      pages: {
        '/': home,
        '/index.html': home,
        '/copy.html': home,
        '/repairs': page('Repairs', 'A full service costs £95 and takes two days.', '<link rel="canonical" href="{origin}/repairs">'),
      },
    });
    const bot = await makeChatbot(tenant);
    const created = await tenant.request('POST', `/api/v1/chatbots/${bot.id}/sources`, { type: 'website', url: `${site.url}/`, crawl: { max_pages: 20 } });
    expect(created.statusCode, created.body).toBe(201);
    const source = await waitForStatus(tenant, bot.id, created.json().id, ['ready', 'failed']);
    expect(source).toMatchObject({ status: 'ready', stats: { documents: 2, failed_documents: 0 } });
    const documents = (await tenant.request('GET', `/api/v1/chatbots/${bot.id}/sources/${created.json().id}/documents`)).json().data as { url: string }[];
    expect(documents.map((document) => new URL(document.url).pathname).sort()).toEqual(['/', '/repairs']);
    // The index page was never fetched under its second name.
    expect(site.requests).not.toContain('/index.html');
    const hits = (await search(bot.id, 'Harbour Bike Shop')).json().data as { document_id: string }[];
    expect(new Set(hits.map((hit) => hit.document_id)).size).toBe(1);
  });
});

describe('knowledge/search', () => {
  it('returns an absolute confidence per hit beside the relative score', async () => {
    const bot = await makeChatbot(tenant, {
      knowledge: [
        { title: 'Repairs', content: 'A full service costs £95 and takes two days.' },
        { title: 'Rentals', content: 'City bikes cost £18 a day.' },
      ],
    });
    const full = (await search(bot.id, 'full service cost')).json().data as { title: string; score: number; confidence: number }[];
    expect(full[0]).toMatchObject({ title: 'Repairs', score: 1 });
    expect(full[0]!.confidence).toBeGreaterThan(0.9);
    // A question the knowledge holds little of: its best hit still scores 1, but its confidence says how little.
    const partial = (await search(bot.id, 'full service for my grandmother\'s old tricycle')).json().data as { title: string; score: number; confidence: number }[];
    expect(partial[0]).toMatchObject({ title: 'Repairs', score: 1 });
    expect(partial[0]!.confidence).toBeLessThan(0.5);
    for (const hit of [...full, ...partial]) expect(hit.confidence).toBeGreaterThanOrEqual(0);
  });
});
