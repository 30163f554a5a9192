import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { dropDatabase, freshDatabaseEnv } from '../helpers/database.js';
import { makeDecoyDocx, makeDocx, makeDocxBomb, makePdfBomb } from '../helpers/documents.js';
import { cliTenant, probeUntil, startServer, type ServerProcess } from '../helpers/processes.js';
import { startSite, type TestSite } from '../helpers/site-server.js';
import { multipart } from './support.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- response bodies

const MB = 1024 * 1024;

/** A process's resident memory now and at its peak (Linux's /proc), in bytes. */
function memoryOf(pid: number): { now: number; peak: number } {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0) * 1024;
    return { now: kb('VmRSS'), peak: kb('VmHWM') };
  } catch {
    return { now: 0, peak: 0 };
  }
}

/** The child processes of a process (the parse sandbox's). */
function childrenOf(pid: number): number[] {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * While it runs: /healthz asked one request after another (the slowest answer), and the resident memory
 * of the server with its parse processes, summed (the highest seen).
 */
function watch(server: ServerProcess) {
  let running = true;
  let slowestHealthMs = 0;
  let peakTotalBytes = 0;
  const pid = server.child.pid!;
  const sampler = setInterval(() => {
    const total = memoryOf(pid).now + childrenOf(pid).reduce((sum, child) => sum + memoryOf(child).now, 0);
    peakTotalBytes = Math.max(peakTotalBytes, total);
  }, 25);
  const prober = (async () => {
    while (running) {
      const started = Date.now();
      const response = await fetch(`${server.url}/healthz`, { signal: AbortSignal.timeout(10_000) });
      await response.arrayBuffer();
      expect(response.status).toBe(200);
      slowestHealthMs = Math.max(slowestHealthMs, Date.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  return {
    async stop() {
      running = false;
      clearInterval(sampler);
      await prober;
      return { slowestHealthMs, peakTotalBytes, serverPeakBytes: memoryOf(pid).peak };
    },
  };
}

describe('untrusted files and pages never take the instance down', () => {
  // The instance's memory is the server's plus, per parse running, at most SOURCE_PARSE_MEMORY_MB (and a
  // sampling interval's growth): 256 MB leaves the whole under 600 MB.
  const env: Record<string, string> = { ...freshDatabaseEnv(), REPLY_POLL_INTERVAL_MS: '100', OUTBOUND_ALLOW_PRIVATE_HOSTS: 'true', SOURCE_PARSE_MEMORY_MB: '256' };
  const servers: ServerProcess[] = [];
  let site: TestSite | null = null;
  afterAll(async () => {
    for (const server of servers) await server.stop('SIGKILL');
    await site?.close();
    await dropDatabase(env);
  });

  it('fails each hostile document with its reason, while /healthz answers within a second and memory stays under 600 MB', { timeout: 240_000 }, async () => {
    // A page of 1.2 million paragraphs, just under the 10 MB a fetched page may have.
    site = await startSite({ pages: { '/': `<!doctype html><html><body><main>${'<p>x</p>'.repeat(1_200_000)}</main></body></html>` } });
    const server = await startServer(env);
    servers.push(server);
    const { key } = await cliTenant(env);
    const api = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const json = body !== undefined && !Buffer.isBuffer(body);
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(json ? { 'content-type': 'application/json' } : {}), ...headers },
        ...(body === undefined ? {} : { body: json ? JSON.stringify(body) : (body as Buffer) }),
      });
      return { status: response.status, body: (await response.json()) as Json };
    };
    const bot = (await api('POST', '/api/v1/chatbots', { name: 'Target', instructions: 'Help.' })).body;
    const upload = async (name: string, bytes: Buffer) => {
      const { payload, contentType } = multipart({ name, type: 'application/octet-stream', bytes });
      const created = await api('POST', `/api/v1/chatbots/${bot.id}/sources`, payload, { 'content-type': contentType });
      expect(created.status).toBe(201);
      return created.body;
    };

    const monitor = watch(server);
    const hostile = [
      { source: await upload('inflated.docx', makeDocxBomb({ expandedMb: 45 })), codes: ['too_large_when_expanded'] },
      { source: await upload('decoy.docx', makeDecoyDocx(makeDocxBomb({ expandedMb: 300 }))), codes: ['unreadable'] },
      { source: await upload('inflating.pdf', makePdfBomb(3000)), codes: ['too_large_when_expanded'] },
      {
        source: (await api('POST', `/api/v1/chatbots/${bot.id}/sources`, { type: 'website', url: `${site.url}/`, crawl: { max_pages: 1 } })).body,
        // Which limit a page of a million elements meets first depends on the machine's speed.
        codes: ['too_large_when_expanded', 'took_too_long'],
      },
    ];
    for (const { source, codes } of hostile) {
      const path = `/api/v1/chatbots/${bot.id}/sources/${source.id}`;
      const settled = await probeUntil(async () => (await api('GET', path)).body, (current) => current.status === 'failed' || current.status === 'ready', 180_000);
      expect(settled.status, JSON.stringify(settled)).toBe('failed');
      const documents = (await api('GET', `${path}/documents`)).body.data as Json[];
      expect(documents).toHaveLength(1);
      expect(codes).toContain(documents[0]!.error_code);
      expect(documents[0]!.error).toBeTruthy();
    }
    // The instance still reads ordinary files afterwards.
    const fine = await upload('menu.docx', await makeDocx([{ heading: 'Menu' }, { paragraph: 'Soup of the day: tomato.' }]));
    const ready = await probeUntil(async () => (await api('GET', `/api/v1/chatbots/${bot.id}/sources/${fine.id}`)).body, (current) => current.status !== 'queued' && current.status !== 'syncing', 60_000);
    expect(ready.status).toBe('ready');
    const seen = await monitor.stop();
    expect(seen.slowestHealthMs).toBeLessThan(1000);
    expect(seen.serverPeakBytes).toBeLessThan(600 * MB);
    expect(seen.peakTotalBytes).toBeLessThan(600 * MB);
  });
});

describe('a sync that takes its process down every time (a poison pill)', () => {
  const env: Record<string, string> = { ...freshDatabaseEnv(), REPLY_LEASE_MS: '1000', REPLY_POLL_INTERVAL_MS: '100', OUTBOUND_ALLOW_PRIVATE_HOSTS: 'true' };
  const servers: ServerProcess[] = [];
  let site: TestSite | null = null;
  afterAll(async () => {
    for (const server of servers) await server.stop('SIGKILL');
    await site?.close();
    await dropDatabase(env);
  });

  it('is given up after its attempts with crashed_repeatedly, and the next start serves', { timeout: 180_000 }, async () => {
    // The page never answers: each run stays in the crawl until its process is killed.
    site = await startSite({ pages: { '/': { hang: true } } });
    const { key } = await cliTenant(env);
    const call = async (server: ServerProcess, method: string, path: string, body?: unknown) => {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: response.status, body: (await response.json()) as Json };
    };
    let server = await startServer(env);
    servers.push(server);
    const bot = (await call(server, 'POST', '/api/v1/chatbots', { name: 'Crashing', instructions: 'Help.' })).body;
    const source = (await call(server, 'POST', `/api/v1/chatbots/${bot.id}/sources`, { type: 'website', url: `${site.url}/` })).body;
    const path = `/api/v1/chatbots/${bot.id}/sources/${source.id}`;

    // Three runs, each killed with its process while it crawls (the site sees each run's request).
    for (let run = 1; run <= 3; run++) {
      await probeUntil(async () => site!.requests.filter((request) => request === '/').length, (count) => count >= run, 30_000);
      expect(site.requests.filter((request) => request === '/').length).toBe(run);
      process.kill(server.child.pid!, 'SIGKILL');
      expect(await server.exited).toBe('SIGKILL');
      server = await startServer(env, { port: server.port });
      servers.push(server);
    }

    // The fourth start gives the job up once its lease lapses, and serves.
    const settled = await probeUntil(async () => (await call(server, 'GET', path)).body, (current) => current.status === 'failed', 30_000);
    expect(settled.status).toBe('failed');
    expect(settled.error).toMatch(/given up after 3 attempts.*crashed_repeatedly/);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(site.requests.filter((request) => request === '/').length).toBe(3);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await call(server, 'GET', `/api/v1/chatbots/${bot.id}`)).status).toBe(200);

    // Syncing again is the owner's choice, and starts a new job.
    expect((await call(server, 'POST', `${path}/sync`)).status).toBe(202);
    await probeUntil(async () => site!.requests.filter((request) => request === '/').length, (count) => count >= 4, 30_000);
    expect(site.requests.filter((request) => request === '/').length).toBe(4);
  });
});
