import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/lib/canonical-json.js';

// Audit event hashes and idempotency fingerprints are computed over canonical JSON: its text must stay
// exactly what it was when those were stored. The definition: JSON.stringify of a key-sorted copy.
function sortedCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedCopy);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortedCopy((value as Record<string, unknown>)[key])]));
  }
  return value;
}
const definition = (value: unknown) => JSON.stringify(sortedCopy(value));

/** A deterministic pseudo-random value: nested objects and arrays of every JSON-ish kind and the odd ones. */
function randomValue(next: () => number, depth: number): unknown {
  const leaves = [null, undefined, true, false, 0, -1.5, 1e21, Number.NaN, Infinity, '', 'é"\\\n\u2028', '\ud800', () => 1, Symbol('s')];
  const pick = next();
  if (depth <= 0 || pick < 0.4) return leaves[Math.floor(next() * leaves.length)];
  if (pick < 0.55) return new Date(Math.floor(next() * 1e12));
  if (pick < 0.75) return Array.from({ length: Math.floor(next() * 4) }, () => randomValue(next, depth - 1));
  const keys = ['b', 'a', '10', '2', '01', '4294967295', '4294967294', '__proto__', 'Z', 'é', ''];
  const object: Record<string, unknown> = {};
  for (let i = Math.floor(next() * 5); i > 0; i--) {
    Object.defineProperty(object, keys[Math.floor(next() * keys.length)]!, { value: randomValue(next, depth - 1), enumerable: true, configurable: true, writable: true });
  }
  return object;
}

describe('canonical JSON', () => {
  it('sorts keys at every level and is what stored hashes were computed over', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: null, y: 'x' }], c: true } })).toBe('{"a":{"c":true,"d":[3,{"y":"x","z":null}]},"b":1}');
    expect(canonicalJson({ before: null, after: undefined, at: new Date(0), list: [undefined, () => 1] })).toBe('{"at":{},"before":null,"list":[null,null]}');
    expect(canonicalJson('a"b')).toBe('"a\\"b"');
    // Array-index keys come first in numeric order, as JSON.stringify gives any object's.
    expect(canonicalJson({ b: 1, 10: 1, 2: 1, '01': 1 })).toBe('{"2":1,"10":1,"01":1,"b":1}');
  });

  it('gives exactly the text of its definition for five thousand generated values', () => {
    let seed = 42;
    const next = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (let i = 0; i < 5000; i++) {
      const value = randomValue(next, 4);
      expect(canonicalJson(value)).toBe(definition(value));
    }
  });
});

describe('canonical JSON of values already in key order', () => {
  it('gives the text of its definition for sorted objects, objects with their own toJSON, and null-prototype objects', () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1, b: [2, { c: 3 }] });
    const values: unknown[] = [
      { a: 1, b: { c: [1, { d: 2, e: undefined }], f: null } },
      { after: 'x', before: null },
      { toJSON: () => ({ z: 1, a: 2 }) },
      { a: { toJSON: () => 'x' }, b: 1 },
      { a: new Date(0), b: [new Date(1)] },
      { '10': 1, '2': 2, a: 3 },
      bare,
      [{ b: 1, a: 2 }, { a: 1, b: 2 }],
    ];
    for (const value of values) expect(canonicalJson(value)).toBe(definition(value));
  });
});
