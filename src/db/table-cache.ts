import { sqliteConnectionsOf } from './sqlite.js';

/**
 * Values derived from one table's rows, kept in memory while that table is unchanged, on the embedded
 * shape only. Any write to the table (through this process, at once; by another process such as the
 * CLI, on the next event-loop turn: `SqliteConnections.writeVersion`) empties the cache before the next
 * lookup. A value is kept only when the table did not change while it was loaded, so a racing write
 * can drop an entry too early but never keep a stale one. On PostgreSQL, where other instances write,
 * every lookup loads.
 *
 * Cached values are shared by every caller: they are frozen when stored.
 */
export interface TableCache<V> {
  /** The cached value for `key`, or what `load` returns (kept unless it is undefined). */
  get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined>;
  /** The cached value for `key` when there is one, synchronously. */
  peek(key: string): V | undefined;
}

export function tableCache<V extends object>(db: object, table: string, maxEntries: number): TableCache<V> {
  const connections = sqliteConnectionsOf(db);
  const entries = new Map<string, V>();
  let version = -1;

  function current(): boolean {
    if (!connections) return false;
    const now = connections.writeVersion(table);
    if (now !== version) {
      entries.clear();
      version = now;
    }
    return true;
  }

  return {
    peek(key) {
      return current() ? entries.get(key) : undefined;
    },
    async get(key, load) {
      if (!current()) return load();
      const cached = entries.get(key);
      if (cached !== undefined) return cached;
      const loadedAt = version;
      const value = await load();
      if (value !== undefined && connections!.writeVersion(table) === loadedAt) {
        // Past the bound the cache starts over: cheaper than tracking use, and rare (keys and agents).
        if (entries.size >= maxEntries) entries.clear();
        entries.set(key, deepFreeze(value));
      }
      return value;
    },
  };
}

function deepFreeze<V>(value: V): V {
  // Byte arrays (a key's digest) cannot be frozen: they are left as they are, and nobody writes to them.
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value) && !ArrayBuffer.isView(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
