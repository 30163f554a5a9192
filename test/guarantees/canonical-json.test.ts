import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/lib/canonical-json.js';

// Audit event hashes and idempotency fingerprints were computed over canonical JSON: its text must stay
// exactly what it was when they were stored. The expected texts below were captured from the implementation
// those hashes were computed with; change one only together with a migration of every stored hash.

class Point {
  constructor(
    public y = 2,
    public x = 1,
  ) {}
  toJSON() {
    return 'point';
  }
}

const pinned: [string, unknown, string | undefined][] = [
  ['nested objects and arrays', { b: 1, a: { d: [3, { z: null, y: 'x' }], c: true } }, '{"a":{"c":true,"d":[3,{"y":"x","z":null}]},"b":1}'],
  ['an object already in key order', { a: 1, b: { c: [1, { d: 2, e: undefined }], f: null } }, '{"a":1,"b":{"c":[1,{"d":2}],"f":null}}'],
  // A Date (and anything else whose toJSON is inherited) is copied as its own keys: none.
  ['a Date', new Date(0), '{}'],
  ['Dates inside', { at: new Date(0), list: [new Date(1)] }, '{"at":{},"list":[{}]}'],
  ['a class instance with toJSON on its prototype', { p: new Point() }, '{"p":{"x":1,"y":2}}'],
  ['Map, Set, RegExp, Error', { m: new Map([[1, 2]]), s: new Set([1]), r: /x/g, e: new Error('boom') }, '{"e":{},"m":{},"r":{},"s":{}}'],
  ['boxed primitives', [new String('ab'), new Number(3), new Boolean(false)], '[{"0":"a","1":"b"},{},{}]'],
  // An own toJSON is copied with the keys and called on the sorted copy.
  ['an own toJSON', { toJSON(this: object) { return Object.keys(this); }, b: 1, a: 2 }, '["a","b","toJSON"]'],
  ['an own toJSON returning an object', { x: { toJSON: () => ({ z: 1, a: 2 }) } }, '{"x":{"z":1,"a":2}}'],
  ['undefined, functions and symbols in an object', { u: undefined, f: () => 1, s: Symbol('s'), n: null, k: 1 }, '{"k":1,"n":null}'],
  ['undefined, functions and symbols in an array', [undefined, () => 1, Symbol('s'), null], '[null,null,null,null]'],
  ['a sparse array', [1, , 3], '[1,null,3]'], // eslint-disable-line no-sparse-arrays
  ['an array with extra properties', Object.assign([2, 1], { extra: 'x' }), '[2,1]'],
  // Array-index keys (below 2^32 - 1) first in numeric order, then the others in code-unit order.
  [
    'array-index-like keys',
    { b: 1, 10: 1, 2: 1, '01': 1, '-1': 1, '1.5': 1, '4294967294': 1, '4294967295': 1, a: 1 },
    '{"2":1,"10":1,"4294967294":1,"-1":1,"01":1,"1.5":1,"4294967295":1,"a":1,"b":1}',
  ],
  ['keys in UTF-16 code-unit order, not locale order', { é: 1, Z: 2, a: 3, '': 4, ä: 5, '\ud83d\ude00': 6, B: 7 }, '{"":4,"B":7,"Z":2,"a":3,"ä":5,"é":1,"😀":6}'],
  ['a "__proto__" key from a parsed body stays a key', JSON.parse('{"b":1,"__proto__":{"x":1},"a":2}'), '{"__proto__":{"x":1},"a":2,"b":1}'],
  ['a null-prototype object', Object.assign(Object.create(null) as object, { b: 1, a: 2 }), '{"a":2,"b":1}'],
  ['getters are read, non-enumerable and symbol keys skipped', Object.defineProperties({ b: 1, [Symbol('k')]: 1 }, { a: { get: () => 'got', enumerable: true }, h: { value: 'hidden' } }), '{"a":"got","b":1}'],
  ['numbers', [0, -0, 1e21, 1e-7, 0.1, -1.5, NaN, Infinity, -Infinity, 2 ** 53], '[0,0,1e+21,1e-7,0.1,-1.5,null,null,null,9007199254740992]'],
  ['strings with escapes and a lone surrogate', ['é"\\\n\u2028\u0000', '\ud800', '\u007f'], '["é\\"\\\\\\n\u2028\\u0000","\\ud800","\u007f"]'],
  ['null', null, 'null'],
  ['empties', [{}, []], '[{},[]]'],
  ['undefined: no text, as JSON.stringify', undefined, undefined],
  ['a function: no text, as JSON.stringify', () => 1, undefined],
];

