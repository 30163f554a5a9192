import { PostgresAdapter, sql, type AliasedRawBuilder, type CreateTableBuilder, type Kysely, type RawBuilder } from 'kysely';
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

/**
 * Takes a lock on `name` for the rest of the transaction, without waiting; false when another transaction
 * holds it. PostgreSQL: a transaction-scoped advisory lock on a 64-bit hash of the name, released by the
 * database at commit, at rollback, or when the connection of a crashed process drops. SQLite: the
 * transaction already holds the one writer (BEGIN IMMEDIATE, src/db/sqlite-group-commit.ts), which every
 * other transaction on the file, in this process or another, waits for: nothing more to take.
 */
export async function tryTransactionLock(trx: Db, name: string): Promise<boolean> {
  if (!isPostgres(trx)) return true;
  const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(hashtextextended(${name}, 0)) as locked`.execute(trx);
  return rows[0]?.locked === true;
}

/**
 * Takes a lock on `name` for the rest of the transaction, waiting for it (within the statement timeout).
 * PostgreSQL: a transaction-scoped advisory lock, as in `tryTransactionLock`. SQLite: the transaction already
 * holds the one writer, which every other transaction waits for: nothing more to take.
 */
export async function transactionLock(trx: Db, name: string): Promise<void> {
  if (!isPostgres(trx)) return;
  await sql`select pg_advisory_xact_lock(hashtextextended(${name}, 0))`.execute(trx);
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

// SQLITE_BUSY: another process held the file's write lock past busy_timeout (5 s).
const UNAVAILABLE_CODES = new Set(['SQLITE_BUSY', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', '57P01', '57P02', '57P03', '53300']);
// 'Query read timeout': pg's query_timeout (a database that stopped answering); the client is then ended,
// so what the request runs on it next (its rollback) fails as 'closed and is not queryable'.
const UNAVAILABLE_MESSAGES = [/connection terminated/i, /timeout exceeded when trying to connect/i, /connection.*(closed|ended)/i, /client has encountered a connection error/i, /cannot use a pool after calling end/i, /^query read timeout$/i, /client was closed and is not queryable/i];

/** True when an error means the database cannot be reached right now (answer 503 and retry later). */
export function isUnavailableError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) return true;
  return typeof message === 'string' && UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message));
}

// PostgreSQL cancelled a statement that ran (or waited for a lock) too long: statement_timeout (57014),
// lock_timeout or NOWAIT (55P03). The transaction is rolled back, so running it again is safe.
// SQLITE_ABORT_ROLLBACK: SQLite rolled a group of writes back by itself for another member's failure.
const ROLLED_BACK_CODES = new Set(['57014', '55P03', 'SQLITE_ABORT_ROLLBACK']);

/** True when the database gave up on a statement for lack of time or a lock, rolling its transaction back. */
export function isCancelledStatementError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && ROLLED_BACK_CODES.has(String((error as { code?: unknown }).code));
}

// SQLITE_FULL: the disk (or the file-size limit) is full; 53100: PostgreSQL's disk_full.
const STORAGE_FULL_CODES = new Set(['SQLITE_FULL', '53100']);

/** True when a write failed because the database has no room left. */
export function isStorageFullError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && STORAGE_FULL_CODES.has(String((error as { code?: unknown }).code));
}

/**
 * Adds an integer primary key `id` that the database numbers itself: SQLite's rowid alias (stable across
 * VACUUM, which an FTS5 index keyed by rowid needs), a PostgreSQL identity column.
 */
export function withSerialId(db: Kysely<any>, table: CreateTableBuilder<string>): CreateTableBuilder<string, 'id'> { // eslint-disable-line @typescript-eslint/no-explicit-any -- migrations run on Kysely<any>
  return isPostgres(db)
    ? table.addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    : table.addColumn('id', 'integer', (c) => c.primaryKey());
}

/**
 * A top-level field of a JSON text column, as text (null when absent): SQLite's json_extract, PostgreSQL's
 * `->>` on the column cast to jsonb. `field` is a name written in the code, never input.
 */
export function jsonTextField(db: Kysely<any>, column: string, field: string): RawBuilder<string | null> { // eslint-disable-line @typescript-eslint/no-explicit-any -- migrations run on Kysely<any>
  return isPostgres(db) ? sql<string | null>`(${sql.ref(column)}::jsonb ->> ${sql.lit(field)})` : sql<string | null>`json_extract(${sql.ref(column)}, ${sql.lit(`$.${field}`)})`;
}

/** The column type of raw bytes: bytea on PostgreSQL, blob on SQLite (both read back as a Buffer). */
export function bytesColumnType(db: Kysely<any>): RawBuilder<unknown> { // eslint-disable-line @typescript-eslint/no-explicit-any -- migrations run on Kysely<any>
  return isPostgres(db) ? sql`bytea` : sql`blob`;
}

/**
 * Makes the `title` and `content` of `table` (which has a serial `id`) searchable: migration 0005's
 * knowledge_entries index (dropped by 0017), kept as it shipped.
 * SQLite: an external-content FTS5 table `<table>_fts` (Porter stemming over unicode61 without diacritics),
 * kept in step with the table by triggers. PostgreSQL: a stored `search` tsvector (the `english` config,
 * so both backends stem English alike; the title weighs more than the content) with a GIN index.
 */
export async function addFullTextIndex(db: Kysely<any>, table: string): Promise<void> { // eslint-disable-line @typescript-eslint/no-explicit-any -- migrations run on Kysely<any>
  if (isPostgres(db)) {
    await sql`alter table ${sql.table(table)} add column search tsvector generated always as (
      setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', content), 'B')) stored`.execute(db);
    await sql`create index ${sql.raw(`${table}_search`)} on ${sql.table(table)} using gin (search)`.execute(db);
    return;
  }
  const fts = `${table}_fts`;
  await sql`create virtual table ${sql.raw(fts)} using fts5(title, content, content=${sql.lit(table)}, content_rowid='id',
    tokenize = 'porter unicode61 remove_diacritics 2')`.execute(db);
  const remove = `insert into ${fts} (${fts}, rowid, title, content) values ('delete', old.id, old.title, old.content);`;
  const add = `insert into ${fts} (rowid, title, content) values (new.id, new.title, new.content);`;
  await sql`create trigger ${sql.raw(`${table}_fts_insert`)} after insert on ${sql.table(table)} begin ${sql.raw(add)} end`.execute(db);
  await sql`create trigger ${sql.raw(`${table}_fts_delete`)} after delete on ${sql.table(table)} begin ${sql.raw(remove)} end`.execute(db);
  await sql`create trigger ${sql.raw(`${table}_fts_update`)} after update on ${sql.table(table)} begin ${sql.raw(remove)} ${sql.raw(add)} end`.execute(db);
}

