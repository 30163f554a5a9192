import { afterAll, describe, expect, it } from 'vitest';
import { dropDatabase, freshDatabaseEnv } from '../helpers/database.js';
import { cliTenant, startServer, type ServerProcess } from '../helpers/processes.js';
import { htmlPage, startSite, type TestSite } from '../helpers/site-server.js';

type Doc = { id: string; url: string; status: string; updated_at: string };

/**
 * An ingestion interrupted by kill -9 is resumed by the next server: the dead runner's lease lapses, the
 * job is claimed again, documents already stored with the same content hash are skipped (not rewritten),
 * and the rest are ingested.
 */
describe('crash: kill -9 in the middle of an ingestion', () => {
  const env: Record<string, string> = { ...freshDatabaseEnv(), REPLY_LEASE_MS: '1500', REPLY_POLL_INTERVAL_MS: '100', OUTBOUND_ALLOW_PRIVATE_HOSTS: 'true' };
  const servers: ServerProcess[] = [];
  let site: TestSite | null = null;
  afterAll(async () => {
    for (const server of servers) await server.stop('SIGKILL');
    await site?.close();
    await dropDatabase(env);
  });

  it('resumes after a restart, skipping the documents already stored', { timeout: 120_000 }, async () => {
    // The last page never answers while the first server runs: the crawl is stuck after three documents.
    site = await startSite({
      pages: {
        '/': htmlPage('Home', 'The home of the bakery.', ['/bread', '/cakes', '/opening-hours']),
        '/bread': htmlPage('Bread', 'Sourdough baked every morning.'),
        '/cakes': htmlPage('Cakes', 'Birthday cakes to order.'),
        '/opening-hours': { hang: true },
      },
    });
    const { key } = await cliTenant(env);
    const api = async (server: ServerProcess, method: string, path: string, body?: unknown) =>
      (await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      })).json() as Promise<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any -- response bodies

    const first = await startServer({ ...env, SOURCE_FETCH_TIMEOUT_MS: '600000' });
    servers.push(first);
    const bot = await api(first, 'POST', '/api/v1/chatbots', { name: 'Bakery agent', instructions: 'Help.' });
    const source = await api(first, 'POST', `/api/v1/chatbots/${bot.id}/sources`, { type: 'website', url: `${site.url}/` });
    expect(source.status).toBe('queued');
    const sourcePath = `/api/v1/chatbots/${bot.id}/sources/${source.id}`;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const current = await api(first, 'GET', sourcePath);
      // Progress is visible while the job runs.
      if (current.status === 'syncing' && current.stats.documents === 3) break;
      if (Date.now() > deadline) throw new Error(`no progress: ${JSON.stringify(current)}\n${first.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const before = ((await api(first, 'GET', `${sourcePath}/documents`)).data as Doc[]);
    expect(before.map((d) => new URL(d.url).pathname)).toEqual(['/', '/bread', '/cakes']);

    process.kill(first.child.pid!, 'SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    site.setPage('/opening-hours', htmlPage('Opening hours', 'Open every day from 7am to 2pm.'));

    const second = await startServer(env, { port: first.port });
    servers.push(second);
    const deadline2 = Date.now() + 60_000;
    let settled: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- response body
    for (;;) {
      settled = await api(second, 'GET', sourcePath);
      if (settled.status === 'ready' || settled.status === 'failed') break;
      if (Date.now() > deadline2) throw new Error(`not resumed: ${JSON.stringify(settled)}\n${second.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(settled).toMatchObject({ status: 'ready', stats: { documents: 4, failed_documents: 0 } });
    const after = ((await api(second, 'GET', `${sourcePath}/documents`)).data as Doc[]);
    expect(after.map((d) => new URL(d.url).pathname)).toEqual(['/', '/bread', '/cakes', '/opening-hours']);
    // The documents stored before the crash were skipped by their content hash: same rows, not rewritten.
    for (const doc of before) expect(after.find((d) => d.id === doc.id)?.updated_at).toBe(doc.updated_at);
    const hits = (await api(second, 'GET', `/api/v1/chatbots/${bot.id}/knowledge/search?q=${encodeURIComponent('when are you open')}`)).data;
    expect(hits[0].url).toBe(`${site.url}/opening-hours`);
    // Exactly one job ran the source to the end: nothing is left pending or running.
    const again = await api(second, 'GET', sourcePath);
    expect(again.status).toBe('ready');
  });
});
