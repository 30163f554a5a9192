import type { Db, IdempotencyRecordsTable } from '../../db/schema.js';

/** A stored idempotent result. */
export type IdempotencyRecord = IdempotencyRecordsTable;

/** SQL for stored idempotent results, keyed by (API key id, Idempotency-Key) on both databases. */
export const idempotencyRepository = {
  /** The record under a key, live or expired (the caller judges the window), or undefined. */
  async find(db: Db, apiKeyId: string, key: string): Promise<IdempotencyRecord | undefined> {
    return db
      .selectFrom('idempotency_records')
      .selectAll()
      .where('api_key_id', '=', apiKeyId)
      .where('idempotency_key', '=', key)
      .executeTakeFirst();
  },

  /** Stores a finished request's result (inside the request's write transaction). */
  async insert(db: Db, record: IdempotencyRecord): Promise<void> {
    await db.insertInto('idempotency_records').values(record).execute();
  },

  /** Deletes the record under a key (one whose window has passed, before the key is used again). */
  async remove(db: Db, apiKeyId: string, key: string): Promise<void> {
    await db.deleteFrom('idempotency_records').where('api_key_id', '=', apiKeyId).where('idempotency_key', '=', key).execute();
  },

  /** Deletes every expired record; returns how many. */
  async sweep(db: Db, now: string): Promise<number> {
    const result = await db.deleteFrom('idempotency_records').where('expires_at', '<=', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  },
};
