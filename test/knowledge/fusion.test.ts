import { describe, expect, it } from 'vitest';
import { fuseRankings } from '../../src/modules/knowledge/retrieval.js';

// Weighted reciprocal rank fusion (docs/decisions/0021): a ranking's weight scales each of its ranks.
describe('fuseRankings', () => {
  it('ranks a chunk both rankings hold first, and a heavier ranking\'s first above a lighter one\'s', () => {
    const fused = fuseRankings([
      { ids: [1, 2, 3], weight: 2 },
      { ids: [4, 3, 5], weight: 1 },
    ]);
    const order = [...fused].sort((a, b) => b[1] - a[1]).map(([id]) => id);
    expect(order).toEqual([3, 1, 2, 4, 5]);
    expect(fused.get(1)).toBeCloseTo(2 / 61);
    expect(fused.get(3)).toBeCloseTo(2 / 63 + 1 / 62);
  });

  it('with equal weights, the same rank in either ranking scores the same', () => {
    const fused = fuseRankings([
      { ids: [1], weight: 1 },
      { ids: [2], weight: 1 },
    ]);
    expect(fused.get(1)).toBe(fused.get(2));
  });
});
