import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

const COLUMN_TYPES = [
  'api_key_id text not null',
  'idempotency_key text not null',
  'fingerprint text not null',
  'state text not null',
  'locked_until text',
  'response_status integer',
  'response_headers text',
  'response_body text',
  'created_at text not null',
  'expires_at text not null',
].join(', ');
const COLUMNS = 'api_key_id, idempotency_key, fingerprint, state, locked_until, response_status, response_headers, response_body, created_at, expires_at';

/**
 * SQLite only: idempotency records become a plain rowid table without any index, appended in the order
 * they are written; the embedded shape finds a record through an index kept in the process's memory
 * (src/modules/idempotency/sqlite-records.ts). A B-tree index of the clients' random keys put every
 * record on a leaf of its own, one more page in every commit (docs/decisions/0017). PostgreSQL keeps its
 * table and primary key: its instances claim keys through the database.
 */
export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) return;
  await sql`create table idempotency_records (
    id integer primary key,
    ${sql.raw(COLUMN_TYPES)}
  )`.execute(db);
  await sql`insert into idempotency_records (${sql.raw(COLUMNS)}) select ${sql.raw(COLUMNS)} from idempotency_keys order by created_at`.execute(db);
  await sql`drop table idempotency_keys`.execute(db);
  await sql`alter table idempotency_records rename to idempotency_keys`.execute(db);
}

/** Restores the keyed table. */
export async function down(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) return;
  await sql`create table idempotency_keyed (
    ${sql.raw(COLUMN_TYPES)},
    constraint idempotency_keys_pk primary key (api_key_id, idempotency_key)
  )`.execute(db);
  await sql`insert or replace into idempotency_keyed (${sql.raw(COLUMNS)}) select ${sql.raw(COLUMNS)} from idempotency_keys order by id`.execute(db);
  await sql`drop table idempotency_keys`.execute(db);
  await sql`alter table idempotency_keyed rename to idempotency_keys`.execute(db);
  await sql`create index idempotency_keys_expiry on idempotency_keys (expires_at)`.execute(db);
}
