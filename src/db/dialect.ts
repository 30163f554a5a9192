import { PostgresAdapter, sql, type Kysely } from 'kysely';
import type { Db } from './schema.js';

// Every difference between SQLite and PostgreSQL that the code has to know about lives in this file.

/** True when the connection (or transaction) talks to PostgreSQL. */
export function isPostgres(db: Db | Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * Adds `FOR UPDATE` on PostgreSQL, where concurrent transactions run side by side under READ COMMITTED and
 * a read-modify-write must lock its row. SQLite has one writer at a time, and no such clause.
 */
export function lockedForUpdate<Q extends { forUpdate(): Q }>(db: Db, query: Q): Q {
  return isPostgres(db) ? query.forUpdate() : query;
}

/**
 * Adds `FOR UPDATE SKIP LOCKED` on PostgreSQL, so concurrent claimers (job workers on several instances)
 * each take a different row instead of queueing behind one. SQLite's single writer needs no clause.
 */
export function claimLocked<Q extends { forUpdate(): Q; skipLocked(): Q }>(db: Db, query: Q): Q {
  return isPostgres(db) ? query.forUpdate().skipLocked() : query;
}

/** Makes a table append-only in the database itself: UPDATE and DELETE raise an error. */
export async function makeAppendOnly(db: Kysely<any>, table: string): Promise<void> { // eslint-disable-line @typescript-eslint/no-explicit-any -- migrations run on Kysely<any>
  if (isPostgres(db)) {
    await sql`create or replace function refuse_change() returns trigger language plpgsql as $$
      begin raise exception '% is append-only', tg_table_name; end $$`.execute(db);
    await sql`create trigger ${sql.raw(`${table}_append_only`)} before update or delete on ${sql.table(table)}
      for each row execute function refuse_change()`.execute(db);
    return;
  }
  for (const operation of ['update', 'delete']) {
    await sql`create trigger ${sql.raw(`${table}_no_${operation}`)} before ${sql.raw(operation)} on ${sql.table(table)}
      begin select raise(abort, ${sql.lit(`${table} is append-only`)}); end`.execute(db);
  }
}

const RETRYABLE_CODES = new Set(['40001', '40P01', 'SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT']);

/** True for errors where the database asks to run the transaction again (serialization failure, deadlock, busy). */
export function isRetryableTransactionError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && RETRYABLE_CODES.has(String((error as { code?: unknown }).code));
}

const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', '57P01', '57P02', '57P03', '53300']);
const UNAVAILABLE_MESSAGES = [/connection terminated/i, /timeout exceeded when trying to connect/i, /connection.*(closed|ended)/i, /client has encountered a connection error/i, /cannot use a pool after calling end/i];

/** True when an error means the database cannot be reached right now (answer 503 and retry later). */
export function isUnavailableError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) return true;
  return typeof message === 'string' && UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message));
}