/**
 * Makes the analysed `title_terms` and `terms` of `table` (a serial `id`, a `chatbot_id`) searchable by
 * `termsFullTextHits`. The text is stemmed and folded in JS already, so neither database stems again.
 * SQLite: a contentless FTS5 table `<table>_fts` (unicode61, no Porter, no folding) kept by triggers, where
 * each term is indexed as the agent's key (its id's ULID) followed by the term: one agent's chunks are then
 * found, counted (bm25's IDF) and ranked without touching another agent's, and `ORDER BY rank LIMIT` runs
 * inside FTS5. PostgreSQL: a stored `search` tsvector ('simple': title terms weight A, content terms B) with
 * a GIN index.
 */
export async function addTermsFullTextIndex(db: Kysely<any>, table: string): Promise<void> { // eslint-disable-line @typescript-eslint/no-explicit-any -- migrations run on Kysely<any>
  if (isPostgres(db)) {
    await sql`alter table ${sql.table(table)} add column search tsvector generated always as (
      setweight(to_tsvector('simple', title_terms), 'A') || setweight(to_tsvector('simple', terms), 'B')) stored`.execute(db);
    await sql`create index ${sql.raw(`${table}_search`)} on ${sql.table(table)} using gin (search)`.execute(db);
    return;
  }
  const fts = `${table}_fts`;
  await sql`create virtual table ${sql.raw(fts)} using fts5(title_terms, terms, content='', contentless_delete=1,
    tokenize = 'unicode61 remove_diacritics 0')`.execute(db);
  // agentTermsKey in SQL: the lowercased ULID of the chatbot id, glued before every term.
  const keyed = (column: string) =>
    `(select case when new.${column} = '' then '' else k || replace(new.${column}, ' ', ' ' || k) end from (select lower(substr(new.chatbot_id, instr(new.chatbot_id, '_') + 1)) as k))`;
  const add = `insert into ${fts} (rowid, title_terms, terms) values (new.id, ${keyed('title_terms')}, ${keyed('terms')});`;
  const remove = `delete from ${fts} where rowid = old.id;`;
  await sql`create trigger ${sql.raw(`${fts}_insert`)} after insert on ${sql.table(table)} begin ${sql.raw(add)} end`.execute(db);
  await sql`create trigger ${sql.raw(`${fts}_delete`)} after delete on ${sql.table(table)} begin ${sql.raw(remove)} end`.execute(db);
  await sql`create trigger ${sql.raw(`${fts}_update`)} after update on ${sql.table(table)} begin ${sql.raw(remove)} ${sql.raw(add)} end`.execute(db);
}

