import { jsonString } from './json.js';

/**
 * JSON with object keys sorted at every level: the same value always gives the same text.
 *
 * The definition is `JSON.stringify` of a copy whose keys were inserted in sorted order, and stored audit
 * hashes and idempotency fingerprints were computed over that text. This writes the same text directly,
 * without building the copy (on an audited write the copy cost more than the rest of the audit event):
 * objects without `toJSON` (a Date gives `{}`, as its copy has no keys), array-index keys first in numeric
 * order as `JSON.stringify` lists any object's, then the other keys sorted; `undefined`, functions and
 * symbols dropped from objects and `null` in arrays. test/guarantees/canonical-json.test.ts holds it to the
 * definition.
 */
export function canonicalJson(value: unknown): string {
  return write(value) as string;
}

/** The definition itself: a copy with keys inserted in sorted order (kept for an object's own `toJSON`). */
function sortedCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedCopy);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortedCopy((value as Record<string, unknown>)[key])]));
  }
  return value;
}

/**
 * Whether `JSON.stringify(value)` already is its canonical text: arrays of such values, and plain objects
 * whose keys are in sorted order (none an array index, none `toJSON`) with such values. Objects built in
 * sorted key order (the audit writer's) are then written by one `JSON.stringify` call.
 */
function alreadyCanonical(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== 'object') return true;
  if (depth > 32) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!alreadyCanonical(value[i], depth + 1)) return false;
    return true;
  }
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return false;
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if ((i > 0 && keys[i - 1]! >= key) || key === 'toJSON' || isArrayIndex(key)) return false;
    if (!alreadyCanonical(object[key], depth + 1)) return false;
  }
  return true;
}

// An array index: a canonical decimal integer below 2^32 - 1.
const INDEX_LIKE = /^(?:0|[1-9][0-9]{0,9})$/;
const MAX_ARRAY_INDEX = 4294967294;

function isArrayIndex(key: string): boolean {
  return INDEX_LIKE.test(key) && Number(key) <= MAX_ARRAY_INDEX;
}

/** The canonical text of a value; undefined where JSON.stringify gives none (undefined, a function, a symbol). */
function write(value: unknown): string | undefined {
  if (typeof value === 'string') return jsonString(value);
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  // Finite numbers print as String() prints them (-0 as "0"); NaN and the infinities as null.
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (alreadyCanonical(value, 0)) return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += `${i === 0 ? '' : ','}${write(value[i]) ?? 'null'}`;
    return `${out}]`;
  }
  const object = value as Record<string, unknown>;
  if (Object.hasOwn(object, 'toJSON') && typeof object.toJSON === 'function') return JSON.stringify(sortedCopy(object));
  const keys = Object.keys(object).sort();
  let out = '{';
  let first = true;
  const add = (key: string) => {
    const text = write(object[key]);
    if (text === undefined) return;
    out += `${first ? '' : ','}${jsonString(key)}:${text}`;
    first = false;
  };
  // Sorted as strings, index keys ("10" before "2") are put back in numeric order, ahead of the rest.
  const indexes = keys.filter(isArrayIndex);
  if (indexes.length > 0) {
    for (const key of indexes.sort((a, b) => Number(a) - Number(b))) add(key);
    for (const key of keys) if (!isArrayIndex(key)) add(key);
  } else {
    for (const key of keys) add(key);
  }
  return `${out}}`;
}
