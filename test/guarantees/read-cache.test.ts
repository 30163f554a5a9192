import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createReadCache } from '../../src/db/read-cache.js';
import { systemContext } from '../../src/lib/actor.js';
import { createTestApp, type Tenant, type TestApp } from '../helpers/app.js';
import { testClock } from '../helpers/clock.js';
import { backend, openScratchSqlite } from '../helpers/database.js';
import { makeChatbot } from '../helpers/factories.js';

// The read cache of API keys and agents (src/db/read-cache.ts) must never be seen: every answer is what the
// database says now. On PostgreSQL it is off; these suites run on both databases all the same.

describe("answers through the read cache are the database's answers", () => {
  const clock = testClock();
  let t: TestApp;
  let tenant: Tenant;
  beforeAll(async () => {
    t = await createTestApp({}, { clock });
    tenant = await t.tenant();
  });
  afterAll(() => t.close());

  it('an agent read again is the same JSON as the write that made it, and a change shows on the next read', async () => {
    const bot = await makeChatbot(tenant, { knowledge: [{ content: 'We open at nine.', title: 'Hours' }], metadata: { b: '2', a: '1' } });
    const first = await tenant.request('GET', `/api/v1/chatbots/${bot.id}`);
    const second = await tenant.request('GET', `/api/v1/chatbots/${bot.id}`);
    expect(first.statusCode).toBe(200);
    expect(second.payload).toBe(first.payload);
    expect(second.headers.etag).toBe(first.headers.etag);
    expect(second.headers['content-type']).toMatch(/^application\/json/);
    expect(second.json()).toEqual(bot);

    const patched = await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { name: 'Renamed' });
    expect(patched.statusCode).toBe(200);
    const after = await tenant.request('GET', `/api/v1/chatbots/${bot.id}`);
    expect(after.json()).toEqual(patched.json());
    expect(after.headers.etag).toBe(patched.headers.etag);
  });

  it('a revoked key is refused on its very next request', async () => {
    const other = await tenant.newKey(['chatbots:read']);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/chatbots', headers: { authorization: `Bearer ${other.key}` } })).statusCode).toBe(200);
    await t.app.services.apiKeys.revoke(systemContext(tenant.workspaceId, 'test'), other.id);
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/chatbots', headers: { authorization: `Bearer ${other.key}` } })).statusCode).toBe(401);
  });

  it.runIf(backend === 'sqlite')("sees another process's change to a key or an agent on the next request", async () => {
    const bot = await makeChatbot(tenant);
    const other = await tenant.newKey(['chatbots:read']);
    const get = () => t.app.inject({ method: 'GET', url: `/api/v1/chatbots/${bot.id}`, headers: { authorization: `Bearer ${other.key}` } });
    expect((await get()).json().name).toBe('Test agent');
    const { database } = t.config;
    if (database.kind !== 'sqlite') throw new Error('SQLite only');
    // Over HTTP a request sent after the commit is read in a later turn of the event loop; inject needs the wait.
    const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
    const cli = new SQLite(database.path);
    try {
      cli.prepare("update chatbots set name = 'Renamed elsewhere' where id = ?").run(bot.id);
      await nextTurn();
      expect((await get()).json().name).toBe('Renamed elsewhere');
      cli.prepare('update api_keys set revoked_at = ? where id = ?').run(new Date().toISOString(), other.id);
    } finally {
      cli.close();
    }
    await nextTurn();
    expect((await get()).statusCode).toBe(401);
  });
});

describe.runIf(backend === 'sqlite')('the read cache itself', () => {
  let scratch: Awaited<ReturnType<typeof openScratchSqlite>>;
  beforeAll(async () => {
    scratch = await openScratchSqlite('read-cache');
  });
  afterAll(() => scratch.remove());

  it('stays within its bytes, dropping the least recently used entries first', async () => {
    const cache = createReadCache(scratch.handle.db, 64 * 1024);
    const loads: string[] = [];
    const get = (key: string) =>
      cache.get(key, async () => {
        loads.push(key);
        return { key, text: 'x'.repeat(8 * 1024) }; // about 17 kB each as weighed (UTF-16 JSON + overhead)
      });
    for (const key of ['a', 'b', 'c']) await get(key);
    await get('a'); // a is now the most recently used
    await get('d'); // over 64 kB: b, the least recently used, goes
    loads.length = 0;
    for (const key of ['a', 'c', 'd']) await get(key);
    expect(loads).toEqual([]);
    await get('b');
    expect(loads).toEqual(['b']);
  });

  it('keeps nothing larger than its bytes, and forgets invalidated entries', async () => {
    const cache = createReadCache(scratch.handle.db, 4 * 1024);
    let loads = 0;
    const load = async () => {
      loads++;
      return { text: 'y'.repeat(4 * 1024) };
    };
    await cache.get('big', load);
    await cache.get('big', load);
    expect(loads).toBe(2);
    const small = async () => {
      loads++;
      return { n: loads };
    };
    const first = await cache.get('small:1', small);
    expect(await cache.get('small:1', small)).toBe(first);
    cache.invalidate('small:');
    expect(await cache.get('small:1', small)).not.toBe(first);
  });

  it('is not emptied by recording a key\'s use, only by changes to what it holds', async () => {
    const clock = testClock('2030-01-01T00:00:00.000Z');
    const t = await createTestApp({}, { clock });
    try {
      const tenant = await t.tenant();
      const second = await tenant.newKey(['chatbots:read']);
      const get = (key: string) => t.app.inject({ method: 'GET', url: '/api/v1/chatbots', headers: { authorization: `Bearer ${key}` } });
      expect((await get(tenant.key)).statusCode).toBe(200); // use recorded now
      clock.advance(61_000);
      expect((await get(second.key)).statusCode).toBe(200); // use recorded now: not due again for a minute
      expect((await get(second.key)).statusCode).toBe(200); // read (and kept) as it now is
      // Revoke the second key behind the service's back (in this process, unseen by the cache): while its
      // entry is kept, the key still authenticates, which shows whether the entry survived.
      await t.app.database.db.updateTable('api_keys').set({ revoked_at: clock.now().toISOString() }).where('id', '=', second.id).execute();
      expect((await get(tenant.key)).statusCode).toBe(200); // its use is recorded again: a write to api_keys
      expect((await get(second.key)).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});
