import type { Kysely } from 'kysely';

// Written against Kysely<any> and portable column types (text, integer, double precision) so that
// the same migration runs on SQLite and PostgreSQL and keeps compiling as the schema moves on.

/** Creates workspaces, API keys, AI Agents, conversations, messages and leads. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('workspaces')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('display_prefix', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull().unique())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('last_used_at', 'text')
    .execute();
  await db.schema.createIndex('api_keys_workspace').on('api_keys').columns(['workspace_id', 'created_at']).execute();

  await db.schema
    .createTable('chatbots')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('instructions', 'text', (c) => c.notNull())
    .addColumn('welcome_message', 'text')
    .addColumn('model', 'text')
    .addColumn('temperature', 'double precision')
    .addColumn('knowledge', 'text', (c) => c.notNull())
    .addColumn('lead_capture', 'text', (c) => c.notNull())
    .addColumn('allowed_origins', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('published_at', 'text')
    .execute();
  await db.schema
    .createIndex('chatbots_workspace_created')
    .on('chatbots')
    .columns(['workspace_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('conversations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('chatbot_id', 'text', (c) => c.notNull().references('chatbots.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('visitor_id', 'text', (c) => c.notNull())
    .addColumn('visitor_name', 'text')
    .addColumn('visitor_email', 'text')
    .addColumn('lead_id', 'text')
    .addColumn('message_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_message_at', 'text')
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('conversations_workspace_created')
    .on('conversations')
    .columns(['workspace_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('conversations_chatbot_created')
    .on('conversations')
    .columns(['chatbot_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id'))
    .addColumn('chatbot_id', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('author_type', 'text', (c) => c.notNull())
    .addColumn('author_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('messages_conversation_created')
    .on('messages')
    .columns(['conversation_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('messages_workspace_created')
    .on('messages')
    .columns(['workspace_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('leads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('chatbot_id', 'text', (c) => c.references('chatbots.id'))
    .addColumn('conversation_id', 'text', (c) => c.references('conversations.id'))
    .addColumn('name', 'text')
    .addColumn('email', 'text')
    .addColumn('phone', 'text')
    .addColumn('company', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('custom_fields', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('leads_workspace_created')
    .on('leads')
    .columns(['workspace_id', 'created_at', 'id'])
    .execute();
  await db.schema.createIndex('leads_workspace_email').on('leads').columns(['workspace_id', 'email']).execute();
}

/** Drops everything the migration created. */
export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['leads', 'messages', 'conversations', 'chatbots', 'api_keys', 'workspaces']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
