import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import SQLite from 'better-sqlite3';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/schema.js';
import type { SqliteConnections } from '../../src/db/sqlite.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { backend, insertOrphanKeyCheckedAtCommit, openScratchSqlite } from '../helpers/database.js';

// The embedded database's own driver (src/db/sqlite.ts): a writer for transactions and writes, a
// query-only reader for the rest, and data_version, which tells the read cache of other processes' commits.
const run = promisify(execFile);

// These are properties of the SQLite driver, so they run on a SQLite file whatever the suite's backend.

describe('SQLite connections: writer, reader and data_version', () => {
  let scratch: Awaited<ReturnType<typeof openScratchSqlite>>;
  let file: string;
  let db: Kysely<Database>;
  let connections: SqliteConnections;

  beforeAll(async () => {
    scratch = await openScratchSqlite('sqlite-connections');
    ({ file, connections } = scratch);
    db = scratch.handle.db;
  });

  afterAll(() => scratch.remove());

  const workspace = (id: string) => ({ id, name: id, created_at: new Date().toISOString() });

  it('a read outside a transaction neither waits for an open transaction nor sees its writes', async () => {
    let insideDone!: () => void;
    const inside = new Promise<void>((resolve) => (insideDone = resolve));
    let finish!: () => void;
    const held = new Promise<void>((resolve) => (finish = resolve));
    const transaction = db.transaction().execute(async (trx) => {
      await trx.insertInto('workspaces').values(workspace('ws_uncommitted')).execute();
      insideDone();
      await held; // the transaction stays open (holding the writer) until the reads below are done
    });
    await inside;
    const during = await db.selectFrom('workspaces').select('id').where('id', '=', 'ws_uncommitted').execute();
    expect(during).toEqual([]);
    finish();
    await transaction;
    const after = await db.selectFrom('workspaces').select('id').where('id', '=', 'ws_uncommitted').execute();
    expect(after).toEqual([{ id: 'ws_uncommitted' }]);
  });

  it('rows come back keyed by column name, as better-sqlite3 builds them (last duplicate wins, no prototype key)', async () => {
    await db.insertInto('workspaces').values(workspace('ws_rows')).execute();
    const { rows } = await sql<Record<string, unknown>>`select id, name, 'first' as dup, 'second' as dup, 'x' as "__proto__", null as empty from workspaces where id = ${'ws_rows'}`.execute(db);
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    expect(Object.keys(row).sort()).toEqual(['__proto__', 'dup', 'empty', 'id', 'name']);
    expect(row).toMatchObject({ id: 'ws_rows', name: 'ws_rows', dup: 'second', empty: null });
    expect(Object.getOwnPropertyDescriptor(row, '__proto__')?.value).toBe('x');
    // Inside a transaction (the writer) the same shape comes back.
    const inside = await db.transaction().execute((trx) => sql<Record<string, unknown>>`select id, 'first' as dup, 'second' as dup from workspaces where id = ${'ws_rows'}`.execute(trx));
    expect(inside.rows).toEqual([{ id: 'ws_rows', dup: 'second' }]);
  });

  it('the reader refuses writes (query_only)', () => {
    expect(() => connections.reader!.raw.prepare("insert into workspaces (id, name, created_at) values ('x', 'x', 'x')").run()).toThrow(/readonly|query_only|attempt to write/i);
  });

  it("data_version moves with another process's commits and never with this process's own writes", async () => {
    await db.insertInto('workspaces').values(workspace('ws_version')).execute();
    await new Promise((resolve) => setImmediate(resolve));
    const before = connections.dataVersion();
    await db.transaction().execute(async (trx) => {
      await trx.updateTable('workspaces').set({ name: 'renamed' }).where('id', '=', 'ws_version').execute();
    });
    await sql`update workspaces set name = 'raw' where id = 'ws_version'`.execute(db);
    expect(connections.dataVersion()).toBe(before);

    const other = new SQLite(file);
    try {
      other.prepare("update workspaces set name = 'other process' where id = 'ws_version'").run();
    } finally {
      other.close();
    }
    // Read once per event-loop turn: from the next turn on (a request arriving after the commit is read then).
    expect(connections.dataVersion()).toBe(before);
    await new Promise((resolve) => setImmediate(resolve));
    expect(connections.dataVersion()).not.toBe(before);
    const row = await db.selectFrom('workspaces').select('name').where('id', '=', 'ws_version').executeTakeFirstOrThrow();
    expect(row.name).toBe('other process');
  });

  it('a failed COMMIT rolls back and frees the writer for the next transaction', async () => {
    // The commit itself fails (a foreign key checked at COMMIT).
    const attempt = db.transaction().execute(insertOrphanKeyCheckedAtCommit);
    await expect(attempt).rejects.toThrow(/FOREIGN KEY/i);
    expect(connections.writer.raw.inTransaction).toBe(false);
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('workspaces').values(workspace('ws_after_failed_commit')).execute();
    });
    const orphan = await db.selectFrom('api_keys').select('id').where('id', '=', 'key_orphan').execute();
    expect(orphan).toEqual([]);
    const next = await db.selectFrom('workspaces').select('id').where('id', '=', 'ws_after_failed_commit').execute();
    expect(next).toHaveLength(1);
  });
});

