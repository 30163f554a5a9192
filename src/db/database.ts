import { Kysely, Migrator, PostgresDialect, sql, type MigrationProvider } from 'kysely';
import pg from 'pg';
import type { DatabaseConfig } from '../config.js';
import { migrations } from './migrations/index.js';
import type { Database } from './schema.js';
import { registerSqlite, SqliteConnections, sqliteDialect } from './sqlite.js';
import { postgresCommitSignals, sqliteCommitSignals, type CommitSignals } from './commit-signals.js';

/** The open database: the Kysely instance plus what the rest of the service needs to know about it. */
export interface DatabaseHandle {
  db: Kysely<Database>;
  kind: DatabaseConfig['kind'];
  /** Cheap round trip used by /readyz. */
  ping(): Promise<void>;
  /** Whether writes fail for lack of disk space right now (SQLite; PostgreSQL's own disk is its business). */
  storageFull(): Promise<boolean>;
  /** Commit signals for the live streams (src/db/commit-signals.ts). */
  signals: CommitSignals;
  close(): Promise<void>;
}

function openSqlite(file: string): { db: Kysely<Database>; connections: SqliteConnections } {
  const connections = new SqliteConnections(file);
  const db = new Kysely<Database>({ dialect: sqliteDialect(connections) });
  registerSqlite(db, connections);
  return { db, connections };
}

/** pg's error for a query that outlived `query_timeout`. */
const QUERY_TIMEOUT_MESSAGE = 'Query read timeout';

/**
 * A pg client that closes its connection when a query outlives `query_timeout`. pg only stops waiting: the
 * query may still run, or its bytes sit in a stalled network, so the connection's state (a transaction
 * left open, an answer still to come) is unknown; handed back to the pool it would serve the next request
 * from that state. Ended, it leaves the pool (pg-pool drops a client that is ending).
 */
class TimeBoundClient extends pg.Client {
  // One signature for pg's overloads: whatever `query` returns is passed on untouched.
  override query(...args: never[]): never {
    const result = (super.query as (...params: unknown[]) => unknown)(...args);
    if (result instanceof Promise) {
      result.catch((error: unknown) => {
        if (error instanceof Error && error.message === QUERY_TIMEOUT_MESSAGE) this.end().catch(() => undefined);
      });
    }
    return result as never;
  }
}

function openPostgres(config: Extract<DatabaseConfig, { kind: 'postgres' }>): Kysely<Database> {
  const pool = new pg.Pool({
    Client: TimeBoundClient,
    connectionString: config.url,
    max: config.poolMax,
    connectionTimeoutMillis: config.connectTimeoutMs,
    idleTimeoutMillis: 30_000,
    statement_timeout: config.statementTimeoutMs,
    // A database that stops answering (packets dropped, nothing reset) fails each query after this long
    // instead of holding its request for the whole outage.
    query_timeout: config.queryTimeoutMs,
    // A transaction left open by an instance that froze or lost its network (an idempotent POST holds one,
    // with the key's lock) is ended by PostgreSQL after 10 s, and a dead peer is noticed by TCP keepalive:
    // nothing such an instance leaves behind blocks a retry for long. Requests' transactions are short.
    idle_in_transaction_session_timeout: 10_000,
    keepAlive: true,
    // Without a delay Node leaves the first probe to the OS default (two hours on Linux).
    keepAliveInitialDelayMillis: 10_000,
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
  const sqlite = config.kind === 'sqlite' ? openSqlite(config.path) : null;
  const db = sqlite ? sqlite.db : openPostgres(config as Extract<DatabaseConfig, { kind: 'postgres' }>);
  const signals = sqlite ? sqliteCommitSignals(sqlite.connections.writes) : postgresCommitSignals((config as Extract<DatabaseConfig, { kind: 'postgres' }>).url);
  return {
    db,
    kind: config.kind,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    storageFull: async () => (sqlite ? sqlite.connections.storageFull() : false),
    signals,
    close: async () => {
      await signals.close();
      await db.destroy();
    },
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
    return { handle, applied: await migrateWithoutTimeouts(handle, config) };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * Migrations are not requests: building an index over a large table, or waiting for another instance's
 * migration lock, may outlast the timeouts meant for requests. On PostgreSQL they run over a connection
 * of their own without them.
 */
async function migrateWithoutTimeouts(handle: DatabaseHandle, config: DatabaseConfig): Promise<string[]> {
  if (config.kind !== 'postgres') return migrateToLatest(handle.db);
  const db = openPostgres({ ...config, poolMax: 1, statementTimeoutMs: 0, queryTimeoutMs: 0 });
  try {
    return await migrateToLatest(db, config.schema);
  } finally {
    await db.destroy();
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
