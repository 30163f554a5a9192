import fs from 'node:fs';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { prepareDatabase } from '../../src/db/database.js';
import type { AuditEventsTable } from '../../src/db/schema.js';
import { eventHash } from '../../src/modules/audit/chain.js';
import { createTestApp } from '../helpers/app.js';
import { backend, dropDatabase, freshDatabaseEnv } from '../helpers/database.js';
import { makeChatbot, makeLead } from '../helpers/factories.js';
import { cli } from '../helpers/processes.js';

type Row = Record<string, unknown> & { id: string; seq: number };

/** A database given by its environment (DATABASE_URL, DATABASE_SCHEMA), as the CLI sees it. */
type DatabaseEnv = Record<string, string>;

/** Raw SQL on a database behind the service's back; `?` marks a parameter on both backends. */
interface RawSql {
  run(statement: string, ...params: unknown[]): Promise<void>;
  all<T = Row>(statement: string, ...params: unknown[]): Promise<T[]>;
}

const sqliteFile = (env: DatabaseEnv): string => env.DATABASE_URL!.replace(/^sqlite:/, '');

/**
 * Opens the database of `env` directly (better-sqlite3 on the file, or a `pg` client on the schema), runs
 * `work`, closes it.
 */
async function withRawSql<T>(env: DatabaseEnv, work: (db: RawSql) => Promise<T> | T, { readonly = false } = {}): Promise<T> {
  if (backend === 'sqlite') {
    const db = new SQLite(sqliteFile(env), { readonly });
    try {
      return await work({
        run: async (statement, ...params) => {
          db.prepare(statement).run(...params);
        },
        all: async <R,>(statement: string, ...params: unknown[]) => db.prepare(statement).all(...params) as R[],
      });
    } finally {
      db.close();
    }
  }
  const options = `-c search_path=${env.DATABASE_SCHEMA}${readonly ? ' -c default_transaction_read_only=on' : ''}`;
  const client = new pg.Client({ connectionString: env.DATABASE_URL, options });
  await client.connect();
  const numbered = (statement: string) => {
    let n = 0;
    return statement.replace(/\?/g, () => `$${++n}`);
  };
  try {
    return await work({
      run: async (statement, ...params) => {
        await client.query(numbered(statement), params);
      },
      all: async <R,>(statement: string, ...params: unknown[]) => (await client.query(numbered(statement), params)).rows as R[],
    });
  } finally {
    await client.end();
  }
}

/**
 * Tampering with the database behind the service's back: each case works on a fresh copy of the database
 * (a copy of the SQLite file, or on PostgreSQL a freshly migrated schema holding the same workspaces and
 * audit events), drops the append-only triggers (as an attacker with direct database access can), changes
 * the log, and runs `audit verify` from the CLI, which must fail and name the first bad event.
 */
