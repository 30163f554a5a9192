import { sql, type CreateTableBuilder, type Kysely } from 'kysely';
import { isPostgres } from '../dialect.js';

/**
 * One idempotency design on both databases (docs/decisions/0018): a record is written once, complete, in
 * the transaction of the write it describes, under a real primary key (API key, Idempotency-Key). The
 * in-flight markers of earlier versions (state, locked_until) are gone: a request that has not committed
 * has no record. On SQLite this replaces 0008's rowid table without indexes; of several rows under one key
 * there, the newest wins, as its lookups did.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('idempotency_records')
    .addColumn('api_key_id', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer', (c) => c.notNull())
    .addColumn('response_headers', 'text', (c) => c.notNull())
    .addColumn('response_body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_records_pk', ['api_key_id', 'idempotency_key'])
    .execute();
  await sql`insert into idempotency_records
    (api_key_id, idempotency_key, fingerprint, response_status, response_headers, response_body, created_at, expires_at)
    select api_key_id, idempotency_key, fingerprint, response_status, response_headers, response_body, created_at, expires_at
    from idempotency_keys
    where state = 'completed'
    order by created_at
    on conflict (api_key_id, idempotency_key) do update set
      fingerprint = excluded.fingerprint, response_status = excluded.response_status,
      response_headers = excluded.response_headers, response_body = excluded.response_body,
      created_at = excluded.created_at, expires_at = excluded.expires_at`.execute(db);
  await db.schema.dropTable('idempotency_keys').execute();
  await db.schema.createIndex('idempotency_records_expiry').on('idempotency_records').column('expires_at').execute();
}

/** Back to the table 0008 left: keyed on PostgreSQL, a rowid table without indexes on SQLite. */
export async function down(db: Kysely<any>): Promise<void> {
  const postgres = isPostgres(db);
  let table: CreateTableBuilder<string, string> = db.schema.createTable('idempotency_keys');
  if (!postgres) table = table.addColumn('id', 'integer', (c) => c.primaryKey());
  table = table
    .addColumn('api_key_id', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('locked_until', 'text')
    .addColumn('response_status', 'integer')
    .addColumn('response_headers', 'text')
    .addColumn('response_body', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull());
  if (postgres) table = table.addPrimaryKeyConstraint('idempotency_keys_pk', ['api_key_id', 'idempotency_key']);
  await table.execute();
  await sql`insert into idempotency_keys
    (api_key_id, idempotency_key, fingerprint, state, response_status, response_headers, response_body, created_at, expires_at)
    select api_key_id, idempotency_key, fingerprint, 'completed', response_status, response_headers, response_body, created_at, expires_at
    from idempotency_records order by created_at`.execute(db);
  await db.schema.dropTable('idempotency_records').execute();
  if (postgres) await db.schema.createIndex('idempotency_keys_expiry').on('idempotency_keys').column('expires_at').execute();
}
