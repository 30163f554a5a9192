import { spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, type LogDestination } from '../../src/lib/logger.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';

type Line = Record<string, unknown>;

/** A destination that keeps the lines, parsed, and checks each is one complete JSON line. */
function collector(): LogDestination & { lines: Line[]; raw: string[] } {
  const raw: string[] = [];
  const lines: Line[] = [];
  return {
    raw,
    lines,
    write(line: string) {
      expect(line.endsWith('\n') && !line.slice(0, -1).includes('\n')).toBe(true);
      raw.push(line);
      lines.push(JSON.parse(line) as Line);
    },
  };
}

async function text(socket: net.Socket): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

describe('the request log line', () => {
  let t: TestApp;
  let tenant: Tenant;
  const out = collector();

  beforeAll(async () => {
    t = await createTestApp({ logLevel: 'info' }, { logDestination: out });
    tenant = await t.tenant();
  });
  afterAll(async () => t.close());

  it('is one line per request with request_id, method, url, status and response_time_ms', async () => {
    const res = await tenant.request('GET', '/api/v1/chatbots?limit=5', undefined, { 'request-id': 'one-line' });
    expect(res.statusCode).toBe(200);
    const lines = out.lines.filter((line) => line.request_id === 'one-line');
    expect(lines).toHaveLength(1);
    const [line] = lines as [Line];
    expect(Object.keys(line)).toEqual(['level', 'time', 'service', 'request_id', 'method', 'url', 'status', 'response_time_ms', 'msg']);
    expect(line).toMatchObject({ level: 30, service: 'chat-agent-service', method: 'GET', url: '/api/v1/chatbots?limit=5', status: 200, msg: 'request completed' });
    expect(line.response_time_ms).toEqual(expect.any(Number));
    expect(line.response_time_ms as number).toBeGreaterThanOrEqual(0);
    expect(new Date(line.time as string).toISOString()).toBe(line.time);
  });

  it('escapes what the client sent: quotes and backslashes in the raw request line', async () => {
    // Over a real socket: inject() would percent-encode the URL before the server saw it.
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 });
    // Node's HTTP parser refuses control characters and non-ASCII bytes in the request line itself.
    const url = '/api/v1/chatbots/bot_"quoted"\\back?x="y"&t={|}`';
    const socket = net.connect(Number(new URL(address).port), '127.0.0.1');
    // write, not end: a half-closed socket lets Node abort a request still waiting on the database.
    socket.write(Buffer.from(`GET ${url} HTTP/1.1\r\nHost: x\r\nRequest-Id: escaped-url\r\nAuthorization: Bearer ${tenant.key}\r\nConnection: close\r\n\r\n`));
    const response = (await text(socket)).split('\r\n')[0];
    expect(response).toMatch(/^HTTP\/1\.1 4\d\d /);
    const line = out.lines.find((l) => l.request_id === 'escaped-url');
    expect(line).toMatchObject({ url, status: Number(response!.split(' ')[1]) });
  });

  it('is written for refusals (401) that are answered before any key lookup', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/chatbots', headers: { authorization: 'Bearer wsk_nonsense', 'request-id': 'refused-401' } });
    expect(res.statusCode).toBe(401);
    expect(out.lines.filter((l) => l.request_id === 'refused-401')).toEqual([expect.objectContaining({ status: 401, msg: 'request completed' })]);
  });
});

describe('log levels', () => {
  it('above info writes no request lines; at debug the request-scoped lines carry the request id', async () => {
    const quiet = collector();
    const warnApp = await createTestApp({ logLevel: 'warn' }, { logDestination: quiet });
    try {
      const res = await warnApp.app.inject({ method: 'GET', url: '/api/v1/chatbots', headers: { 'request-id': 'quiet' } });
      expect(res.statusCode).toBe(401);
      expect(quiet.lines.filter((l) => l.request_id === 'quiet')).toEqual([]);
    } finally {
      await warnApp.close();
    }

    const verbose = collector();
    const debugApp = await createTestApp({ logLevel: 'debug' }, { logDestination: verbose });
    try {
      const res = await debugApp.app.inject({ method: 'GET', url: '/api/v1/chatbots', headers: { 'request-id': 'verbose' } });
      expect(res.statusCode).toBe(401);
      const messages = verbose.lines.filter((l) => l.request_id === 'verbose').map((l) => l.msg);
      expect(messages).toEqual(['incoming request', 'request refused', 'request completed']);
    } finally {
      await debugApp.close();
    }
  });
});

