import type { ReadCache } from '../../db/read-cache.js';
import type { Db } from '../../db/schema.js';
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

const PREFIX = 'api-key:';

/** Finds keys by the hash of their secret, on every authenticated request, through the read cache. */
export function createKeyLookup(db: Db, cache: ReadCache) {
  return {
    find(secretHash: string): Promise<KnownKey | undefined> {
      return cache.get(`${PREFIX}${secretHash}`, async () => {
        const row = await apiKeyRepository.findBySecretHash(db, secretHash);
        return row && known(row);
      });
    },
    /** Forgets one key (its row changed: use recorded) or, without a hash, every key (one was revoked). */
    forget(secretHash?: string): void {
      cache.invalidate(`${PREFIX}${secretHash ?? ''}`);
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
