import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../http/errors.js';
import { isScope, SCOPES, type Scope } from '../../http/scopes.js';
import type { OperationContext } from '../../lib/actor.js';
import {
  digestsEqual,
  displayPrefix,
  generateApiKeySecret,
  hashApiKeySecret,
  isWellFormedApiKey,
} from '../../lib/api-key-format.js';
import type { Clock } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import { parseJson } from '../../lib/json.js';
import type { ReadCache } from '../../db/read-cache.js';
import { createKeyLookup, type KnownKey } from './key-cache.js';
import { apiKeyRepository, type ApiKeyRow } from './repository.js';
import { diffChanges, type AuditWriter } from '../audit/writer.js';

/** An API key as shown to its owners (never the secret). */
export interface ApiKeyView {
  id: string;
  object: 'api_key';
  name: string;
  prefix: string;
  scopes: Scope[];
  created_by: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

/** The authenticated caller behind a valid key. */
export interface ApiKeyPrincipal {
  keyId: string;
  keyName: string;
  workspaceId: string;
  scopes: ReadonlySet<string>;
}

/** Why a presented key was refused. */
export type AuthFailure = 'malformed' | 'unknown' | 'revoked' | 'expired';

/** Input for a new key. */
export interface CreateApiKeyInput {
  name: string;
  scopes: string[];
  expiresInDays?: number | null;
}

function present(row: ApiKeyRow): ApiKeyView {
  return {
    id: row.id,
    object: 'api_key',
    name: row.name,
    prefix: row.display_prefix,
    scopes: parseJson<Scope[]>(row.scopes, []),
    created_by: row.created_by,
    created_at: row.created_at,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
    last_used_at: row.last_used_at,
  };
}

const TOUCH_INTERVAL_MS = 60_000;

/** What authentication answers: the caller, or why the key was refused. */
export type AuthResult = { ok: true; principal: ApiKeyPrincipal } | { ok: false; reason: AuthFailure };

const REFUSED = {
  malformed: { ok: false, reason: 'malformed' },
  unknown: { ok: false, reason: 'unknown' },
  revoked: { ok: false, reason: 'revoked' },
  expired: { ok: false, reason: 'expired' },
} as const satisfies Record<AuthFailure, AuthResult>;

/** Use is recorded at most about once a minute per key, so reads do not turn into writes. */
function touchDue(key: KnownKey, nowMs: number): boolean {
  return key.lastUsedAtMs < nowMs - TOUCH_INTERVAL_MS;
}

/** The answer for a presented secret's hash and the key stored under it (the hashes compared in constant time). */
function verdict(key: KnownKey | undefined, hash: string, nowMs: number): AuthResult {
  if (!key || !digestsEqual(key.digest, hash)) return REFUSED.unknown;
  if (key.row.revoked_at !== null) return REFUSED.revoked;
  if (key.expiresAtMs <= nowMs) return REFUSED.expired;
  return { ok: true, principal: key.principal };
}

/** API keys: issue, list, revoke, and authenticate presented secrets. */
export function createApiKeyService(db: Kysely<Database>, clock: Clock, audit: AuditWriter, cache: ReadCache) {
  const keys = createKeyLookup(db, cache);
  return {
    /** Issues a key; the returned secret is shown this once and never stored. */
    async create(ctx: OperationContext, input: CreateApiKeyInput): Promise<{ key: ApiKeyView; secret: string }> {
      const name = input.name.trim();
      if (name.length === 0 || name.length > 100) {
        throw AppError.validation('The key name must be 1 to 100 characters.', [{ pointer: '/name', message: 'must be 1 to 100 characters' }]);
      }
      const unknown = input.scopes.filter((scope) => !isScope(scope));
      if (input.scopes.length === 0 || unknown.length > 0) {
        throw AppError.validation(`Scopes must be chosen from: ${SCOPES.join(', ')}.`, [
          { pointer: '/scopes', message: unknown.length ? `unknown scope(s): ${unknown.join(', ')}` : 'at least one scope is required' },
        ]);
      }
      const days = input.expiresInDays;
      if (days !== undefined && days !== null && (!Number.isInteger(days) || days < 1 || days > 3650)) {
        throw AppError.validation('Expiry must be a whole number of days between 1 and 3650.', [
          { pointer: '/expires_in_days', message: 'must be an integer from 1 to 3650' },
        ]);
      }
      const now = clock.now();
      const secret = generateApiKeySecret();
      const scopes = SCOPES.filter((scope) => input.scopes.includes(scope));
      const row: ApiKeyRow = {
        id: newId('apiKey', now.getTime()),
        workspace_id: ctx.actor.workspaceId,
        name,
        display_prefix: displayPrefix(secret),
        scopes: JSON.stringify(scopes),
        created_by: `${ctx.actor.type}:${ctx.actor.id}`,
        created_at: now.toISOString(),
        expires_at: days ? new Date(now.getTime() + days * 86_400_000).toISOString() : null,
        revoked_at: null,
        last_used_at: null,
      };
      const key = present(row);
      await db.transaction().execute(async (trx) => {
        await apiKeyRepository.insert(trx, { ...row, secret_hash: hashApiKeySecret(secret) });
        await audit.record(trx, ctx, {
          action: 'api_key.created',
          target: { type: 'api_key', id: row.id },
          changes: diffChanges(null, key, ['name', 'prefix', 'scopes', 'expires_at']),
        });
      });
      return { key, secret };
    },

    /** Whether any key exists at all (a first run has none). */
    async anyExist(): Promise<boolean> {
      return apiKeyRepository.anyExist(db);
    },

    /** Every key of the actor's workspace, newest first. */
    async list(ctx: OperationContext): Promise<ApiKeyView[]> {
      return (await apiKeyRepository.list(db, ctx.actor.workspaceId)).map(present);
    },

    /** Revokes a key of the actor's workspace; revoking twice is harmless. */
    async revoke(ctx: OperationContext, id: string): Promise<ApiKeyView> {
      const row = isId('apiKey', id) ? await apiKeyRepository.find(db, ctx.actor.workspaceId, id) : undefined;
      if (!row) throw AppError.notFound('API key', id);
      const at = clock.now().toISOString();
      await db.transaction().execute(async (trx) => {
        if (!(await apiKeyRepository.revoke(trx, ctx.actor.workspaceId, id, at))) return;
        await audit.record(trx, ctx, { action: 'api_key.revoked', target: { type: 'api_key', id }, changes: { revoked_at: { before: null, after: at } } });
      });
      keys.forget(); // committed: the next request with the key is refused
      return present((await apiKeyRepository.find(db, ctx.actor.workspaceId, id))!);
    },

    /** Finds a key by id in any workspace (operators' CLI). */
    async findAnywhere(id: string): Promise<ApiKeyView & { workspace_id: string } | undefined> {
      const row = isId('apiKey', id) ? await apiKeyRepository.findAnywhere(db, id) : undefined;
      return row ? { ...present(row), workspace_id: row.workspace_id } : undefined;
    },

    /**
     * Checks a presented secret. Well-formedness (shape and checksum) is checked first, without touching
     * the database; then the key is found by the hash of the secret and the hashes compared in constant time.
     */
    async authenticate(secret: string): Promise<AuthResult> {
      if (!isWellFormedApiKey(secret)) return REFUSED.malformed;
      const hash = hashApiKeySecret(secret);
      const key = await keys.find(hash);
      const now = clock.now().getTime();
      const result = verdict(key, hash, now);
      if (result.ok && touchDue(key!, now)) {
        await apiKeyRepository.touch(db, key!.row.id, new Date(now).toISOString(), new Date(now - TOUCH_INTERVAL_MS).toISOString());
        keys.forget(hash);
      }
      return result;
    },
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
