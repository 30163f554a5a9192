import type { Kysely } from 'kysely';
import { jsonTextField } from '../dialect.js';

/**
 * `events.conversation_id`: the conversation an event concerns (the conversation's own events, its messages',
 * its lead's), null for the others. A visitor's stream resumed with `Last-Event-ID` reads its conversation's
 * events after that number through (workspace_id, conversation_id, seq), instead of paging through the whole
 * workspace's log. The events written before this migration get it from their payload, as the writer does.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').addColumn('conversation_id', 'text').execute();
  await db
    .updateTable('events')
    .set({ conversation_id: jsonTextField(db, 'data', 'id') })
    .where('type', 'in', ['conversation.created', 'conversation.updated'])
    .execute();
  await db
    .updateTable('events')
    .set({ conversation_id: jsonTextField(db, 'data', 'conversation_id') })
    .where('type', 'in', ['message.created', 'lead.created', 'lead.updated'])
    .execute();
  await db.schema.createIndex('events_workspace_conversation_seq').on('events').columns(['workspace_id', 'conversation_id', 'seq']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('events_workspace_conversation_seq').execute();
  await db.schema.alterTable('events').dropColumn('conversation_id').execute();
}
