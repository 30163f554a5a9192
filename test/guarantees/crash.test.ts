import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { dropDatabase, freshDatabaseEnv } from '../helpers/database.js';
import { cli, SERVER_ENTRY } from '../helpers/processes.js';
import { ROOT } from './support.js';

interface Server {
  child: ChildProcess;
  url: string;
  exited: Promise<void>;
  log(): string;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Starts `node dist/server.js` (node itself, no wrapper) and waits until /readyz is 200. */
async function startServer(env: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, [SERVER_ENTRY], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let ended = false;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => (ended = true));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (ended) throw new Error(`server exited before it was ready:\n${output}`);
    const ready = await fetch(`${url}/readyz`).then((r) => r.status === 200, () => false);
    if (ready) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server not ready in time:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { child, url, exited, log: () => output };
}

interface Acknowledged {
  idempotencyKey: string;
  body: string;
  id: string;
  payload: string;
}

/**
 * Nothing acknowledged is lost: leads written by a stream of concurrent requests survive a SIGKILL of the
 * server together with their audit events and idempotency records.
 */
describe('crash: kill -9 in the middle of a write stream', () => {
  const env: Record<string, string> = {
    ...freshDatabaseEnv(),
    RATE_LIMIT_KEY_PER_MINUTE: '10000000',
    RATE_LIMIT_WORKSPACE_PER_MINUTE: '10000000',
  };
  const servers: Server[] = [];
  afterAll(async () => {
    for (const server of servers) {
      if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
      await server.exited;
    }
    await dropDatabase(env);
  });

  it('keeps every acknowledged lead, its audit event and its stored response', { timeout: 180_000 }, async () => {
    const cliJson = async <T>(args: string[]): Promise<T> => {
      const result = await cli(env, ...args, '--json');
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout) as T;
    };
    const workspace = await cliJson<{ id: string }>(['workspace', 'create', '--name', 'Crash test']);
    const { key } = await cliJson<{ key: string }>(['key', 'create', '--workspace', workspace.id, '--scopes', 'all']);
    const headers = (idempotencyKey?: string) => ({
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
    });

    const first = await startServer(env);
    servers.push(first);
    const acknowledged: Acknowledged[] = [];
    let stopped = false;
    const unacknowledged: { idempotencyKey: string; body: string }[] = [];
    const loop = async (loopId: number) => {
      for (let i = 0; !stopped; i++) {
        const idempotencyKey = `crash-${loopId}-${i}`;
        const body = JSON.stringify({ name: `Lead ${loopId}/${i}`, email: `crash-${loopId}-${i}@example.com` });
        try {
          const response = await fetch(`${first.url}/api/v1/leads`, { method: 'POST', headers: headers(idempotencyKey), body, signal: AbortSignal.timeout(10_000) });
          const payload = await response.text();
          if (response.status >= 200 && response.status < 300) {
            acknowledged.push({ idempotencyKey, body, id: (JSON.parse(payload) as { id: string }).id, payload });
          }
        } catch {
          unacknowledged.push({ idempotencyKey, body }); // the connection died with the server
        }
      }
    };
    const loops = Array.from({ length: 8 }, (_, i) => loop(i));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    process.kill(first.child.pid!, 'SIGKILL');
    await first.exited;
    expect(first.child.signalCode).toBe('SIGKILL');
    stopped = true;
    await Promise.all(loops);
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(unacknowledged.length).toBeGreaterThan(0);

    const second = await startServer(env);
    servers.push(second);
    const get = async (path: string) => {
      const response = await fetch(`${second.url}${path}`, { headers: headers(), signal: AbortSignal.timeout(10_000) });
      return { status: response.status, json: (await response.json()) as Record<string, unknown> };
    };

    // Every acknowledged lead exists, exactly as it was acknowledged.
    for (const ack of acknowledged) {
      const { status, json } = await get(`/api/v1/leads/${ack.id}`);
      expect(status, ack.id).toBe(200);
      expect(json).toEqual(JSON.parse(ack.payload));
    }

    // Every stored lead (acknowledged or not) has exactly one lead.created event, and there are no others.
    const stored: string[] = [];
    for (let cursor: string | null = null; ; ) {
      const page = await get(`/api/v1/leads?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status).toBe(200);
      stored.push(...(page.json.data as { id: string }[]).map((lead) => lead.id));
      cursor = page.json.next_cursor as string | null;
      if (!cursor) break;
    }
    expect(new Set(stored).size).toBe(stored.length);
    expect(stored.length).toBeGreaterThanOrEqual(acknowledged.length);
    const events = await cliJson<{ action: string; target: { id: string }; idempotency_key: string | null }[]>([
      'audit', 'list', '--workspace', workspace.id, '--limit', '100000',
    ]);
    const created = events.filter((e) => e.action === 'lead.created');
    expect(created.map((e) => e.target.id).sort()).toEqual([...stored].sort());
    for (const ack of acknowledged) {
      expect(created.filter((e) => e.target.id === ack.id).map((e) => e.idempotency_key)).toEqual([ack.idempotencyKey]);
    }

    const verify = await cli(env, 'audit', 'verify', '--workspace', workspace.id);
    expect(verify.code, `${verify.stdout}${verify.stderr}`).toBe(0);
    expect(verify.stdout).toMatch(new RegExp(`intact: ${events.length} events`));

    // Every acknowledged Idempotency-Key replays the original response.
    for (const ack of acknowledged) {
      const response = await fetch(`${second.url}/api/v1/leads`, { method: 'POST', headers: headers(ack.idempotencyKey), body: ack.body, signal: AbortSignal.timeout(10_000) });
      expect(response.status, ack.idempotencyKey).toBe(201);
      expect(response.headers.get('idempotent-replayed')).toBe('true');
      expect(await response.text()).toBe(ack.payload);
    }
    // A request whose answer was lost is retried with its key: it is replayed (it committed) or runs now, and
    // is never written twice. Nothing the killed process left behind holds the key: a 409 (with Retry-After)
    // may only be seen for a few seconds after the restart.
    const deadline = Date.now() + 5_000;
    for (const lost of unacknowledged) {
      let response: Response;
      for (;;) {
        response = await fetch(`${second.url}/api/v1/leads`, { method: 'POST', headers: headers(lost.idempotencyKey), body: lost.body, signal: AbortSignal.timeout(10_000) });
        if (response.status !== 409) break;
        expect(response.headers.get('retry-after')).toBe('1');
        expect(Date.now(), `${lost.idempotencyKey} still blocked`).toBeLessThan(deadline);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const payload = (await response.json()) as { id?: string; code?: string };
      expect(response.status, JSON.stringify(payload)).toBe(201);
      const email = (JSON.parse(lost.body) as { email: string }).email;
      const same = await get(`/api/v1/leads?email=${encodeURIComponent(email)}`);
      expect((same.json.data as { id: string }[]).map((lead) => lead.id)).toEqual([payload.id]);
      if (response.headers.get('idempotent-replayed') === 'true') expect(stored).toContain(payload.id);
      else expect(stored).not.toContain(payload.id);
    }
  });
});
