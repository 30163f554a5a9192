import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { AppError } from '../../src/http/errors.js';
import { systemContext } from '../../src/lib/actor.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { signUp } from '../helpers/dashboard.js';
import { makeChatbot } from '../helpers/factories.js';
import { expectProblem } from '../helpers/http.js';
import { eventually } from '../runtime/support.js';
import { multipart, upload } from './support.js';

// Per-workspace quotas on knowledge sources: SOURCE_MAX_PER_WORKSPACE sources (every agent's together) and
// SOURCE_MAX_TOTAL_MB of stored files, refused with 409 quota_exceeded and the figures, through the API, the
// dashboard and concurrent creations alike; another workspace is unaffected. SQLite by default; PostgreSQL
// with TEST_DATABASE_URL.
const MAX_SOURCES = 4;
const MAX_BYTES = 1024 * 1024;
const FILE_BYTES = 300 * 1024;

let t: TestApp;

beforeAll(async () => {
  const defaults = loadConfig({});
  // Without the job runner: these tests are about what is stored, not how it is ingested.
  t = await createTestApp({ sources: { ...defaults.sources, quota: { sources: MAX_SOURCES, totalBytes: MAX_BYTES } } }, { replyWorker: false });
});
afterAll(async () => t?.close());

let address: string | null = null;

/** The app on a real port (some tests send what inject cannot: a body cut short). */
async function listening(): Promise<string> {
  address ??= await t.app.listen({ port: 0, host: '127.0.0.1' });
  return address;
}

/** A plain-text file of `bytes` bytes. */
function textFile(bytes: number, name = 'notes.txt') {
  const line = 'The bakery opens at seven and closes at six, every day but Sunday.\n';
  return { name, type: 'text/plain', bytes: line.repeat(Math.ceil(bytes / line.length)).slice(0, bytes) };
}

/** The bytes of the files a workspace stores, and how many sources it has, read from the database. */
async function stored(workspaceId: string): Promise<{ sources: number; bytes: number }> {
  const { db } = t.app.database;
  const sources = await db.selectFrom('sources').select((eb) => eb.fn.countAll<number | string>().as('n')).where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
  const files = await db.selectFrom('source_files').select('bytes').where('workspace_id', '=', workspaceId).execute();
  return { sources: Number(sources.n), bytes: files.reduce((sum, file) => sum + file.bytes.length, 0) };
}

const text = (n: number) => ({ type: 'text', title: `Note ${n}`, content: `Note number ${n} about the bakery.` });

describe('source count quota (SOURCE_MAX_PER_WORKSPACE)', () => {
  it('refuses the next source of any kind, on any agent, with 409 quota_exceeded and the figures; a deletion makes room', async () => {
    const tenant = await t.tenant();
    const first = await makeChatbot(tenant);
    const second = await makeChatbot(tenant);
    const created: string[] = [];
    for (let n = 0; n < MAX_SOURCES; n++) {
      const bot = n % 2 === 0 ? first : second;
      const response = await tenant.request('POST', `/api/v1/chatbots/${bot.id}/sources`, text(n));
      expect(response.statusCode, response.body).toBe(201);
      created.push(response.json().id);
    }

    const refused = expectProblem(await tenant.request('POST', `/api/v1/chatbots/${first.id}/sources`, text(9)), 409, 'quota_exceeded');
    expect(refused).toMatchObject({ type: '/docs/errors#quota_exceeded', quota: 'sources', limit: MAX_SOURCES, used: MAX_SOURCES });
    expect(refused.detail).toContain('SOURCE_MAX_PER_WORKSPACE');
    expectProblem(await tenant.request('POST', `/api/v1/chatbots/${second.id}/sources`, { type: 'qa', question: 'Parking?', answer: 'Behind the shop.' }), 409, 'quota_exceeded');
    expectProblem(await tenant.request('POST', `/api/v1/chatbots/${second.id}/sources`, { type: 'website', url: 'https://example.com/' }), 409, 'quota_exceeded');
    // A file is refused before its body is read: the sources already there say it cannot fit.
    expectProblem(await upload(t.app, tenant, first.id, textFile(1000)), 409, 'quota_exceeded');
    expect(await stored(tenant.workspaceId)).toEqual({ sources: MAX_SOURCES, bytes: 0 });

    expect((await tenant.request('DELETE', `/api/v1/chatbots/${first.id}/sources/${created[0]}`)).statusCode).toBe(204);
    expect((await tenant.request('POST', `/api/v1/chatbots/${first.id}/sources`, text(10))).statusCode).toBe(201);
  });

  it('holds in the dashboard, which creates through the same service', async () => {
    const user = await signUp(t.app);
    const botId = (await user.request('POST', '/app/api/chatbots', { name: 'Bakery', instructions: 'Answer briefly.' })).json().id as string;
    for (let n = 0; n < MAX_SOURCES; n++) expect((await user.request('POST', `/app/api/chatbots/${botId}/sources`, text(n))).statusCode).toBe(201);
    const refused = expectProblem(await user.request('POST', `/app/api/chatbots/${botId}/sources`, text(9)), 409, 'quota_exceeded');
    expect(refused).toMatchObject({ quota: 'sources', limit: MAX_SOURCES, used: MAX_SOURCES });
    const { payload, contentType } = multipart(textFile(1000));
    const headers = { cookie: user.cookie, 'x-csrf-token': user.csrf, origin: 'http://localhost:80', 'content-type': contentType };
    expectProblem(await t.app.inject({ method: 'POST', url: `/app/api/chatbots/${botId}/sources`, headers, payload }), 409, 'quota_exceeded');
  });

  it('counts each workspace alone', async () => {
    const full = await t.tenant();
    const bot = await makeChatbot(full);
    for (let n = 0; n < MAX_SOURCES; n++) await full.request('POST', `/api/v1/chatbots/${bot.id}/sources`, text(n));
    expectProblem(await full.request('POST', `/api/v1/chatbots/${bot.id}/sources`, text(9)), 409, 'quota_exceeded');

    const other = await t.tenant();
    const otherBot = await makeChatbot(other);
    expect((await other.request('POST', `/api/v1/chatbots/${otherBot.id}/sources`, text(0))).statusCode).toBe(201);
    expect((await upload(t.app, other, otherBot.id, textFile(FILE_BYTES))).statusCode).toBe(201);
  });
});

