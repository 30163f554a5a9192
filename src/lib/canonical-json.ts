/**
 * JSON with object keys sorted at every level: the same value always gives the same text. Stored audit
 * hashes and idempotency fingerprints were computed over this text, so it must never change.
 *
 * It is `JSON.stringify` of a copy whose keys were inserted in sorted order. What follows from that, and
 * is pinned by test/guarantees/canonical-json.test.ts: the copy keeps only own enumerable string keys, so
 * a Date, a Map or a class instance with a `toJSON` method on its prototype gives its own fields (`{}` for
 * a Date); an own `toJSON` is copied and still called; array-index keys ("2", "10") come first in numeric
 * order, as `JSON.stringify` lists any object's; `undefined`, functions and symbols are dropped from
 * objects and become `null` in arrays.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortedCopy(value));
}

function sortedCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedCopy);
  if (value !== null && typeof value === 'object') {
    // fromEntries defines the keys (a "__proto__" key stays a key); assignment would set the prototype.
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortedCopy((value as Record<string, unknown>)[key])]));
  }
  return value;
}
