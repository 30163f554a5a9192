import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/schema.js';
import { SqliteConnections, sqliteDialect } from '../../src/db/sqlite.js';
import { insertOrphanKeyCheckedAtCommit, openScratchSqlite } from '../helpers/database.js';

// Group commit on the embedded database (src/db/sqlite-group-commit.ts): writes that arrive in the same
// turn of the event loop share one COMMIT, and none of them resolves before that COMMIT has succeeded.
// "Committed" is checked on the query-only reader, a second connection that sees only committed data.

describe('SQLite group commit', () => {
  let scratch: Awaited<ReturnType<typeof openScratchSqlite>>;
  let db: Kysely<Database>;
  let connections: SqliteConnections;

  beforeAll(async () => {
    scratch = await openScratchSqlite('sqlite-group-commit');
    db = scratch.handle.db;
    connections = scratch.connections;
  });

  afterAll(() => scratch.remove());

  beforeEach(async () => {
    await db.deleteFrom('workspaces').execute();
  });

  /** The workspace ids another connection sees: what is committed. */
  const committed = (): string[] =>
    (connections.reader!.raw.prepare('select id from workspaces order by id').pluck().all() as string[]);
  const insert = (executor: Kysely<Database>, id: string) =>
    executor.insertInto('workspaces').values({ id, name: id, created_at: new Date().toISOString() }).execute();
  const ids = (count: number, prefix = 'ws_') => Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(3, '0')}`);

  it('transactions that arrive together commit together, and each resolves only once it is committed', async () => {
    const seenWhenResolved: string[][] = [];
    await Promise.all(
      ids(10).map((id) =>
        db
          .transaction()
          .execute((trx) => insert(trx, id))
          .then(() => seenWhenResolved.push(committed())),
      ),
    );
    // The first to resolve already sees all ten: one COMMIT for the ten transactions.
    expect(seenWhenResolved).toHaveLength(10);
    for (const seen of seenWhenResolved) expect(seen).toEqual(ids(10));
  });

  it('single writes outside a transaction join the group and are committed when they resolve', async () => {
    const seen: boolean[] = [];
    await Promise.all(ids(5).map((id) => insert(db, id).then(() => seen.push(committed().includes(id)))));
    expect(seen).toEqual([true, true, true, true, true]);
    expect(committed()).toEqual(ids(5));
  });

  it('a group holds at most 32 transactions', async () => {
    // A writer of its own on the same file, whose groups have no age limit: only the count closes them, so
    // the figure does not depend on how fast this machine is right now.
    const counted = new SqliteConnections(scratch.file, { members: 32, ms: Number.POSITIVE_INFINITY });
    const countedDb = new Kysely<Database>({ dialect: sqliteDialect(counted) });
    try {
      const firstSeen: number[] = [];
      await Promise.all(
        ids(40).map((id, i) =>
          countedDb
            .transaction()
            .execute((trx) => insert(trx, id))
            .then(() => {
              if (i === 0) firstSeen.push(committed().length);
            }),
        ),
      );
      expect(firstSeen).toEqual([32]);
      expect(committed()).toHaveLength(40);
    } finally {
      await countedDb.destroy();
    }
  });

  it('a transaction that fails is rolled back alone; the others of its group commit', async () => {
    await insert(db, 'ws_existing');
    const results = await Promise.allSettled([
      db.transaction().execute((trx) => insert(trx, 'ws_a')),
      db.transaction().execute(async (trx) => {
        await insert(trx, 'ws_b_partial');
        await insert(trx, 'ws_existing'); // primary key conflict: this transaction fails
      }),
      db.transaction().execute((trx) => insert(trx, 'ws_c')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE|PRIMARY KEY/i);
    expect(committed()).toEqual(['ws_a', 'ws_c', 'ws_existing']);
  });

  it('a transaction that read an earlier one of its group does not return before that one is committed', async () => {
    let readInside: string[] = [];
    let seenWhenRolledBack: string[] = [];
    const writer = db.transaction().execute((trx) => insert(trx, 'ws_written'));
    const reader = db
      .transaction()
      .execute(async (trx) => {
        readInside = (await trx.selectFrom('workspaces').select('id').execute()).map((row) => row.id);
        throw new Error('answer from what was read, then roll back');
      })
      .catch(() => (seenWhenRolledBack = committed()));
    await Promise.all([writer, reader]);
    expect(readInside).toEqual(['ws_written']);
    expect(seenWhenRolledBack).toEqual(['ws_written']);
  });

  it('a failed COMMIT fails every transaction of the group, and frees the writer', async () => {
    const results = await Promise.allSettled([
      db.transaction().execute((trx) => insert(trx, 'ws_innocent')),
      db.transaction().execute(insertOrphanKeyCheckedAtCommit), // the group's COMMIT fails
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    for (const result of results) expect(String((result as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/i);
    expect(committed()).toEqual([]);
    expect(connections.writer.raw.inTransaction).toBe(false);
    await db.transaction().execute((trx) => insert(trx, 'ws_after'));
    expect(committed()).toEqual(['ws_after']);
  });

  it('when the database rolls the group back by itself, every transaction of it fails and nothing runs outside it', async () => {
    const results = await Promise.allSettled([
      db.transaction().execute((trx) => insert(trx, 'ws_earlier')),
      db.transaction().execute(async (trx) => {
        // What SQLite does by itself on a full disk or an I/O error: the whole transaction is rolled back.
        await sql`rollback`.execute(trx);
        await insert(trx, 'ws_after_rollback'); // must not run as a statement of its own
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/rolled back by the database/);
    expect(committed()).toEqual([]);
    await insert(db, 'ws_next');
    expect(committed()).toEqual(['ws_next']);
  });

  it('closing the database commits the group still open: a shutdown loses no write in flight', async () => {
    const other = await openScratchSqlite('sqlite-group-commit-close');
    let inserted!: () => void;
    const ran = new Promise<void>((resolve) => (inserted = resolve));
    const write = other.handle.db.transaction().execute(async (trx) => {
      await insert(trx, 'ws_in_flight');
      inserted();
    });
    await ran; // the write ran; its commit waits for the group's
    await other.handle.close();
    await expect(write).resolves.toBeUndefined();
    const reopened = new SQLite(other.file, { readonly: true });
    expect(reopened.prepare('select id from workspaces').pluck().all()).toEqual(['ws_in_flight']);
    reopened.close();
    fs.rmSync(path.dirname(other.file), { recursive: true, force: true });
  });
});
