import type { Kysely } from 'kysely';
import { makeAppendOnly } from '../dialect.js';

/** The audit log (hash-chained per workspace, append-only) and stored idempotent results. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('audit_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('occurred_at', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text', (c) => c.notNull())
    .addColumn('actor_name', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text', (c) => c.notNull())
    .addColumn('target_id', 'text', (c) => c.notNull())
    .addColumn('changes', 'text', (c) => c.notNull())
    .addColumn('request_id', 'text')
    .addColumn('idempotency_key', 'text')
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    .addColumn('prev_hash', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addUniqueConstraint('audit_events_workspace_seq', ['workspace_id', 'seq'])
    .execute();
  await db.schema.createIndex('audit_events_workspace_time').on('audit_events').columns(['workspace_id', 'occurred_at']).execute();

  // The head of each workspace's chain, moved in the same transaction as every append: the next event
  // links to it without a scan, concurrent writers serialize on the workspace row, and truncating the
  // tail of the chain is detected.
  await db.schema.alterTable('workspaces').addColumn('audit_seq', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('workspaces').addColumn('audit_head', 'text', (c) => c.notNull().defaultTo('')).execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('api_key_id', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('locked_until', 'text')
    .addColumn('response_status', 'integer')
    .addColumn('response_headers', 'text')
    .addColumn('response_body', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['api_key_id', 'idempotency_key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expiry').on('idempotency_keys').column('expires_at').execute();

  // Append-only, enforced by the database itself.
  await makeAppendOnly(db, 'audit_events');
}

/** Drops what the migration created. */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').ifExists().execute();
  await db.schema.dropTable('audit_events').ifExists().execute();
}
