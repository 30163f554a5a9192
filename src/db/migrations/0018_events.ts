import type { Kysely } from 'kysely';

/**
 * Domain events (issue 32): every change that matters outside the request (a conversation, a message, a
 * lead, an agent, a source synced) is written as an event in the transaction of the change, with the
 * resource as the API presents it. `seq` numbers a workspace's events in commit order: it is claimed on the
 * workspace row (`event_seq`), whose lock a second writer waits for, so a reader paging by `seq` never
 * misses an event that commits late. Integrations read them (`GET /api/v1/events`); live streams and
 * webhooks are fed from the same log.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('workspaces').addColumn('event_seq', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addUniqueConstraint('events_workspace_seq', ['workspace_id', 'seq'])
    .execute();
  await db.schema.createIndex('events_workspace_type_seq').on('events').columns(['workspace_id', 'type', 'seq']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('events').execute();
  await db.schema.alterTable('workspaces').dropColumn('event_seq').execute();
}