/** The prefix of an agent's terms in the SQLite index (see addTermsFullTextIndex); null for an id of another shape. */
function agentTermsKey(chatbotId: string): string | null {
  const key = chatbotId.slice(chatbotId.indexOf('_') + 1).toLowerCase();
  return /^[0-9a-z]+$/.test(key) ? key : null;
}

/** Undoes `addTermsFullTextIndex` (PostgreSQL's column and index go with the table). */
export async function dropTermsFullTextIndex(db: Kysely<any>, table: string): Promise<void> { // eslint-disable-line @typescript-eslint/no-explicit-any -- migrations run on Kysely<any>
  if (!isPostgres(db)) await db.schema.dropTable(`${table}_fts`).ifExists().execute();
}

/** A term of a full-text query and its inverse document frequency among the agent's chunks. */
export interface WeightedTerm {
  term: string;
  idf: number;
}

/** Relative weights of a title term and a content term in the ranking. */
const TITLE_WEIGHT = 3;

/**
 * The `limit` best rows of one agent in a table indexed by `addTermsFullTextIndex` holding any (or all) of `terms`, as
 * a join source `hits(id, rank)`, rank > 0 and higher is better (SQLite's negated bm25 with the title
 * weighted; PostgreSQL's ts_rank per term times its IDF, title weight A). `terms` must be analysed index terms (letters and digits
 * only): each is quoted (FTS5) or a parameter (PostgreSQL), so no text reaches either query language as
 * syntax. The caller still filters the joined rows on workspace and agent.
 */
export function termsFullTextHits(db: Db, table: 'knowledge_chunks', chatbotId: string, terms: readonly WeightedTerm[], mode: 'any' | 'all', limit: number): AliasedRawBuilder<{ id: number; rank: number }, 'hits'> {
  const quote = (text: string) => `"${text.replaceAll('"', '""')}"`;
  if (isPostgres(db)) {
    const queries = terms.map(({ term }) => sql`plainto_tsquery('simple', ${term})`);
    const query = sql.join(queries, mode === 'any' ? sql` || ` : sql` && `);
    // Weights of D, C, B (content) and A (title; at most 1), normalised by the log of the chunk's length like
    // bm25; each term's rank times its IDF, which ts_rank lacks.
    const weights = sql.lit(`{0.1, 0.2, ${(1 / TITLE_WEIGHT).toFixed(3)}, 1.0}`);
    const rank = sql.join(terms.map(({ idf }, i) => sql`${sql.lit(Number(idf.toFixed(6)))} * ts_rank(${weights}, search, ${queries[i]!}, 1)`), sql` + `);
    return sql<{ id: number; rank: number }>`(select id, ${rank} as rank from ${sql.table(table)}
      where chatbot_id = ${chatbotId} and search @@ (${query}) order by rank desc limit ${limit})`.as('hits');
  }
  const fts = sql.raw(`${table}_fts`);
  const key = agentTermsKey(chatbotId);
  const phrases = key === null ? ['""'] : terms.map(({ term }) => quote(key + term));
  const match = phrases.join(mode === 'any' ? ' OR ' : ' AND ');
  return sql<{ id: number; rank: number }>`(select rowid as id, -bm25(${fts}, ${sql.lit(TITLE_WEIGHT)}, 1.0) as rank from ${fts}
    where ${fts} match ${match} order by bm25(${fts}, ${sql.lit(TITLE_WEIGHT)}, 1.0) limit ${limit})`.as('hits');
}
