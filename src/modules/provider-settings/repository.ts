import type { Db, ProviderSettingsTable } from '../../db/schema.js';

/** The id of the one settings row. */
export const INSTANCE_ROW = 'instance';

/** The stored settings (the key only as ciphertext). */
export type ProviderSettingsRow = Omit<ProviderSettingsTable, 'id'>;

const COLUMNS = ['provider', 'base_url', 'model', 'api_key_ciphertext', 'api_key_last4', 'updated_at', 'updated_by'] as const;

/** SQL for the instance's provider settings and its owner. Instance-wide by design: no workspace id. */
export const providerSettingsRepository = {
  /** The saved settings, if any were saved. One primary-key lookup: cheap enough to run per reply. */
  async find(db: Db): Promise<ProviderSettingsRow | undefined> {
    return db.selectFrom('provider_settings').select(COLUMNS).where('id', '=', INSTANCE_ROW).executeTakeFirst();
  },

  /** Inserts or replaces the settings row. */
  async save(db: Db, row: ProviderSettingsRow): Promise<void> {
    await db
      .insertInto('provider_settings')
      .values({ id: INSTANCE_ROW, ...row })
      .onConflict((conflict) => conflict.column('id').doUpdateSet(row))
      .execute();
  },

  /** The instance's owner: the first account ever created (the earliest user; ties broken by id). */
  async ownerId(db: Db): Promise<string | undefined> {
    const row = await db.selectFrom('users').select('id').orderBy('created_at', 'asc').orderBy('id', 'asc').limit(1).executeTakeFirst();
    return row?.id;
  },
};