describe('cached rows stay correct (API keys, agents, lead pages)', () => {
  let t: TestApp;
  let url: string;

  beforeAll(async () => {
    t = await createTestApp();
    // Over a real socket (kept alive), as a client sends them: a request sent after another process's commit
    // is read in a later event-loop turn than anything before it (in-process inject calls can share one turn).
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });

  afterAll(async () => {
    await t.close();
  });

  /** Runs an update as another process would: its own connection to the SQLite file (PostgreSQL: the database). */
  async function updateElsewhere(text: string, values: string[]): Promise<void> {
    if (backend !== 'sqlite') {
      let n = 0;
      await t.app.database.db.executeQuery(CompiledQuery.raw(text.replace(/\?/g, () => `$${++n}`), values));
      return;
    }
    // A real other process: a synchronous write from this one would block the event loop, and with it an
    // app transaction open at that moment (a background job's), until SQLite's busy timeout ran out.
    const script = "const [file, text, values] = process.argv.slice(1); const db = new (require('better-sqlite3'))(file); db.prepare(text).run(...JSON.parse(values)); db.close();";
    await run(process.execPath, ['-e', script, t.databaseEnv.DATABASE_URL!.replace(/^sqlite:/, ''), text, JSON.stringify(values)]);
  }

  it('a key revoked by another process (the CLI, another connection) is refused on the next request', async () => {
    const tenant = await t.tenant();
    const get = async () => (await fetch(`${url}/api/v1/chatbots`, { headers: { authorization: `Bearer ${tenant.key}` } })).status;
    expect(await get()).toBe(200);
    expect(await get()).toBe(200);

    await updateElsewhere('update api_keys set revoked_at = ? where id = ?', [new Date().toISOString(), tenant.keyId]);
    expect(await get()).toBe(401);
  });

  it('GET /chatbots/{id} shows a change made through the API, and one made by another process, on the next request', async () => {
    const tenant = await t.tenant();
    const headers = { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' };
    const created = await fetch(`${url}/api/v1/chatbots`, { method: 'POST', headers, body: JSON.stringify({ name: 'First name' }) });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const get = async () => {
      const res = await fetch(`${url}/api/v1/chatbots/${id}`, { headers });
      expect(res.status).toBe(200);
      return { etag: res.headers.get('etag'), body: (await res.json()) as { name: string; updated_at: string } };
    };
    const first = await get();
    expect(first.body.name).toBe('First name');
    expect(await get()).toEqual(first);

    const patched = await fetch(`${url}/api/v1/chatbots/${id}`, { method: 'PATCH', headers, body: JSON.stringify({ name: 'Second name' }) });
    expect(patched.status).toBe(200);
    const second = await get();
    expect(second.body.name).toBe('Second name');
    expect(second.etag).not.toBe(first.etag);

    const updatedAt = new Date(Date.parse(second.body.updated_at) + 1000).toISOString();
    await updateElsewhere('update chatbots set name = ?, updated_at = ? where id = ?', ['Third name', updatedAt, id]);
    const third = await get();
    expect(third.body).toMatchObject({ name: 'Third name', updated_at: updatedAt });
    expect(third.etag).not.toBe(second.etag);
  });

  it('GET /leads shows a lead created or changed through the API, or by another process, on the next request; per workspace, cursors still checked', async () => {
    const tenant = await t.tenant();
    const other = await t.tenant();
    const headers = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
    const create = async (email: string) => {
      const res = await fetch(`${url}/api/v1/leads`, { method: 'POST', headers: headers(tenant.key), body: JSON.stringify({ email }) });
      expect(res.status).toBe(201);
      return ((await res.json()) as { id: string }).id;
    };
    const list = async (query = '', key = tenant.key) => {
      const res = await fetch(`${url}/api/v1/leads?limit=2${query}`, { headers: headers(key) });
      return { status: res.status, link: res.headers.get('link'), body: (await res.json()) as { data: { id: string; email: string; status: string }[]; next_cursor: string | null } };
    };
    const emails = async (query = '') => (await list(query)).body.data.map((lead) => lead.email);

    await create('a@example.com');
    const second = await create('b@example.com');
    const first = await list();
    expect(first.body.data.map((lead) => lead.email)).toEqual(['b@example.com', 'a@example.com']);
    expect(await list()).toEqual(first);
    expect((await list('', other.key)).body.data).toEqual([]);

    await create('c@example.com');
    const third = await list();
    expect(third.body.data.map((lead) => lead.email)).toEqual(['c@example.com', 'b@example.com']);
    expect(third.link).toContain('cursor=');
    const cursor = `&cursor=${third.body.next_cursor}`;
    expect(await emails(cursor)).toEqual(['a@example.com']);
    expect(await emails(cursor)).toEqual(['a@example.com']);
    // The cursor is bound to its filters, cached page or not.
    expect((await list(`${cursor}&status=qualified`)).status).toBe(400);

    const patched = await fetch(`${url}/api/v1/leads/${second}`, { method: 'PATCH', headers: headers(tenant.key), body: JSON.stringify({ status: 'qualified' }) });
    expect(patched.status).toBe(200);
    expect((await list()).body.data.map((lead) => lead.status)).toEqual(['new', 'qualified']);

    await updateElsewhere('update leads set email = ? where id = ?', ['changed@example.com', second]);
    expect(await emails()).toEqual(['c@example.com', 'changed@example.com']);
  });
});
