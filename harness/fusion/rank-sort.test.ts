import { describe, expect, it } from 'vitest';
import { Rng } from '../stats/rng.js';
import { BucketScratch, bestOfSums, bestSorted, sortRanked, ThresholdScratch } from './rank-sort.js';

/** The best k of scores[0, size) by a full sort: the order bestSorted must reproduce bit for bit. */
function byFullSort(scores: Float64Array, size: number, k: number): { locals: number[]; scores: number[] } {
  const ls: number[] = [];
  for (let l = 0; l < size; l++) if (scores[l] !== -Infinity) ls.push(l);
  const d = Int32Array.from(ls);
  const s = Float64Array.from(ls, (l) => scores[l]!);
  sortRanked(d, s, 0, d.length);
  const keep = Math.min(k, d.length);
  return { locals: Array.from(d.subarray(0, keep)), scores: Array.from(s.subarray(0, keep)) };
}

function bySelection(scores: Float64Array, size: number, k: number, scratch: BucketScratch): { locals: number[]; scores: number[] } | undefined {
  const outL = new Int32Array(size);
  const outS = new Float64Array(size);
  const keep = bestSorted(scores, size, k, scratch, outL, outS);
  if (keep < 0) return undefined;
  return { locals: Array.from(outL.subarray(0, keep)), scores: Array.from(outS.subarray(0, keep)) };
}

describe('bestSorted against a full sort of every candidate', () => {
  const rng = new Rng(11);
  const scratch = new BucketScratch(3000);
  // Shapes that stress the buckets: heavy ties (a few distinct values), skewed ranges (one outlier far above
  // the rest, so the sampled range misses it), negatives, and lists with non-candidates (-Infinity).
  const shapes: Record<string, () => number> = {
    'few distinct values': () => rng.nextInt(5) / 4,
    'ties among spread values': () => (rng.nextFloat() < 0.5 ? rng.nextInt(40) : rng.nextFloat() * 40) - 20,
    'skewed, one outlier': () => (rng.nextFloat() < 0.002 ? 1e6 : rng.nextFloat() ** 8),
    'with non-candidates': () => (rng.nextFloat() < 0.3 ? -Infinity : rng.nextInt(100) * 0.01),
    'all equal': () => 0.25,
    'tiny range': () => 1 + rng.nextInt(3) * Number.EPSILON,
  };
  for (const [name, draw] of Object.entries(shapes)) {
    it(`${name}: same entries, same scores, same order, for every k`, () => {
      for (const size of [1, 2, 17, 100, 1000, 3000]) {
        const scores = Float64Array.from({ length: size }, draw);
        for (const k of [1, 2, 10, 100, 999, 1000, 5000]) {
          const got = bySelection(scores, size, k, scratch);
          expect(got, `${name} size ${size} k ${k}`).toBeDefined();
          const want = byFullSort(scores, size, k);
          expect(got!.locals).toEqual(want.locals);
          // Object.is per entry: bit-identical scores, -0 and +0 told apart.
          expect(got!.scores.every((s, j) => Object.is(s, want.scores[j]))).toBe(true);
        }
      }
    });
  }

  it('declines scores it cannot bucket (NaN, an infinite range), for the comparison sort', () => {
    expect(bySelection(Float64Array.of(1, Number.NaN, 2), 3, 2, scratch)).toBeUndefined();
    expect(bySelection(Float64Array.of(-Infinity, 1, -Infinity), 3, 1, scratch)?.locals).toEqual([1]);
    expect(bySelection(Float64Array.of(-1e308, 1e308, 0), 3, 2, scratch)).toBeUndefined();
  });
});

describe('bestOfSums against a full sort of (base + acc) / div', () => {
  const rng = new Rng(5);
  const scratch = new ThresholdScratch(6000);
  const shapes: Record<string, () => number> = {
    'few distinct values': () => rng.nextInt(5) / 4,
    'ties among spread values': () => (rng.nextFloat() < 0.5 ? rng.nextInt(40) : rng.nextFloat() * 40) - 20,
    'skewed, one outlier': () => (rng.nextFloat() < 0.002 ? 1e6 : rng.nextFloat() ** 8),
    'all equal': () => 0.25,
    'tiny range': () => 1 + rng.nextInt(3) * Number.EPSILON,
    'subnormal sums': () => (rng.nextInt(7) - 3) * Number.MIN_VALUE,
  };
  for (const [name, draw] of Object.entries(shapes)) {
    it(`${name}: the full sort's entries, scores and order, or a refusal`, () => {
      let taken = 0;
      // 1003 and 2999: sizes off the four-entry stride of the candidate pass, so its tail runs too.
      for (const size of [1, 100, 1000, 1003, 2999, 6000]) {
        const acc = Float64Array.from({ length: size }, draw);
        for (const [base, div] of [
          [0, 1],
          [0.5, 5],
          [-2, 0.3],
          [0, 3],
        ] as const) {
          const scores = acc.map((a) => (base + a) / div);
          for (const k of [1, 10, 100, 1000, 7000]) {
            const outL = new Int32Array(size);
            const outS = new Float64Array(size);
            const keep = bestOfSums(acc, base, div, size, k, scratch, outL, outS);
            if (keep < 0) continue;
            taken++;
            const want = byFullSort(scores, size, k);
            expect(Array.from(outL.subarray(0, keep)), `${name} size ${size} base ${base} div ${div} k ${k}`).toEqual(want.locals);
            expect(Array.from(outS.subarray(0, keep)).every((s, j) => Object.is(s, want.scores[j]))).toBe(true);
          }
        }
      }
      // The sampled path must actually run on the larger lists, not refuse them all.
      expect(taken).toBeGreaterThan(10);
    });
  }

  it('refuses NaN, in the sample or between its positions (the candidate pass lets NaN through to refuse it)', () => {
    for (const at of [8, 1999, 1998]) {
      const acc = Float64Array.from({ length: 2000 }, (_, l) => (l === at ? Number.NaN : l));
      expect(bestOfSums(acc, 0, 1, 2000, 10, new ThresholdScratch(2000), new Int32Array(2000), new Float64Array(2000)), `NaN at ${at}`).toBe(-1);
    }
  });
});
