import { precompiled, precompiledWrite } from '../../db/precompiled.js';
import type { Db, IdempotencyKeysTable } from '../../db/schema.js';

const COLUMNS = [
  'api_key_id', 'idempotency_key', 'fingerprint', 'state', 'locked_until', 'response_status', 'response_headers', 'response_body', 'created_at', 'expires_at',
] as const satisfies readonly (keyof IdempotencyKeysTable)[];

// Every idempotent write claims and completes its key (or, on the embedded shape, stores it complete at
// once), and a retry reads it: the statements are built and compiled once. The insert writes a whole record
// under a key that is free or whose record has expired, and nothing where a live record holds it.
const insertUnlessLive = precompiledWrite((db, now: string, ...values: unknown[]) =>
  db
    .insertInto('idempotency_keys')
    .values(Object.fromEntries(COLUMNS.map((column, i) => [column, values[i]])) as unknown as IdempotencyKeysTable)
    .onConflict((oc) =>
      oc
        .columns(['api_key_id', 'idempotency_key'])
        .doUpdateSet((eb) => ({
          fingerprint: eb.ref('excluded.fingerprint'),
          state: eb.ref('excluded.state'),
          locked_until: eb.ref('excluded.locked_until'),
          response_status: eb.ref('excluded.response_status'),
          response_headers: eb.ref('excluded.response_headers'),
          response_body: eb.ref('excluded.response_body'),
          created_at: eb.ref('excluded.created_at'),
          expires_at: eb.ref('excluded.expires_at'),
        }))
        .where('idempotency_keys.expires_at', '<=', now),
    ),
);
const completeKey = precompiledWrite((db, apiKeyId: string, key: string, status: number, headers: string, body: string) =>
  db
    .updateTable('idempotency_keys')
    .set({ state: 'completed', locked_until: null, response_status: status, response_headers: headers, response_body: body })
    .where('api_key_id', '=', apiKeyId)
    .where('idempotency_key', '=', key),
);

const liveRecord = precompiled((db, apiKeyId: string, key: string, now: string) =>
  db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('api_key_id', '=', apiKeyId)
    .where('idempotency_key', '=', key)
    .where('expires_at', '>', now),
);

/** SQL for stored idempotent results, keyed by (API key id, Idempotency-Key). */
export const idempotencyRepository = {
  /** The live record of a key (expired ones are treated as absent: the window is enforced here). */
  async findLive(db: Db, apiKeyId: string, key: string, now: string): Promise<IdempotencyKeysTable | undefined> {
    return liveRecord(db, apiKeyId, key, now);
  },

  /**
   * Claims a key for a new request in one statement: inserts an in-flight marker, or replaces a record
   * whose window has passed, unless a live record exists. Returns whether this request now owns the key.
   */
  async claim(db: Db, row: IdempotencyKeysTable, now: string): Promise<boolean> {
    const result = await insertUnlessLive(db, now, ...COLUMNS.map((column) => row[column]));
    return Number(result.numAffectedRows ?? 0) > 0;
  },

  /** Takes over an in-flight marker whose lock expired (its request died). Returns whether it did. */
  async takeOver(db: Db, apiKeyId: string, key: string, now: string, lockedUntil: string): Promise<boolean> {
    const result = await db
      .updateTable('idempotency_keys')
      .set({ locked_until: lockedUntil })
      .where('api_key_id', '=', apiKeyId)
      .where('idempotency_key', '=', key)
      .where('state', '=', 'in_flight')
      .where('locked_until', '<=', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  /**
   * Stores a finished request's record in one statement, where no marker was claimed (the embedded shape,
   * whose one writer keeps every other request out until this transaction ends). False when a live record
   * holds the key, which that writer rules out.
   */
  async storeCompleted(db: Db, row: IdempotencyKeysTable, now: string): Promise<boolean> {
    const result = await insertUnlessLive(db, now, ...COLUMNS.map((column) => row[column]));
    return Number(result.numAffectedRows ?? 0) > 0;
  },

  /** Stores the response of a finished request (inside the request's write transaction). */
  async complete(db: Db, apiKeyId: string, key: string, response: { status: number; headers: string; body: string }): Promise<void> {
    await completeKey(db, apiKeyId, key, response.status, response.headers, response.body);
  },

  /** Releases a key whose request stored nothing (refused, or failed and rolled back), so a retry can run. */
  async release(db: Db, apiKeyId: string, key: string): Promise<void> {
    await db
      .deleteFrom('idempotency_keys')
      .where('api_key_id', '=', apiKeyId)
      .where('idempotency_key', '=', key)
      .where('state', '=', 'in_flight')
      .execute();
  },

  /** Deletes every expired record; returns how many. */
  async sweep(db: Db, now: string): Promise<number> {
    const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  },
};
