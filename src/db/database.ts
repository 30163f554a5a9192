import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, sql, type MigrationProvider } from 'kysely';
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
  return new Kysely<Database>({ dialect: new SqliteDialect({ database: connection }) });
}

/** Opens the configured database. Call `migrateToLatest` before serving. */
export function openDatabase(config: DatabaseConfig): DatabaseHandle {
  if (config.kind === 'postgres') {
    throw new Error('PostgreSQL support is not built yet: use sqlite:PATH or leave DATABASE_URL unset');
  }
  const db = openSqlite(config.path);
  return {
    db,
    kind: config.kind,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Runs every pending migration; returns the names applied now. Throws when one fails. */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
