import { describe, expect, it } from 'vitest';
import { createRng } from '../../harness/stats/rng.js';
import { dot, exactTopK, normalizeRows } from './exact.js';

describe('normalizeRows', () => {
  it('scales each row to unit length and leaves a zero row zero', () => {
    const v = normalizeRows(Float32Array.of(3, 4, 0, 0, 0, -2), 2);
    expect(Array.from(v)).toEqual([3 / 5, 4 / 5, 0, 0, 0, -1].map(Math.fround));
  });
});

describe('exactTopK', () => {
  it('ranks rows by cosine, best first, down to the theoretical minimum -1', () => {
    const s = Math.SQRT1_2;
    // Unit rows at 0, 90, 180 and 45 degrees; the query points at 0 degrees.
    const m = Float32Array.of(1, 0, 0, 1, -1, 0, s, s);
    const [t] = exactTopK(m, Float32Array.of(1, 0), 2, 4);
    expect(Array.from(t!.rows)).toEqual([0, 3, 1, 2]);
    expect(Array.from(t!.scores)).toEqual([1, Math.fround(s), 0, -1]);
  });

  it('keeps equal scores in row order and cuts at topK (also topK past the corpus, and topK 0)', () => {
    const m = Float32Array.of(1, 1, 1, 1, 1, 1);
    expect(Array.from(exactTopK(m, Float32Array.of(1), 1, 2)[0]!.rows)).toEqual([0, 1]);
    expect(Array.from(exactTopK(m, Float32Array.of(1), 1, 10)[0]!.rows)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(exactTopK(m, Float32Array.of(1), 1, 0)[0]!.rows.length).toBe(0);
  });

  it('equals sorting every dot product, for a batch of queries over many blocks', () => {
    const rng = createRng(7);
    const dims = 37;
    const n = 3000;
    const m = normalizeRows(
      Float32Array.from({ length: n * dims }, () => rng.nextFloat() * 2 - 1),
      dims,
    );
    const q = normalizeRows(
      Float32Array.from({ length: 5 * dims }, () => rng.nextFloat() * 2 - 1),
      dims,
    );
    const got = exactTopK(m, q, dims, 50);
    for (let k = 0; k < 5; k++) {
      const all = Array.from({ length: n }, (_, r) => {
        let s = 0;
        for (let j = 0; j < dims; j++) s += (m[r * dims + j] as number) * (q[k * dims + j] as number);
        return { r, s };
      }).sort((a, b) => b.s - a.s || a.r - b.r);
      expect(Array.from(got[k]!.rows)).toEqual(all.slice(0, 50).map((x) => x.r));
      got[k]!.scores.forEach((s, i) => expect(s).toBeCloseTo(all[i]!.s, 12));
    }
  });

  it('dot handles lengths that are not a multiple of its unrolling', () => {
    const a = Float32Array.of(9, 1, 2, 3, 4, 5, 6);
    const b = Float32Array.of(1, 1, 1, 1, 1, 2);
    expect(dot(a, 1, b, 0, 6)).toBe(1 + 2 + 3 + 4 + 5 + 6 * 2);
  });
});
