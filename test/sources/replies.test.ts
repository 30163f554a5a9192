import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createTestApp, type TestApp, type Tenant } from '../helpers/app.js';
import { htmlPage, startSite, type TestSite } from '../helpers/site-server.js';
import { eventually, makeActiveChatbot, startConversation } from '../runtime/support.js';
import { upload, waitForStatus } from './support.js';

// The reply engine retrieves from knowledge sources (issue 30, point 5): an agent answers from a Q&A source
// and from an uploaded file, which never were entries of its `knowledge` field.
let t: TestApp;
let tenant: Tenant;
let site: TestSite;

beforeAll(async () => {
  const defaults = loadConfig({});
  // One reply slot: an ingestion that took it would starve every reply.
  t = await createTestApp({ sources: { ...defaults.sources, allowPrivateHosts: true, fetchTimeoutMs: 600_000 }, runtime: { ...defaults.runtime, replyConcurrency: 1 } });
  tenant = await t.tenant();
  site = await startSite({ pages: { '/': htmlPage('Slow site', 'Start.', ['/never']), '/never': { hang: true } } });
});
afterAll(async () => {
  await t?.close();
  await site?.close();
});

async function ask(botId: string, question: string): Promise<string> {
  const { conversation_id: id } = await startConversation(t.app, botId);
  expect((await tenant.request('POST', `/api/v1/conversations/${id}/messages`, { content: question })).statusCode).toBe(201);
  return eventually(async () => {
    const messages = (await tenant.request('GET', `/api/v1/conversations/${id}/messages`)).json().data as { role: string; content: string }[];
    return messages.find((m) => m.role === 'assistant')?.content;
  });
}

describe('replies from knowledge sources', () => {
  it('answers from a Q&A source and from an uploaded file', async () => {
    const bot = await makeActiveChatbot(tenant);
    expect((await tenant.request('POST', `/api/v1/chatbots/${bot.id}/sources`, { type: 'qa', question: 'Can I bring my dog?', answer: 'Dogs on a lead are welcome inside the café.' })).statusCode).toBe(201);
    const file = await upload(t.app, tenant, bot.id, { name: 'menu.md', type: 'text/markdown', bytes: '# Breakfast\n\nPorridge with blueberries is served until 11am.\n' });
    await waitForStatus(tenant, bot.id, file.json().id, ['ready', 'failed']);

    expect(await ask(bot.id, 'Can I bring my dog inside?')).toContain('Dogs on a lead are welcome');
    expect(await ask(bot.id, 'Until when do you serve porridge?')).toContain('served until 11am');
  });

  it('keeps answering while an ingestion runs (ingest jobs have slots of their own)', async () => {
    const bot = await makeActiveChatbot(tenant);
    const slow = (await tenant.request('POST', `/api/v1/chatbots/${bot.id}/sources`, { type: 'website', url: `${site.url}/` })).json();
    await eventually(async () => ((await tenant.request('GET', `/api/v1/chatbots/${bot.id}/sources/${slow.id}`)).json().status === 'syncing' ? true : undefined));
    await tenant.request('POST', `/api/v1/chatbots/${bot.id}/sources`, { type: 'text', title: 'Parking', content: 'Park for free behind the bakery.' });
    expect(await ask(bot.id, 'Where can I park?')).toContain('behind the bakery');
    expect((await tenant.request('GET', `/api/v1/chatbots/${bot.id}/sources/${slow.id}`)).json().status).toBe('syncing');
  });
});
