import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Migrator, sql, type Transaction } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { ensureSchema, migrateToLatest, openDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { migrations } from '../../src/db/migrations/index.js';
import type { Database } from '../../src/db/schema.js';
import { sqliteConnectionsOf, type SqliteConnections } from '../../src/db/sqlite.js';

// The suites run on SQLite by default and on PostgreSQL (+ Redis) when TEST_DATABASE_URL (and
// TEST_REDIS_URL) are set: `npm test` runs both (see scripts/test-all.mjs). Each test app gets a fresh
// SQLite file or a fresh PostgreSQL schema.

/** Which database this run uses. */
export const backend: 'sqlite' | 'postgres' = process.env.TEST_DATABASE_URL ? 'postgres' : 'sqlite';

/** Environment variables for a fresh, empty database (for loadConfig and for child processes). */
export function freshDatabaseEnv(): Record<string, string> {
  const redis: Record<string, string> = process.env.TEST_REDIS_URL ? { REDIS_URL: process.env.TEST_REDIS_URL } : {};
  if (process.env.TEST_DATABASE_URL) {
    const schema = `t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
    return { DATABASE_URL: process.env.TEST_DATABASE_URL, DATABASE_SCHEMA: schema, ...redis };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-agent-test-'));
  return { DATABASE_URL: `sqlite:${path.join(dir, 'test.db')}`, ...redis };
}

/** Removes a database made by freshDatabaseEnv (drops the schema, or deletes the SQLite folder). */
export async function dropDatabase(env: Record<string, string>): Promise<void> {
  if (env.DATABASE_SCHEMA) {
    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    await client.connect();
    try {
      await client.query(`drop schema if exists "${env.DATABASE_SCHEMA}" cascade`);
    } finally {
      await client.end();
    }
    return;
  }
  const file = env.DATABASE_URL?.replace(/^sqlite:/, '');
  if (file) fs.rmSync(path.dirname(file), { recursive: true, force: true });
}

/** A migrated SQLite file of its own, whatever the run's backend: for tests of the embedded driver itself. */
export async function openScratchSqlite(name: string): Promise<{ file: string; handle: DatabaseHandle; connections: SqliteConnections; remove(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${name}-`));
  const file = path.join(dir, 'test.db');
  const handle = openDatabase({ kind: 'sqlite', path: file });
  await migrateToLatest(handle.db);
  return {
    file,
    handle,
    connections: sqliteConnectionsOf(handle.db)!,
    remove: async () => {
      await handle.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A fresh database of this run's backend with no migration applied yet, and a migrator over it, for tests of
 * one migration: `migrator.migrateTo(name)` stops before it, `migrateToLatest()` applies the rest. `remove`
 * closes and drops it.
 */
export async function openUnmigrated(): Promise<{ handle: DatabaseHandle; migrator: Migrator; migrateToLatest(): Promise<string[]>; remove(): Promise<void> }> {
  const env = freshDatabaseEnv();
  const config = loadConfig({ LOG_LEVEL: 'silent', ...env });
  const handle = openDatabase(config.database);
  await ensureSchema(handle, config.database);
  const schema = config.database.kind === 'postgres' ? config.database.schema : null;
  return {
    handle,
    migrator: new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) }),
    migrateToLatest: () => migrateToLatest(handle.db, schema),
    remove: async () => {
      await handle.close();
      await dropDatabase(env);
    },
  };
}

/**
 * Makes the transaction's COMMIT itself fail on SQLite: with deferred foreign keys, a key of a workspace that
 * does not exist is refused only when the transaction commits.
 */
export async function insertOrphanKeyCheckedAtCommit(trx: Transaction<Database>): Promise<void> {
  await sql`pragma defer_foreign_keys = on`.execute(trx);
  await trx
    .insertInto('api_keys')
    .values({
      id: 'key_orphan', workspace_id: 'ws_missing', name: 'orphan', display_prefix: 'x', secret_hash: 'orphan-hash',
      scopes: '[]', created_by: null, created_at: new Date().toISOString(), expires_at: null, revoked_at: null, last_used_at: null,
    })
    .execute();
}
