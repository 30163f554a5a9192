import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncLineDestination, turnBufferedDestination, type LineDestination } from '../../src/lib/log-destination.js';
import { createLogger } from '../../src/lib/logger.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';

type Line = Record<string, unknown>;

/** A destination that keeps the lines, parsed, and checks each is one complete JSON line. */
function collector(): LineDestination & { lines: Line[]; raw: string[] } {
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

  it('is the line pino itself writes for the same fields, key for key and in the same order', async () => {
    const res = await tenant.request('GET', '/api/v1/chatbots?limit=5', undefined, { 'request-id': 'same-as-pino' });
    expect(res.statusCode).toBe(200);
    const ours = out.lines.find((line) => line.request_id === 'same-as-pino')!;
    expect(ours).toMatchObject({ level: 30, service: 'chat-agent-service', method: 'GET', url: '/api/v1/chatbots?limit=5', status: 200, msg: 'request completed' });
    expect(typeof ours.response_time_ms).toBe('number');

    const reference = collector();
    createLogger({ logLevel: 'info' }, reference)
      .child({ request_id: ours.request_id })
      .info({ method: ours.method, url: ours.url, status: ours.status, response_time_ms: ours.response_time_ms }, 'request completed');
    const theirs = reference.lines[0]!;
    expect(Object.keys(ours)).toEqual(Object.keys(theirs));
    expect({ ...ours, time: null }).toEqual({ ...theirs, time: null });
    expect(new Date(ours.time as string).toISOString()).toBe(ours.time);
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

describe('the synchronous log destination', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'log-destination-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('writes every line whole and in order to a file', () => {
    const file = path.join(dir, 'lines.log');
    const fd = fs.openSync(file, 'w');
    const destination = syncLineDestination(fd);
    const lines = Array.from({ length: 1000 }, (_, i) => `${JSON.stringify({ i, text: i % 3 === 0 ? 'héllo ✓' : 'hello' })}\n`);
    for (const line of lines) destination.write(line);
    fs.closeSync(fd);
    expect(fs.readFileSync(file, 'utf8')).toBe(lines.join(''));
  });

  it('waits for a full pipe and completes partial writes, so a slow reader gets every line whole', async () => {
    const file = path.join(dir, 'piped.log');
    // The reader starts reading after a pause: the writes fill the pipe (64 KiB) and meet EAGAIN.
    const reader = spawn('sh', ['-c', `sleep 0.3; cat > '${file}'`], { stdio: ['pipe', 'ignore', 'inherit'] });
    const fd = (reader.stdin as unknown as { _handle: { fd: number } })._handle.fd;
    expect(fd).toBeGreaterThan(2);
    const destination = syncLineDestination(fd);
    const lines = Array.from({ length: 400 }, (_, i) => `${JSON.stringify({ i, pad: (i % 2 ? 'x' : 'é').repeat(900) })}\n`);
    for (const line of lines) destination.write(line);
    reader.stdin!.end();
    await once(reader, 'exit');
    expect(fs.readFileSync(file, 'utf8')).toBe(lines.join(''));
  });

  it('drops lines when the reader is gone instead of failing the caller', async () => {
    // The reader closes its end of the pipe, says so, and stays alive (so our end stays open): EPIPE.
    const reader = spawn('sh', ['-c', 'exec 0<&-; echo closed; sleep 30'], { stdio: ['pipe', 'pipe', 'ignore'] });
    try {
      reader.stdin!.on('error', () => {});
      await once(reader.stdout!, 'data');
      const fd = (reader.stdin as unknown as { _handle: { fd: number } })._handle.fd;
      expect(() => fs.writeSync(fd, 'probe\n')).toThrow(/EPIPE/);
      const destination = syncLineDestination(fd);
      expect(() => destination.write('{"lost":true}\n')).not.toThrow();
    } finally {
      reader.kill();
    }
  });
});

describe('the turn-buffered log destination', () => {
  it('writes the lines of one event-loop turn together, in order, once the turn is over', async () => {
    const writes: string[] = [];
    const destination = turnBufferedDestination({ write: (lines) => void writes.push(lines) });
    destination.write('{"n":1}\n');
    destination.write('{"n":2}\n');
    expect(writes).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['{"n":1}\n{"n":2}\n']);
    destination.write('{"n":3}\n');
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(['{"n":1}\n{"n":2}\n', '{"n":3}\n']);
  });

  it('writes early rather than hold more than 64 kB', () => {
    const writes: string[] = [];
    const destination = turnBufferedDestination({ write: (lines) => void writes.push(lines) });
    const line = `${JSON.stringify({ pad: 'x'.repeat(1000) })}\n`;
    for (let i = 0; i < 100; i++) destination.write(line);
    expect(writes.length).toBe(1);
    expect(writes[0]!.length).toBeGreaterThanOrEqual(64 * 1024);
    destination.flush();
    expect(writes.join('')).toBe(line.repeat(100));
  });

  it.each([
    ['process.exit() in the same turn', "process.exit(3)", 3],
    ['an uncaught exception in the same turn', "throw new Error('boom')", 1],
  ])('keeps the lines of the last turn through %s', async (_name, ending, code) => {
    const script = `import { createLogger } from './src/lib/logger.ts';
      const log = createLogger({ logLevel: 'info' });
      log.info({ last: true }, 'the last words');
      ${ending};`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'ignore'] });
    const stdout: Buffer[] = [];
    child.stdout!.on('data', (chunk: Buffer) => stdout.push(chunk));
    const [exitCode] = (await once(child, 'exit')) as [number];
    expect(exitCode).toBe(code);
    const lines = Buffer.concat(stdout).toString('utf8').trim().split('\n').map((line) => JSON.parse(line) as Line);
    expect(lines).toEqual([expect.objectContaining({ msg: 'the last words', last: true, level: 30 })]);
  });
});
