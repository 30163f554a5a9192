import { precompiled, precompiledRows, precompiledWrite } from '../../db/precompiled.js';
import type { Db, IdempotencyKeysTable } from '../../db/schema.js';

const COLUMNS = [
  'api_key_id', 'idempotency_key', 'fingerprint', 'state', 'locked_until', 'response_status', 'response_headers', 'response_body', 'created_at', 'expires_at',
] as const satisfies readonly (keyof IdempotencyKeysTable)[];

// PostgreSQL: every idempotent write claims and completes its key, and a retry reads it: the statements are
// built and compiled once. The claim inserts a marker under a key that is free or whose record has expired,
// and nothing where a live record holds it.
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

// SQLite (migration 0008): records are rows of a rowid table without indexes, found by id through the
// process's index of keys (sqlite-records.ts).
const recordById = precompiledRows((db, id: number) => db.selectFrom('idempotency_keys').selectAll().where('id', '=', id));
const appendRecord = precompiledWrite((db, ...values: unknown[]) =>
  db.insertInto('idempotency_keys').values(Object.fromEntries(COLUMNS.map((column, i) => [column, values[i]])) as unknown as IdempotencyKeysTable),
);
const recordKeysAfter = precompiledRows((db, id: number) =>
  db.selectFrom('idempotency_keys').select(['id', 'api_key_id', 'idempotency_key']).where('id', '>', id).orderBy('id'),
);
const firstLiveRecord = precompiledRows((db, now: string) =>
  db.selectFrom('idempotency_keys').select('id').where('expires_at', '>', now).orderBy('id').limit(1),
);

/** A record's key and the rowid it was appended under (SQLite). */
export interface RecordKey {
  id: number;
  api_key_id: string;
  idempotency_key: string;
}

/** SQLite: the records of a rowid table without indexes, found by id (see sqlite-records.ts). */
export const sqliteRecordRepository = {
  /** The record appended under `id`, if it is still there. */
  async byId(db: Db, id: number): Promise<(IdempotencyKeysTable & { id: number }) | undefined> {
    return (await recordById(db, id))[0] as (IdempotencyKeysTable & { id: number }) | undefined;
  },

  /** Appends a record; returns the rowid it got. */
  async append(db: Db, row: IdempotencyKeysTable): Promise<number> {
    const result = await appendRecord(db, ...COLUMNS.map((column) => row[column]));
    return Number(result.insertId);
  },

  /** The keys of the records appended after `id`, in order (what an index of them has not seen yet). */
  async keysAfter(db: Db, id: number): Promise<RecordKey[]> {
    return (await recordKeysAfter(db, id)) as RecordKey[];
  },

  async deleteById(db: Db, id: number): Promise<void> {
    await db.deleteFrom('idempotency_keys').where('id', '=', id).execute();
  },

  /** Takes over an in-flight marker whose lock expired (see `idempotencyRepository.takeOver`), by id. */
  async takeOver(db: Db, id: number, now: string, lockedUntil: string): Promise<boolean> {
    const result = await db
      .updateTable('idempotency_keys')
      .set({ locked_until: lockedUntil })
      .where('id', '=', id)
      .where('state', '=', 'in_flight')
      .where('locked_until', '<=', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  /** Completes a taken-over marker with the response, by id. */
  async complete(db: Db, id: number, response: { status: number; headers: string; body: string }): Promise<void> {
    await db
      .updateTable('idempotency_keys')
      .set({ state: 'completed', locked_until: null, response_status: response.status, response_headers: response.headers, response_body: response.body })
      .where('id', '=', id)
      .execute();
  },

  /** Deletes a taken-over marker whose request stored nothing, by id. */
  async release(db: Db, id: number): Promise<void> {
    await db.deleteFrom('idempotency_keys').where('id', '=', id).where('state', '=', 'in_flight').execute();
  },

  /**
   * Deletes the expired records that precede the oldest live one (records are appended in time order, so
   * that is nearly all of them; one appended after a backward clock step waits for later sweeps). Run it in
   * a transaction. Returns how many it deleted, and the id below which no record remains (null: none left).
   */
  async sweep(db: Db, now: string): Promise<{ deleted: number; firstLive: number | null }> {
    const first = (await firstLiveRecord(db, now))[0] as { id: number } | undefined;
    const query = db.deleteFrom('idempotency_keys').where('expires_at', '<=', now);
    const result = await (first ? query.where('id', '<', first.id) : query).executeTakeFirst();
    return { deleted: Number(result.numDeletedRows), firstLive: first?.id ?? null };
  },
};

/** SQL for stored idempotent results, keyed by (API key id, Idempotency-Key): PostgreSQL's table. */
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