describe('audit chain: tampering is detected', { timeout: 60_000 }, () => {
  let source: DatabaseEnv;
  let workspaceId: string;
  let otherWorkspaceId: string;
  /** The tenant's events, oldest first (seq 1…N). */
  let events: Row[];
  /** Every database this suite made (the source and each copy), dropped in afterAll. */
  const databases: DatabaseEnv[] = [];

  beforeAll(async () => {
    const t = await createTestApp();
    databases.push(t.databaseEnv);
    const tenant = await t.tenant();
    const other = await t.tenant();
    const bot = await makeChatbot(tenant);
    await tenant.request('PATCH', `/api/v1/chatbots/${bot.id}`, { status: 'active' });
    for (let i = 0; i < 4; i++) await makeLead(tenant);
    const lead = await makeLead(tenant);
    await tenant.request('PATCH', `/api/v1/leads/${lead.id}`, { status: 'contacted' });
    await tenant.request('POST', '/api/v1/leads', { email: 'last@example.com' }, { 'idempotency-key': 'tamper-last' });
    await makeLead(other);
    workspaceId = tenant.workspaceId;
    otherWorkspaceId = other.workspaceId;
    source = t.databaseEnv;
    // Close the app only (not t.close(), which drops the database): on SQLite, closing checkpoints the WAL into the file.
    await t.app.close();
    events = await withRawSql(source, (db) => db.all('select * from audit_events where workspace_id = ? order by seq', workspaceId), { readonly: true });
    expect(events.length).toBeGreaterThanOrEqual(9);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  });

  afterAll(async () => {
    for (const database of databases) await dropDatabase(database);
  });

  /** A fresh, untouched copy of the source database. */
  async function copyOfSource(): Promise<DatabaseEnv> {
    const target = freshDatabaseEnv();
    databases.push(target);
    if (backend === 'sqlite') {
      // The file (with its -wal/-shm when present).
      const from = sqliteFile(source);
      const to = sqliteFile(target);
      for (const suffix of ['', '-wal', '-shm']) {
        if (fs.existsSync(from + suffix)) fs.copyFileSync(from + suffix, to + suffix);
      }
      return target;
    }
    // A new schema built by the real migrations (tables, constraints, the append-only trigger, Kysely's
    // bookkeeping), then the source's workspaces (with their recorded chain heads) and audit events.
    const { handle } = await prepareDatabase(loadConfig({ LOG_LEVEL: 'silent', ...target }).database);
    await handle.close();
    const client = new pg.Client({ connectionString: target.DATABASE_URL });
    await client.connect();
    try {
      for (const table of ['workspaces', 'audit_events']) {
        await client.query(`insert into "${target.DATABASE_SCHEMA}".${table} select * from "${source.DATABASE_SCHEMA}".${table}`);
      }
    } finally {
      await client.end();
    }
    return target;
  }

  /** Drops the append-only triggers of a copy, as an attacker with direct database access can. */
  async function dropAppendOnlyTriggers(db: RawSql): Promise<void> {
    if (backend === 'sqlite') {
      await db.run('drop trigger audit_events_no_update');
      await db.run('drop trigger audit_events_no_delete');
    } else {
      await db.run('drop trigger audit_events_append_only on audit_events');
    }
  }

  /** A fresh copy of the database, tampered with by `tamper` (after dropping the append-only triggers). */
  async function tamperedCopy(tamper?: (db: RawSql) => Promise<void>): Promise<DatabaseEnv> {
    const target = await copyOfSource();
    if (tamper) {
      await withRawSql(target, async (db) => {
        await dropAppendOnlyTriggers(db);
        await tamper(db);
      });
    }
    return target;
  }

  const verify = (database: DatabaseEnv, workspace = workspaceId) => cli(database, 'audit', 'verify', '--workspace', workspace);
  const event = (seq: number) => events[seq - 1]!;

  /** Overwrites every column but seq of the row at `seq` with `values`. */
  async function overwrite(db: RawSql, seq: number, values: Row): Promise<void> {
    const { seq: _seq, ...rest } = values;
    const columns = Object.keys(rest);
    const assignments = columns.map((c) => `${c} = ?`).join(', ');
    await db.run(`update audit_events set ${assignments} where workspace_id = ? and seq = ?`, ...columns.map((c) => rest[c]), workspaceId, seq);
  }

  it('the untouched copy verifies (exit 0)', async () => {
    const copy = await tamperedCopy();
    const result = await verify(copy);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`intact: ${events.length} events`));
    // The copy is faithful: its log is append-only too, so the tampering below has to drop the triggers first.
    await expect(withRawSql(copy, (db) => db.run("update audit_events set action = 'lead.deleted' where id = ?", event(1).id))).rejects.toThrow(/append-only/);
    await expect(withRawSql(copy, (db) => db.run('delete from audit_events where id = ?', event(1).id))).rejects.toThrow(/append-only/);
  });

  it('a copy whose triggers were dropped but whose log is unchanged still verifies', async () => {
    const result = await verify(await tamperedCopy(async () => undefined));
    expect(result.code).toBe(0);
  });

  it('(a) an edited action is caught at that event', async () => {
    const target = event(4);
    const copy = await tamperedCopy((db) => db.run("update audit_events set action = 'lead.deleted' where id = ?", target.id));
    const result = await verify(copy);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`event ${target.id} (#4)`);
    expect(result.stderr).toMatch(/does not match its hash/);
    // Another workspace's chain is unaffected.
    expect((await verify(copy, otherWorkspaceId)).code).toBe(0);
  });

  it('(a) edited changes are caught at that event', async () => {
    const target = events.find((e) => e.action === 'lead.updated')!;
    const forged = JSON.stringify({ status: { before: 'new', after: 'converted' } });
    const copy = await tamperedCopy((db) => db.run('update audit_events set changes = ? where id = ?', forged, target.id));
    const result = await verify(copy);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`event ${target.id} (#${target.seq})`);
  });

  it('(a) an edit that also recomputes the event hash is caught at the next event', async () => {
    // A forger who knows the hash function can make the edited event consistent, but not the link after it.
    const forged = { ...event(5), actor_name: 'someone else' };
    const hash = eventHash(forged as unknown as AuditEventsTable);
    const copy = await tamperedCopy((db) => db.run('update audit_events set actor_name = ?, hash = ? where id = ?', forged.actor_name, hash, forged.id));
    const result = await verify(copy);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`event ${event(6).id} (#6)`);
    expect(result.stderr).toMatch(/link to the previous event does not match/);
  });

  it('(b) a deleted event in the middle is caught at the event after it', async () => {
    const copy = await tamperedCopy((db) => db.run('delete from audit_events where id = ?', event(4).id));
    const result = await verify(copy);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`event ${event(5).id} (#5)`);
    expect(result.stderr).toMatch(/missing or out of order/);
  });

  it('(c) two events with swapped contents are caught at the first of the two positions', async () => {
    const copy = await tamperedCopy(async (db) => {
      await db.run("update audit_events set id = 'evt_tmp' where id = ?", event(3).id);
      await overwrite(db, 6, event(3));
      await overwrite(db, 3, event(6));
    });
    const swapped = await withRawSql(copy, (db) => db.all('select id, seq from audit_events where workspace_id = ? and seq in (3, 6) order by seq', workspaceId), {
      readonly: true,
    });
    expect(swapped).toEqual([
      { id: event(6).id, seq: 3 },
      { id: event(3).id, seq: 6 },
    ]);
    const result = await verify(copy);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`event ${event(6).id} (#3)`);
  });

  it('(d) a deleted last event is caught as events removed from the end', async () => {
    const last = events[events.length - 1]!;
    const copy = await tamperedCopy((db) => db.run('delete from audit_events where id = ?', last.id));
    const result = await verify(copy);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/removed from the end/);
    expect(result.stderr).toContain(`after event #${events.length - 1}`);
  });

  it('(e) two events reordered by swapping their sequence numbers are caught', async () => {
    const copy = await tamperedCopy(async (db) => {
      const set = (seq: number, id: string) => db.run('update audit_events set seq = ? where id = ?', seq, id);
      await set(-1, event(3).id);
      await set(3, event(6).id);
      await set(6, event(3).id);
    });
    const result = await verify(copy);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`event ${event(6).id} (#3)`);
  });

  it('--json reports the break as one JSON value', async () => {
    const copy = await tamperedCopy((db) => db.run("update audit_events set target_id = 'lead_forged' where id = ?", event(2).id));
    const result = await cli(copy, 'audit', 'verify', '--workspace', workspaceId, '--json');
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: false, eventId: event(2).id, seq: 2 });
  });
});
