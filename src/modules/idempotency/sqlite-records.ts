import type { Kysely } from 'kysely';
import type { Database, Db, IdempotencyKeysTable } from '../../db/schema.js';
import type { SqliteConnections } from '../../db/sqlite.js';
import { sqliteRecordRepository as records, type RecordKey } from './repository.js';

/** A stored record with the rowid it was appended under. */
export type StoredRecord = IdempotencyKeysTable & { id: number };

/** FNV-1a over the UTF-16 code units of the record's API key id and key: 32 bits, kept as a small integer. */
export function keyHash(apiKeyId: string, key: string): number {
  let hash = 0x811c9dc5;
  const text = `${apiKeyId}\n${key}`;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash | 0;
}

/**
 * Which rowids may hold the record of a key: a 32-bit hash of (API key id, key) → rowid (or, where hashes
 * collide, rowids). Every candidate is read and compared before it is believed, so an entry left behind
 * (a rolled-back append whose rowid was reused, a swept record) costs a read, never a wrong answer. About
 * 36 bytes per live record, where the keys themselves would take over 100.
 */
class RecordIndex {
  private readonly ids = new Map<number, number | number[]>();

  candidates(apiKeyId: string, key: string): readonly number[] {
    const found = this.ids.get(keyHash(apiKeyId, key));
    return found === undefined ? [] : typeof found === 'number' ? [found] : found;
  }

  add(apiKeyId: string, key: string, id: number): void {
    const hash = keyHash(apiKeyId, key);
    const found = this.ids.get(hash);
    if (found === undefined) this.ids.set(hash, id);
    else if (typeof found === 'number') {
      if (found !== id) this.ids.set(hash, [found, id]);
    } else if (!found.includes(id)) found.push(id);
  }

  remove(apiKeyId: string, key: string, id: number): void {
    const hash = keyHash(apiKeyId, key);
    const found = this.ids.get(hash);
    if (found === id) this.ids.delete(hash);
    else if (Array.isArray(found)) {
      const rest = found.filter((other) => other !== id);
      if (rest.length === 0) this.ids.delete(hash);
      else this.ids.set(hash, rest.length === 1 ? rest[0]! : rest);
    }
  }

  /** Forgets every rowid below `id` (swept), or every rowid when `id` is null. */
  pruneBelow(id: number | null): void {
    if (id === null) return this.ids.clear();
    for (const [hash, found] of this.ids) {
      if (typeof found === 'number') {
        if (found < id) this.ids.delete(hash);
      } else {
        const rest = found.filter((other) => other >= id);
        if (rest.length === 0) this.ids.delete(hash);
        else if (rest.length !== found.length) this.ids.set(hash, rest.length === 1 ? rest[0]! : rest);
      }
    }
  }

  get size(): number {
    return this.ids.size;
  }
}

/**
 * The embedded shape's idempotency records (decision 0017): appended to a rowid table without indexes and
 * found through an index of their keys in this process's memory, built from the table on first use and
 * kept in step with every append. Records appended by another process on the same file (the one-process
 * shape has none, but nothing forbids one) are read into the index when SQLite's data_version shows a
 * commit from elsewhere. Every read and write runs in the caller's transaction, which holds the one
 * writer, so no other request of this process appends between a lookup and the append that follows it.
 */
export function sqliteRecordStore(db: Kysely<Database>, connections: SqliteConnections) {
  const index = new RecordIndex();
  /** Every record up to this rowid is in the index (read from the table, or appended by this process). */
  let readThrough = 0;
  let loaded = false;
  let elsewhere = -1;

  function note(rows: RecordKey[]): void {
    for (const row of rows) {
      index.add(row.api_key_id, row.idempotency_key, row.id);
      if (row.id > readThrough) readThrough = row.id;
    }
  }

  async function catchUp(trx: Db): Promise<void> {
    const commits = connections.commitsElsewhere();
    if (loaded && commits === elsewhere) return;
    note(await records.keysAfter(trx, readThrough));
    loaded = true;
    elsewhere = commits;
  }

  return {
    /**
     * The record under the key, live or expired (the caller judges expiry; an expired one is replaced), or
     * undefined. The newest row wins: an expired record whose deletion was rolled back can still sit below
     * the one that replaced it.
     */
    async find(trx: Db, apiKeyId: string, key: string): Promise<StoredRecord | undefined> {
      await catchUp(trx);
      const ids = index.candidates(apiKeyId, key);
      for (const id of ids.length > 1 ? [...ids].sort((x, y) => y - x) : ids) {
        const row = await records.byId(trx, id);
        if (row && row.api_key_id === apiKeyId && row.idempotency_key === key) return row;
      }
      return undefined;
    },

    /** Appends a record (after `find`, in the same transaction) and indexes it. Returns its rowid. */
    async append(trx: Db, row: IdempotencyKeysTable): Promise<number> {
      const id = await records.append(trx, row);
      index.add(row.api_key_id, row.idempotency_key, id);
      // Rowids are handed out in order: the next one means no other process's record lies between.
      if (id === readThrough + 1) readThrough = id;
      return id;
    },

    /** Deletes a record (an expired one being replaced, in the caller's transaction). */
    async remove(trx: Db, record: StoredRecord): Promise<void> {
      await records.deleteById(trx, record.id);
      index.remove(record.api_key_id, record.idempotency_key, record.id);
    },

    /** Forgets an append that was rolled back (its rowid may be handed out again). */
    forget(apiKeyId: string, key: string, id: number): void {
      index.remove(apiKeyId, key, id);
      if (readThrough >= id) readThrough = id - 1;
    },

    /** Deletes expired records and forgets them; returns how many. */
    async sweep(now: string): Promise<number> {
      try {
        return await db.transaction().execute(async (trx) => {
          const { deleted, firstLive } = await records.sweep(trx, now);
          // Pruned while the transaction holds the writer, before any append can reuse a freed rowid.
          index.pruneBelow(firstLive);
          if (firstLive === null) readThrough = 0;
          return deleted;
        });
      } catch (error) {
        // The deletion did not commit: read the whole table into the index again on next use.
        loaded = false;
        readThrough = 0;
        throw error;
      }
    },

    /** How many keys the index holds (for tests and diagnostics). */
    get indexed(): number {
      return index.size;
    },
  };
}

export type SqliteRecordStore = ReturnType<typeof sqliteRecordStore>;