describe('stored file quota (SOURCE_MAX_TOTAL_MB)', () => {
  let tenant: Tenant;
  let botId: string;

  beforeAll(async () => {
    tenant = await t.tenant();
    botId = (await makeChatbot(tenant)).id;
  });

  it('refuses a file that does not fit with 409 quota_exceeded, limit, used and requested_bytes', async () => {
    for (let n = 0; n < 3; n++) expect((await upload(t.app, tenant, botId, textFile(FILE_BYTES, `part-${n}.txt`))).statusCode).toBe(201);
    const refused = expectProblem(await upload(t.app, tenant, botId, textFile(FILE_BYTES, 'part-3.txt')), 409, 'quota_exceeded');
    expect(refused).toMatchObject({ quota: 'total_bytes', limit: MAX_BYTES, used: 3 * FILE_BYTES });
    // Judged from Content-Length before the body is read: at least the file less the form around it.
    expect(refused.requested_bytes).toBeGreaterThan(FILE_BYTES - 20 * 1024);
    expect(refused.requested_bytes).toBeLessThanOrEqual(FILE_BYTES);
    expect(refused.detail).toContain('SOURCE_MAX_TOTAL_MB');
    // Text sources store no file: still welcome.
    expect((await tenant.request('POST', `/api/v1/chatbots/${botId}/sources`, text(1))).statusCode).toBe(201);
    expect(await stored(tenant.workspaceId)).toEqual({ sources: 4, bytes: 3 * FILE_BYTES });
  });

  it('replays a stored upload retried with its Idempotency-Key, though the workspace is now full', async () => {
    const own = await t.tenant();
    const bot = await makeChatbot(own);
    for (let n = 0; n < 2; n++) await upload(t.app, own, bot.id, textFile(FILE_BYTES, `part-${n}.txt`));
    const file = textFile(FILE_BYTES, 'last.txt');
    const first = await upload(t.app, own, bot.id, file, {}, { 'idempotency-key': 'last-part' });
    expect(first.statusCode, first.body).toBe(201);
    const retried = await upload(t.app, own, bot.id, file, {}, { 'idempotency-key': 'last-part' });
    expect(retried.statusCode, retried.body).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    expect(retried.json().id).toBe(first.json().id);
    expectProblem(await upload(t.app, own, bot.id, textFile(FILE_BYTES, 'more.txt'), {}, { 'idempotency-key': 'more' }), 409, 'quota_exceeded');
    expect(await stored(own.workspaceId)).toEqual({ sources: 3, bytes: 3 * FILE_BYTES });
  });

  it('gives back the room of an upload abandoned half way', async () => {
    const own = await t.tenant();
    const bot = await makeChatbot(own);
    const { port } = new URL(await listening());
    const { payload, contentType } = multipart(textFile(FILE_BYTES));
    await new Promise<void>((resolve) => {
      const request = http.request({ host: '127.0.0.1', port, method: 'POST', path: `/api/v1/chatbots/${bot.id}/sources`, headers: {
        authorization: `Bearer ${own.key}`, 'content-type': contentType, 'content-length': String(payload.length),
      } });
      request.on('error', () => resolve());
      // Half the body, then the client goes away.
      request.write(payload.subarray(0, payload.length / 2), () => setTimeout(() => {
        request.destroy();
        resolve();
      }, 200));
    });
    for (let n = 0; n < 2; n++) expect((await upload(t.app, own, bot.id, textFile(FILE_BYTES, `part-${n}.txt`))).statusCode).toBe(201);
    // Had the abandoned upload kept its ~300 KB, the third file would not fit (the server may still be
    // noticing the client left: a 409 then, until it has).
    await eventually(async () => {
      const response = await upload(t.app, own, bot.id, textFile(FILE_BYTES, 'third.txt'));
      if (response.statusCode === 201) return true;
      expectProblem(response, 409, 'quota_exceeded');
      return undefined;
    }, 5_000);
    expect(await stored(own.workspaceId)).toEqual({ sources: 3, bytes: 3 * FILE_BYTES });
  });

  it('refuses a small file that does not fit either, judged on its stored size in the transaction', async () => {
    const own = await t.tenant();
    const bot = await makeChatbot(own);
    for (let n = 0; n < 3; n++) await upload(t.app, own, bot.id, textFile(FILE_BYTES, `part-${n}.txt`));
    // 124 KiB are left; 130 KiB is within the early check's allowance for the form, so the transaction decides.
    const refused = expectProblem(await upload(t.app, own, bot.id, textFile(130 * 1024)), 409, 'quota_exceeded');
    expect(refused).toMatchObject({ quota: 'total_bytes', limit: MAX_BYTES, used: 3 * FILE_BYTES, requested_bytes: 130 * 1024 });
    expect((await upload(t.app, own, bot.id, textFile(100 * 1024))).statusCode).toBe(201);
    expect((await stored(own.workspaceId)).bytes).toBe(3 * FILE_BYTES + 100 * 1024);
  });

  it('never stores more than the quota when uploads arrive in parallel', async () => {
    const own = await t.tenant();
    const bot = await makeChatbot(own);
    const responses = await Promise.all(Array.from({ length: 12 }, (_, n) => upload(t.app, own, bot.id, textFile(FILE_BYTES, `parallel-${n}.txt`))));
    const statuses = responses.map((response) => response.statusCode);
    expect(statuses.filter((status) => status === 201)).toHaveLength(3);
    for (const response of responses.filter((r) => r.statusCode !== 201)) expect(expectProblem(response, 409, 'quota_exceeded').quota).toBe('total_bytes');
    expect(await stored(own.workspaceId)).toEqual({ sources: 3, bytes: 3 * FILE_BYTES });
  });

  it('holds in the creating transaction when concurrent creations all pass the early check', async () => {
    const own = await t.tenant();
    const bot = await makeChatbot(own);
    const ctx = systemContext(own.workspaceId, 'test');
    const file = textFile(FILE_BYTES);
    // Straight to the service, as twelve requests whose early checks all ran before any of them was stored.
    const results = await Promise.allSettled(Array.from({ length: 12 }, (_, n) =>
      t.app.services.sources.create(ctx, bot.id, { filename: `race-${n}.txt`, mediaType: 'text/plain', bytes: Buffer.from(file.bytes) })));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(3);
    for (const result of results) {
      if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(AppError);
      if (result.status === 'rejected') expect((result.reason as AppError).code).toBe('quota_exceeded');
    }
    const usage = await stored(own.workspaceId);
    expect(usage.bytes).toBeLessThanOrEqual(MAX_BYTES);
    expect(usage).toEqual({ sources: 3, bytes: 3 * FILE_BYTES });
  });

  it('refuses from Content-Length before reading the body: 409 over the quota, 413 over SOURCE_MAX_FILE_MB', async () => {
    const own = await t.tenant();
    const bot = await makeChatbot(own);
    for (let n = 0; n < 3; n++) await upload(t.app, own, bot.id, textFile(FILE_BYTES, `part-${n}.txt`));
    const { port } = new URL(await listening());
    // The workspace stores 900 KB of 1 MB: a body announced at 2 MB cannot fit.
    const early = async (declaredBytes: number) => {
      const { payload, contentType } = multipart(textFile(64 * 1024));
      return new Promise<{ status: number; body: string }>((resolve, reject) => {
        const request = http.request({ host: '127.0.0.1', port, method: 'POST', path: `/api/v1/chatbots/${bot.id}/sources`, headers: {
          authorization: `Bearer ${own.key}`, 'content-type': contentType, 'content-length': String(declaredBytes),
        } });
        // Only the first 64 KiB of the announced body are ever sent: an answer proves it was not waited for.
        request.write(payload);
        request.on('response', (response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk.toString()));
          response.on('end', () => {
            resolve({ status: response.statusCode ?? 0, body });
            request.destroy();
          });
        });
        request.on('error', reject);
      });
    };
    const overQuota = await early(2 * 1024 * 1024);
    expect(overQuota.status, overQuota.body).toBe(409);
    expect(JSON.parse(overQuota.body)).toMatchObject({ code: 'quota_exceeded', quota: 'total_bytes', used: 3 * FILE_BYTES });
    const overFileLimit = await early(t.config.sources.maxFileBytes + 1024 * 1024);
    expect(overFileLimit.status, overFileLimit.body).toBe(413);
    expect(JSON.parse(overFileLimit.body)).toMatchObject({ code: 'payload_too_large' });
  });
});