describe('secrets in log lines', () => {
  it('are redacted from logged objects, and a request key never reaches a line even at debug', async () => {
    const out = collector();
    const t = await createTestApp({ logLevel: 'debug' }, { logDestination: out });
    try {
      const tenant = await t.tenant();
      const res = await tenant.request('GET', '/api/v1/chatbots', undefined, { 'request-id': 'with-key', cookie: 'session=cookie-secret' });
      expect(res.statusCode).toBe(200);
      expect(out.lines.filter((l) => l.request_id === 'with-key').map((l) => l.msg)).toEqual(['incoming request', 'request completed']);

      t.app.log.info(
        {
          authorization: 'Bearer top-secret-1',
          password: 'top-secret-2',
          secret: 'top-secret-3',
          apiKey: 'top-secret-4',
          // (`req` itself goes through Fastify's request serializer, which keeps only method, url and the like.)
          headers: { authorization: 'Bearer top-secret-5', cookie: 'top-secret-6' },
          body: { password: 'top-secret-8', name: 'kept' },
          llm: { openai: { apiKey: 'top-secret-9' } },
        },
        'probe',
      );
      const probe = out.lines.find((l) => l.msg === 'probe')!;
      expect(probe).toMatchObject({
        authorization: '[redacted]',
        password: '[redacted]',
        secret: '[redacted]',
        apiKey: '[redacted]',
        headers: { authorization: '[redacted]', cookie: '[redacted]' },
        body: { password: '[redacted]', name: 'kept' },
        llm: { openai: { apiKey: '[redacted]' } },
      });
      const all = out.raw.join('');
      expect(all).not.toContain('top-secret');
      expect(all).not.toContain(tenant.key);
      expect(all).not.toContain('cookie-secret');
    } finally {
      await t.close();
    }
  });
});

describe('the stdout destination', () => {
  /** Runs a script with the service's logger on stdout; returns its exit code and the lines it printed. */
  async function run(body: string, waitForLine = false): Promise<{ code: number | null; lines: Line[] }> {
    const script = `import { createLogger } from './src/lib/logger.ts';
      const log = createLogger({ logLevel: 'info' });
      ${body}`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'ignore'] });
    const stdout: Buffer[] = [];
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout.push(chunk);
      // A process that stays alive: its line arrived without an exit to flush it.
      if (waitForLine && Buffer.concat(stdout).includes('\n')) child.kill('SIGKILL');
    });
    // 'close', not 'exit': the child may exit before its stdout has been read to the end.
    const [code] = (await once(child, 'close')) as [number | null];
    const lines = Buffer.concat(stdout).toString('utf8').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Line);
    return { code, lines };
  }

  // 200 lines are more than the 4 kB buffer: some written on the way, the rest only by the flush at exit.
  const logMany = "for (let i = 0; i < 200; i++) log.info({ i }, 'line'); log.info({ last: true }, 'the last words');";
  const expected = [...Array.from({ length: 200 }, (_, i) => expect.objectContaining({ i, msg: 'line' })), expect.objectContaining({ msg: 'the last words', last: true, level: 30 })];

  it.each([
    ['the event loop running out', '', 0],
    ['process.exit() in the same turn', 'process.exit(3);', 3],
    ['an uncaught exception in the same turn', "throw new Error('boom');", 1],
    ['process.exit() on a later turn', 'setTimeout(() => process.exit(4), 10);', 4],
  ])('keeps every buffered line through %s', async (_name, ending, code) => {
    const result = await run(`${logMany} ${ending}`);
    expect(result.code).toBe(code);
    expect(result.lines).toEqual(expected);
  });

  it('writes the line of a quiet process without waiting for more lines or an exit', async () => {
    const started = Date.now();
    // The process would stay for 20 s; it is killed (SIGKILL: no exit handlers) once its line arrives.
    const result = await run("log.info('alone'); setTimeout(() => {}, 20_000);", true);
    expect(result.code).toBe(null);
    expect(result.lines).toEqual([expect.objectContaining({ msg: 'alone' })]);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('accepts any object with write(line) in place of stdout', () => {
    const out = collector();
    createLogger({ logLevel: 'info' }, out).child({ request_id: 'r1' }).info({ n: 1 }, 'to a collector');
    expect(out.lines).toEqual([expect.objectContaining({ service: 'chat-agent-service', request_id: 'r1', n: 1, msg: 'to a collector' })]);
  });
});
