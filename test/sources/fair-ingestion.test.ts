import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createTestApp, type TestApp, type Tenant } from '../helpers/app.js';
import { makeDocx } from '../helpers/documents.js';
import { makeChatbot } from '../helpers/factories.js';
import { htmlPage, startSite, type TestSite } from '../helpers/site-server.js';
import { upload, waitForStatus } from './support.js';

// Ingestion slots are shared fairly: one workspace's long syncs never hold every slot while another's wait.
let t: TestApp;
let site: TestSite;

beforeAll(async () => {
  const defaults = loadConfig({}).sources;
  t = await createTestApp({
    sources: { ...defaults, allowPrivateHosts: true, ingestConcurrency: 2, fetchTimeoutMs: 600_000 },
    runtime: { ...loadConfig({}).runtime, pollIntervalMs: 50 },
  });
  // Every page of this site but the home page never answers: a crawl of it runs until the test ends.
  site = await startSite({ pages: { '/': htmlPage('Slow site', 'A site that takes forever.', ['/forever']), '/forever': { hang: true } } });
});
afterAll(async () => {
  await site?.close();
  await t?.close();
});

async function slowSource(tenant: Tenant, chatbotId: string): Promise<string> {
  const response = await tenant.request('POST', `/api/v1/chatbots/${chatbotId}/sources`, { type: 'website', url: `${site.url}/` });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().id;
}

describe('fair ingestion', () => {
  it("ingests workspace B's small file while workspace A's long syncs run, and A runs one sync at a time", { timeout: 60_000 }, async () => {
    const a = await t.tenant();
    const b = await t.tenant();
    const botA = await makeChatbot(a);
    const botB = await makeChatbot(b);
    // A queues two long syncs first: with two slots, without fairness they would take both.
    const first = await slowSource(a, botA.id);
    const second = await slowSource(a, botA.id);
    expect((await waitForStatus(a, botA.id, first, ['syncing'])).status).toBe('syncing');

    const docx = await makeDocx([{ heading: 'Returns' }, { paragraph: 'Returns are accepted within 30 days.' }]);
    const created = await upload(t.app, b, botB.id, { name: 'returns.docx', type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', bytes: docx });
    expect(created.statusCode, created.body).toBe(201);
    const ready = await waitForStatus(b, botB.id, created.json().id, ['ready', 'failed'], 20_000);
    expect(ready.status).toBe('ready');

    // A's second sync still waits for its first: one workspace, one sync at a time.
    expect((await a.request('GET', `/api/v1/chatbots/${botA.id}/sources/${first}`)).json().status).toBe('syncing');
    expect((await a.request('GET', `/api/v1/chatbots/${botA.id}/sources/${second}`)).json().status).toBe('queued');
  });
});
