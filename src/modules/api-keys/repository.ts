import { precompiled } from '../../db/precompiled.js';
import type { Db } from '../../db/schema.js';

const COLUMNS = [
  'id',
  'workspace_id',
  'name',
  'display_prefix',
  'scopes',
  'created_by',
  'created_at',
  'expires_at',
  'revoked_at',
  'last_used_at',
] as const;

/** An API key row without its secret hash. */
export interface ApiKeyRow {
  id: string;
  workspace_id: string;
  name: string;
  display_prefix: string;
  scopes: string;
  created_by: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

// On every authenticated request: built and compiled once.
const findBySecretHash = precompiled((db, secretHash: string) =>
  db.selectFrom('api_keys').select([...COLUMNS, 'secret_hash']).where('secret_hash', '=', secretHash),
);

/** SQL for API keys. The secret hash is written here and read only by `findBySecretHash`. */
export const apiKeyRepository = {
  /** Stores a new key (the hash only). */
  async insert(db: Db, row: ApiKeyRow & { secret_hash: string }): Promise<void> {
    await db.insertInto('api_keys').values(row).execute();
  },

  /** Looks a presented key up by the hash of its secret; returns the hash too, for a constant-time check. */
  async findBySecretHash(db: Db, secretHash: string): Promise<(ApiKeyRow & { secret_hash: string }) | undefined> {
    return findBySecretHash(db, secretHash);
  },

  /** One key of a workspace. */
  async find(db: Db, workspaceId: string, id: string): Promise<ApiKeyRow | undefined> {
    return db.selectFrom('api_keys').select(COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  },

  /** A key by id alone (the CLI revokes by id). */
  async findAnywhere(db: Db, id: string): Promise<ApiKeyRow | undefined> {
    return db.selectFrom('api_keys').select(COLUMNS).where('id', '=', id).executeTakeFirst();
  },

  /** Whether the service has any key at all. */
  async anyExist(db: Db): Promise<boolean> {
    return (await db.selectFrom('api_keys').select('id').limit(1).executeTakeFirst()) !== undefined;
  },

  /** Every key of a workspace, newest first. */
  async list(db: Db, workspaceId: string): Promise<ApiKeyRow[]> {
    return db
      .selectFrom('api_keys')
      .select(COLUMNS)
      .where('workspace_id', '=', workspaceId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute();
  },

  /** Marks a key revoked, once. Returns whether it changed. */
  async revoke(db: Db, workspaceId: string, id: string, at: string): Promise<boolean> {
    const result = await db
      .updateTable('api_keys')
      .set({ revoked_at: at })
      .where('workspace_id', '=', workspaceId)
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  /** Records use, at most about once a minute per key, so reads do not turn into writes. */
  async touch(db: Db, id: string, at: string, notSince: string): Promise<void> {
    await db
      .updateTable('api_keys')
      .set({ last_used_at: at })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', notSince)]))
      .execute();
  },
};
