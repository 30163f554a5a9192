import type { Db } from '../../db/schema.js';
import { tableCache } from '../../db/table-cache.js';
import { parseJson } from '../../lib/json.js';
import { apiKeyRepository, type ApiKeyRow } from './repository.js';
import type { ApiKeyPrincipal } from './service.js';

/** A stored key with what authentication derives from it, derived once per read of the row. */
export interface KnownKey {
  row: ApiKeyRow & { secret_hash: string };
  /** `secret_hash` as bytes, for the constant-time comparison. */
  digest: Buffer;
  /** The caller this key authenticates. */
  principal: ApiKeyPrincipal;
  /** `expires_at` in epoch milliseconds; Infinity for a key that does not expire. */
  expiresAtMs: number;
  /** `last_used_at` in epoch milliseconds; -Infinity for a key never used. */
  lastUsedAtMs: number;
}

const MAX_ENTRIES = 10_000;

/**
 * Finds keys by the hash of their secret, on every authenticated request. On SQLite the keys are kept in
 * memory while the api_keys table is unchanged (`tableCache`: any write to it, here or by another process
 * such as the CLI, empties the cache before the next lookup), so revocation still takes effect on the
 * next request. On PostgreSQL, where other instances write too, every lookup reads the database.
 */
export function createKeyLookup(db: Db) {
  const cache = tableCache<KnownKey>(db, 'api_keys', MAX_ENTRIES);
  return {
    find(secretHash: string): Promise<KnownKey | undefined> {
      return cache.get(secretHash, async () => {
        const row = await apiKeyRepository.findBySecretHash(db, secretHash);
        return row && known(row);
      });
    },
    /** The key when it is cached (embedded shape, table unchanged), synchronously. */
    peek(secretHash: string): KnownKey | undefined {
      return cache.peek(secretHash);
    },
  };
}

function known(row: ApiKeyRow & { secret_hash: string }): KnownKey {
  return {
    row,
    digest: Buffer.from(row.secret_hash, 'hex'),
    principal: { keyId: row.id, keyName: row.name, workspaceId: row.workspace_id, scopes: new Set(parseJson<string[]>(row.scopes, [])) },
    expiresAtMs: row.expires_at === null ? Infinity : Date.parse(row.expires_at),
    lastUsedAtMs: row.last_used_at === null ? -Infinity : Date.parse(row.last_used_at),
  };
}
