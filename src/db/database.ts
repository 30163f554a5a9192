import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type MigrationProvider } from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../config.js';
import { migrations } from './migrations/index.js';
import type { Database } from './schema.js';

/** The open database: the Kysely instance plus what the rest of the service needs to know about it. */
export interface DatabaseHandle {
  db: Kysely<Database>;
  kind: DatabaseConfig['kind'];
  /** Cheap round trip used by /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

function openSqlite(file: string): Kysely<Database> {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const connection = new SQLite(file);
  // WAL lets readers run beside the single writer; NORMAL sync in WAL mode survives a killed process
  // (only an OS crash or power loss can drop the last commits); foreign keys are off by default in SQLite.
  connection.pragma('journal_mode = WAL');
  connection.pragma('synchronous = NORMAL');
  connection.pragma('foreign_keys = ON');
  connection.pragma('busy_timeout = 5000');
  return new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(connection) }) });
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite driver prepares every statement anew, which costs as much as running it. Queries are a
 * small set of shapes, so prepared statements are kept (LRU). Sharing one is safe: Kysely runs one query
 * at a time on the connection, and better-sqlite3 runs each to completion synchronously.
 */
function withStatementCache(connection: SQLite.Database) {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => connection.close(),
    prepare: (text: string) => {
      let statement = cache.get(text);
      if (statement) {
        cache.delete(text);
      } else {
        statement = connection.prepare(text);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      }
      cache.set(text, statement);
      return statement;
    },
  };
}

function openPostgres(config: Extract<DatabaseConfig, { kind: 'postgres' }>): Kysely<Database> {
  const pool = new pg.Pool({
    connectionString: config.url,
    max: config.poolMax,
    connectionTimeoutMillis: config.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    statement_timeout: config.statementTimeoutMs,
    ...(config.schema ? { options: `-c search_path=${config.schema}` } : {}),
  });
  // A client losing its connection (server restart, network cut) must not crash the process: idle
  // clients report to the pool, checked-out ones to their own listener; the query in flight fails (503)
  // and the pool opens a new connection for the next one.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

/** Opens the configured database. Call `migrateToLatest` before serving. */
export function openDatabase(config: DatabaseConfig): DatabaseHandle {
  const db = config.kind === 'postgres' ? openPostgres(config) : openSqlite(config.path);
  return {
    db,
    kind: config.kind,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

/** Creates the configured PostgreSQL schema when it does not exist yet (a no-op on SQLite). */
export async function ensureSchema(handle: DatabaseHandle, config: DatabaseConfig): Promise<void> {
  if (config.kind === 'postgres' && config.schema) {
    await sql`create schema if not exists ${sql.id(config.schema)}`.execute(handle.db);
  }
}

/** Opens the configured database, creates its schema if needed and runs pending migrations. */
export async function prepareDatabase(config: DatabaseConfig): Promise<{ handle: DatabaseHandle; applied: string[] }> {
  const handle = openDatabase(config);
  try {
    await ensureSchema(handle, config);
    return { handle, applied: await migrateToLatest(handle.db, config.kind === 'postgres' ? config.schema : null) };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

const provider: MigrationProvider = { getMigrations: async () => migrations };

/**
 * Runs every pending migration; returns the names applied now. Throws when one fails. With a schema, the
 * migration bookkeeping tables live in it too (else Kysely could find another schema's and skip creating them).
 */
export async function migrateToLatest(db: Kysely<Database>, schema: string | null = null): Promise<string[]> {
  const migrator = new Migrator({ db, provider, ...(schema ? { migrationTableSchema: schema } : {}) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