describe('canonical JSON', () => {
  it.each(pinned)('keeps its text for %s', (_name, value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });

  it('keeps the hash of an audit-event-shaped value', () => {
    const event = {
      seq: 7,
      id: 'aud_01J0000000000000000000000',
      workspace_id: 'ws_01J0000000000000000000000',
      action: 'lead.updated',
      changes: canonicalJson({ status: { before: 'new', after: 'qualified' }, name: { before: null, after: 'Ada "the" Lovelace' }, at: new Date(0), 10: 1, 2: 2 }),
      occurred_at: '2026-11-24T22:05:42.123Z',
      ip: null,
    };
    const digest = createHash('sha256').update(`prev\n${canonicalJson(event)}`).digest('hex');
    expect(digest).toBe('f6c245d149c05613df1de9a8b8d245dc9c092a9f6fc8d27f1be67c65edbedde4');
  });
});

/** A deterministic pseudo-random JSON value (what a request body or a database row can hold). */
function randomJson(next: () => number, depth: number): unknown {
  const leaves = [null, true, false, 0, -1.5, 1e21, 42, '', 'é"\\\n\u2028', 'plain'];
  const pick = next();
  if (depth <= 0 || pick < 0.4) return leaves[Math.floor(next() * leaves.length)];
  if (pick < 0.6) return Array.from({ length: Math.floor(next() * 4) }, () => randomJson(next, depth - 1));
  const keys = ['b', 'a', '10', '2', '01', 'Z', 'é', '', 'a b', '__proto__'];
  const entries = Array.from({ length: Math.floor(next() * 6) }, () => [keys[Math.floor(next() * keys.length)]!, randomJson(next, depth - 1)]);
  return JSON.parse(JSON.stringify(Object.fromEntries(entries)));
}

/** The same value with every object's keys inserted in another (pseudo-random) order. */
function shuffled(value: unknown, next: () => number): unknown {
  if (Array.isArray(value)) return value.map((item) => shuffled(item, next));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value).map(([key, item]) => [key, shuffled(item, next)] as const);
  for (let i = entries.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [entries[i], entries[j]] = [entries[j]!, entries[i]!];
  }
  return Object.fromEntries(entries);
}

describe('canonical JSON of JSON values', () => {
  let seed = 42;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const values = Array.from({ length: 2000 }, () => randomJson(next, 4));

  it('does not depend on the order in which keys were inserted', () => {
    for (const value of values) expect(canonicalJson(shuffled(value, next))).toBe(canonicalJson(value));
  });

  it('is JSON of the same value, and its own canonical form', () => {
    for (const value of values) {
      const text = canonicalJson(value);
      expect(JSON.parse(text)).toEqual(value);
      expect(canonicalJson(JSON.parse(text))).toBe(text);
    }
  });

  it('writes the keys of every object in sorted order', () => {
    // JSON.parse keeps the text's key order, but for array-index keys, which every object lists first.
    const check = (value: unknown): void => {
      if (Array.isArray(value)) return value.forEach(check);
      if (value === null || typeof value !== 'object') return;
      const keys = Object.keys(value).filter((key) => !/^(0|[1-9][0-9]*)$/.test(key));
      expect(keys).toEqual([...keys].sort());
      Object.values(value).forEach(check);
    };
    for (const value of values) check(JSON.parse(canonicalJson(shuffled(value, next))));
  });
});
