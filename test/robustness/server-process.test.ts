import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKeySecret } from '../../src/lib/api-key-format.js';
import { cliJson, SERVER_ENTRY } from '../helpers/processes.js';

// The real server as a child process (`node dist/server.js`, node itself so that signals and
// the exit code are the server's own): readiness, request ids, log hygiene and graceful shutdown.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-agent-server-'));
const dbFile = path.join(dir, 'server.db');
let port = 0;
let env: Record<string, string>;
let server: ChildProcess;
let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
let stdout = '';
let stderr = '';
let key = '';

const until = async <T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\nstdout:\n${stdout.slice(-3000)}\nstderr:\n${stderr.slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(free));
    });
  });
}

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}
function call(method: string, url: string, headers: Record<string, string> = {}, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: url, headers, agent: false, timeout: 20_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}
const authorized = (extra: Record<string, string> = {}) => ({ authorization: `Bearer ${key}`, ...extra });


const logLines = (): Record<string, unknown>[] =>
  stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
const logged = (predicate: (line: Record<string, unknown>) => boolean) => until('a log line', () => (logLines().some(predicate) ? true : undefined), 10_000);

beforeAll(async () => {
  port = await freePort();
  env = { ...(process.env as Record<string, string>), PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: `sqlite:${dbFile}`, LOG_LEVEL: 'debug' }; // debug: 'incoming request' lines show when the server has a request
  const workspace = await cliJson(env, 'workspace', 'create', '--name', 'X');
  expect(workspace.id).toMatch(/^ws_/);
  const created = await cliJson(env, 'key', 'create', '--workspace', String(workspace.id), '--scopes', 'all', '--name', 'process test');
  key = String(created.key);
  expect(key).toMatch(/^wsk_/);

  server = spawn(process.execPath, [SERVER_ENTRY], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  server.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  server.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  exited = new Promise((resolve) => server.once('exit', (code, signal) => resolve({ code, signal })));
  await until('/readyz', async () => {
    if (server.exitCode !== null) throw new Error(`server exited early (${server.exitCode}): ${stderr}`);
    const res = await call('GET', '/readyz').catch(() => undefined);
    return res?.status === 200 ? res : undefined;
  });
}, 90_000);

afterAll(async () => {
  if (server && server.exitCode === null && server.signalCode === null) {
    server.kill('SIGKILL');
    await exited;
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the server process', () => {
  it('answers /healthz and /readyz with 200', async () => {
    const health = await call('GET', '/healthz');
    expect(health.status).toBe(200);
    expect(JSON.parse(health.body)).toEqual({ status: 'ok' });
    const ready = await call('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toMatchObject({ status: 'ready', checks: { database: 'ok' } });
  });

  it('echoes a well-formed Request-Id in the header and in problem bodies, and replaces an ill-formed one', async () => {
    const ok = await call('GET', '/api/v1/chatbots', authorized({ 'request-id': 'my-trace-123' }));
    expect(ok.status).toBe(200);
    expect(ok.headers['request-id']).toBe('my-trace-123');

    const missing = await call('GET', '/api/v1/chatbots/nope', authorized({ 'request-id': 'my-trace-404' }));
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(missing.headers['request-id']).toBe('my-trace-404');
    expect(JSON.parse(missing.body)).toMatchObject({ status: 404, code: 'not_found', request_id: 'my-trace-404' });

    const unauthenticated = await call('GET', '/api/v1/leads', { 'request-id': 'my-trace-401' });
    expect(unauthenticated.status).toBe(401);
    expect(JSON.parse(unauthenticated.body)).toMatchObject({ code: 'missing_api_key', request_id: 'my-trace-401' });

    const odd = await call('GET', '/api/v1/chatbots', authorized({ 'request-id': 'has spaces <and> "quotes"' }));
    expect(odd.status).toBe(200);
    expect(odd.headers['request-id']).toMatch(/^req_[0-9A-Z]{26}$/);
  });

  it('answers every kind of bad key over real HTTP with a 401 problem and a valid WWW-Authenticate challenge', async () => {
    // Over a real socket, Node refuses header values outside Latin-1, which inject() does not check.
    const doomed = await cliJson(env, 'key', 'create', '--workspace', String((await cliJson(env, 'workspace', 'create', '--name', 'Y')).id), '--scopes', 'all');
    await cliJson(env, 'key', 'revoke', String(doomed.id));
    const cases: [string, string][] = [
      ['malformed', `wsk_${'Z'.repeat(40)}`],
      ['unknown', generateApiKeySecret()],
      ['revoked', String(doomed.key)],
    ];
    for (const [label, secret] of cases) {
      const res = await call('GET', '/api/v1/chatbots', { authorization: `Bearer ${secret}`, 'request-id': `bad-key-${label}` });
      const where = `${label} key → ${res.status} ${JSON.stringify(res.headers)} ${res.body}`;
      expect.soft(res.status, where).toBe(401);
      expect.soft(String(res.headers['content-type']), where).toMatch(/^application\/problem\+json/);
      expect.soft(res.headers['request-id'], where).toBe(`bad-key-${label}`);
      expect.soft(String(res.headers['www-authenticate']), where).toMatch(/^Bearer realm="api", error="invalid_token"/);
      expect.soft(JSON.parse(res.body), where).toMatchObject({ status: 401, code: 'invalid_api_key', request_id: `bad-key-${label}` });
    }
    const none = await call('GET', '/api/v1/chatbots');
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer realm="api"');
  });

  it('logs JSON lines with request ids and never the API key or the Authorization header', async () => {
    const wrongKey = `wsk_${'Z'.repeat(40)}`;
    await call('GET', '/api/v1/chatbots', authorized({ 'request-id': 'log-check-ok' }));
    await call('POST', '/api/v1/leads', authorized({ 'request-id': 'log-check-400', 'content-type': 'application/json' }), '{"name":');
    await call('GET', '/api/v1/chatbots', { authorization: `Bearer ${wrongKey}`, 'request-id': 'log-check-401' });
    await logged((line) => line.request_id === 'log-check-401' && line.status === 401);

    const lines = logLines();
    for (const id of ['my-trace-123', 'log-check-ok', 'log-check-400', 'log-check-401']) {
      expect(lines.some((line) => line.request_id === id), id).toBe(true);
    }
    for (const line of lines.filter((l) => l.msg === 'request completed')) expect(line.request_id).toEqual(expect.any(String));
    for (const output of [stdout, stderr]) {
      expect(output).not.toContain(key);
      expect(output).not.toContain(key.slice(4)); // the secret body without its prefix
      expect(output).not.toContain(wrongKey);
      expect(output).not.toMatch(/Bearer\s+wsk_/i);
    }
  });

  it('on SIGTERM finishes in-flight requests with 2xx, refuses new connections and exits with 0', async () => {
    // Slow uploads: the server has the headers (and has logged the request) but not yet the whole body.
    const body = (i: number) => JSON.stringify({ name: `Slow ${i}`, instructions: 'x'.repeat(2000) });
    const inFlight = Array.from({ length: 5 }, (_, i) => {
      const payload = body(i);
      let finish: () => void = () => undefined;
      const response = new Promise<Reply>((resolve, reject) => {
        const req = http.request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/api/v1/chatbots',
            agent: false,
            headers: authorized({ 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)), 'request-id': `slow-${i}` }),
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
          },
        );
        req.on('error', reject);
        req.write(payload.slice(0, 100));
        finish = () => req.end(payload.slice(100));
      });
      return { response, finish: () => finish() };
    });
    for (let i = 0; i < 5; i++) await logged((line) => line.request_id === `slow-${i}`);

    server.kill('SIGTERM');
    await logged((line) => String(line.msg).startsWith('shutting down'));
    const refusal = await until('new connections to be refused', () =>
      new Promise<string | undefined>((resolve) => {
        const socket = net.connect({ host: '127.0.0.1', port });
        socket.once('connect', () => {
          socket.destroy();
          resolve(undefined);
        });
        socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code));
      }),
    10_000);
    expect(refusal).toBe('ECONNREFUSED');

    for (const request of inFlight) request.finish();
    const replies = await Promise.all(inFlight.map((request) => request.response));
    replies.forEach((reply, i) => {
      expect(reply.status, reply.body).toBe(201);
      expect(JSON.parse(reply.body)).toMatchObject({ object: 'chatbot', name: `Slow ${i}`, status: 'draft' });
    });

    expect(await exited).toEqual({ code: 0, signal: null });
    expect(logLines().some((line) => line.msg === 'shutdown complete')).toBe(true);
    const db = new Database(dbFile, { readonly: true });
    try {
      const row = db.prepare("SELECT count(*) AS n FROM chatbots WHERE name LIKE 'Slow %'").get() as { n: number };
      expect(row.n).toBe(5);
    } finally {
      db.close();
    }
  }, 60_000);
});
