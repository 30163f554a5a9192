import { randomBytes } from 'node:crypto';
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
    // As a PostgreSQL deployment must: one SECRET_KEY for every process on the database (SQLite generates
    // secret.key beside its file instead).
    return { DATABASE_URL: process.env.TEST_DATABASE_URL, DATABASE_SCHEMA: schema, SECRET_KEY: randomBytes(32).toString('base64'), ...redis };
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

/**
 * A fresh database of the run's backend with no migration applied, and a migrator over it: for tests that
 * take it to an old version, write rows as that version did, and migrate on (`schema` for migrateToLatest).
 */
export async function freshUnmigrated(): Promise<{ handle: DatabaseHandle; migrator: Migrator; schema: string | null; remove(): Promise<void> }> {
  const env = freshDatabaseEnv();
  const config = loadConfig({ LOG_LEVEL: 'silent', ...env });
  const handle = openDatabase(config.database);
  await ensureSchema(handle, config.database);
  const schema = config.database.kind === 'postgres' ? config.database.schema : null;
  const migrator = new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations }, ...(schema ? { migrationTableSchema: schema } : {}) });
  return {
    handle,
    migrator,
    schema,
    remove: async () => {
      await handle.close();
      await dropDatabase(env);
    },
  };
}

/** A fresh database of the run's backend, migrated to the latest, for tests of a migration going down and up. */
export interface MigrationScratch {
  handle: DatabaseHandle;
  /** Moves the database to a named migration (down or up); throws on a failed step. */
  migrateTo(name: string): Promise<void>;
  /** Applies the migrations not yet applied and returns their names. */
  migrateToLatest(): Promise<string[]>;
  /** Closes and removes the database. */
  remove(): Promise<void>;
}

/** Opens a fresh database (SQLite file or PostgreSQL schema) migrated to the latest. */
export async function openMigrationScratch(): Promise<MigrationScratch> {
  const { handle, migrator, schema, remove } = await freshUnmigrated();
  await migrateToLatest(handle.db, schema);
  return {
    handle,
    async migrateTo(name) {
      const { error } = await migrator.migrateTo(name);
      if (error) throw error instanceof Error ? error : new Error(String(error));
    },
    migrateToLatest: () => migrateToLatest(handle.db, schema),
    remove,
  };
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
