import { sqliteConnectionsOf } from './sqlite.js';

/** What a cached value's JSON weighs in memory beyond its text (the value's objects, the entry, the key). */
const ENTRY_OVERHEAD_BYTES = 512;

interface Entry {
  value: object;
  /** `JSON.stringify(value)`: what a response sends for the value, and what the entry is weighed by. */
  json: string;
  bytes: number;
}

/** The JSON text of every value a cache holds, for the response serializer (src/http/serializer.ts). */
const jsonOfCached = new WeakMap<object, string>();

/**
 * The serialized JSON of a value held by the read cache, or undefined for any other value. The response
 * serializer sends it as it is, so a cached value is serialized once, and handlers need not know it was cached.
 */
export function cachedJson(value: unknown): string | undefined {
  return typeof value === 'object' && value !== null ? jsonOfCached.get(value) : undefined;
}

/** The one read cache of the service: values read far more often than they change (API keys, agents). */
export interface ReadCache {
  /** The cached value under `key`, or what `load` returns (kept, frozen, unless undefined). */
  get<V extends object>(key: string, load: () => Promise<V | undefined>): Promise<V | undefined>;
  /** Forgets every entry whose key starts with `prefix`: call it once the write that changed them has committed. */
  invalidate(prefix: string): void;
}

/**
 * The read cache, bounded in bytes (least recently used entries go first), on the embedded SQLite shape
 * only: there every write goes through this process, whose services invalidate what they change, or comes
 * from another process on the same file (the CLI), which SQLite's data_version reveals and which empties
 * the cache. On PostgreSQL other instances write too and nothing would tell this one: every `get` loads.
 *
 * A load that raced an invalidation is not kept (the generation moved while it ran), so an entry is never
 * older than the last invalidation of its key.
 */
export function createReadCache(db: object, maxBytes: number): ReadCache {
  const connections = sqliteConnectionsOf(db);
  if (!connections || maxBytes <= 0) {
    return { get: (_key, load) => load(), invalidate: () => undefined };
  }
  const entries = new Map<string, Entry>();
  let bytes = 0;
  let generation = 0;
  let dataVersion = connections.dataVersion();

  function remove(key: string, entry: Entry): void {
    entries.delete(key);
    bytes -= entry.bytes;
  }

  function clear(): void {
    entries.clear();
    bytes = 0;
    generation++;
  }

  function store(key: string, value: object): void {
    const json = JSON.stringify(value);
    const entry: Entry = { value: deepFreeze(value), json, bytes: json.length * 2 + key.length * 2 + ENTRY_OVERHEAD_BYTES };
    if (entry.bytes > maxBytes) return;
    const previous = entries.get(key);
    if (previous) remove(key, previous);
    entries.set(key, entry);
    bytes += entry.bytes;
    jsonOfCached.set(entry.value, json);
    for (const [oldest, old] of entries) {
      if (bytes <= maxBytes) break;
      remove(oldest, old);
    }
  }

  return {
    async get<V extends object>(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
      const version = connections.dataVersion();
      if (version !== dataVersion) {
        dataVersion = version; // another process committed to the file: anything may have changed
        clear();
      }
      const entry = entries.get(key);
      if (entry) {
        // Most recently used last: a Map iterates in insertion order, so eviction takes the front.
        entries.delete(key);
        entries.set(key, entry);
        return entry.value as V;
      }
      const loadedIn = generation;
      const value = await load();
      if (value !== undefined && generation === loadedIn && connections.dataVersion() === dataVersion) store(key, value);
      return value;
    },
    invalidate(prefix: string): void {
      for (const [key, entry] of entries) if (key.startsWith(prefix)) remove(key, entry);
      generation++;
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
