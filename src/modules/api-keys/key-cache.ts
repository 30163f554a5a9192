import type { Db } from '../../db/schema.js';
import { sqliteConnectionsOf } from '../../db/sqlite.js';
import { apiKeyRepository, type ApiKeyRow } from './repository.js';

type StoredKey = ApiKeyRow & { secret_hash: string };

const MAX_ENTRIES = 10_000;

/**
 * Finds keys by the hash of their secret, on every authenticated request. On SQLite the rows are kept in
 * memory while the api_keys table is unchanged (any write to it, here or by another process such as the
 * CLI, empties the cache before the next lookup), so revocation still takes effect on the next request.
 * On PostgreSQL, where other instances write too, every lookup reads the database.
 */
export function createKeyLookup(db: Db) {
  const connections = sqliteConnectionsOf(db);
  const cache = new Map<string, StoredKey>();
  let version = -1;

  return {
    async find(secretHash: string): Promise<StoredKey | undefined> {
      if (!connections) return apiKeyRepository.findBySecretHash(db, secretHash);
      const current = connections.writeVersion('api_keys');
      if (current !== version) {
        cache.clear();
        version = current;
      }
      const cached = cache.get(secretHash);
      if (cached) return cached;
      const row = await apiKeyRepository.findBySecretHash(db, secretHash);
      // Only rows read while the table stayed unchanged are kept.
      if (row && connections.writeVersion('api_keys') === version) {
        if (cache.size >= MAX_ENTRIES) cache.clear();
        cache.set(secretHash, row);
      }
      return row;
    },
  };
}
