import type { Kysely } from 'kysely';

/**
 * The model provider chosen in the dashboard (issue 33, point 5): one row for the whole instance (id
 * `instance`), not per workspace. The API key is stored only encrypted (AES-256-GCM under SECRET_KEY or the
 * generated `secret.key`), with its last four characters for display. `updated_at` tells every instance that
 * the settings changed. Environment variables (LLM_PROVIDER …), when set, win over this row.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('provider_settings')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('base_url', 'text')
    .addColumn('model', 'text')
    .addColumn('api_key_ciphertext', 'text')
    .addColumn('api_key_last4', 'text')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('updated_by', 'text')
    .execute();
}

/** Drops the settings (the environment's provider, or the built-in one, answers again). */
export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('provider_settings').execute();
}
