import { describe, expect, it } from 'vitest';
import { bootstrapCI, bootstrapCIMany, orderStatistics } from './bootstrap.js';
import { Rng } from './rng.js';

describe('bootstrapCI', () => {
  it('constant values give the degenerate interval [x, x]', () => {
    expect(bootstrapCI([0.25, 0.25, 0.25], { resamples: 100, seed: 1, method: 'bca' })).toEqual({ lo: 0.25, hi: 0.25, estimate: 0.25 });
  });

  it('values [0, 1]: resample means are 0, 1/2, 1 with probability 1/4, 1/2, 1/4, so the 95% percentile interval is [0, 1]', () => {
    const r = bootstrapCI([0, 1], { resamples: 10_000, seed: 2, method: 'percentile' });
    expect(r).toEqual({ lo: 0, hi: 1, estimate: 0.5 });
  });

  it('level 0.5 on [0, 1] gives the quartiles of {0 (1/4), 1/2 (1/2), 1 (1/4)}: both near 1/2', () => {
    const r = bootstrapCI([0, 1], { resamples: 10_000, seed: 2, method: 'percentile', level: 0.5 });
    // The 25th and 75th percentiles sit at the edge of the 0 and 1 masses; interpolation keeps them in [0, 1/2] and [1/2, 1].
    expect(r.lo).toBeGreaterThanOrEqual(0);
    expect(r.lo).toBeLessThanOrEqual(0.5);
    expect(r.hi).toBeGreaterThanOrEqual(0.5);
    expect(r.hi).toBeLessThanOrEqual(1);
  });

  it('percentile interval of a normal-ish sample is close to mean ± 1.96·s/√n', () => {
    const x = Array.from({ length: 200 }, (_, i) => Math.sin(i * 12.9898) * 0.5);
    const mean = x.reduce((s, v) => s + v, 0) / x.length;
    const sd = Math.sqrt(x.reduce((s, v) => s + (v - mean) ** 2, 0) / (x.length - 1));
    const se = sd / Math.sqrt(x.length);
    for (const method of ['percentile', 'bca'] as const) {
      const r = bootstrapCI(x, { resamples: 10_000, seed: 4, method });
      expect(r.estimate).toBeCloseTo(mean, 14);
      expect(Math.abs(r.lo - (mean - 1.96 * se))).toBeLessThan(0.15 * se);
      expect(Math.abs(r.hi - (mean + 1.96 * se))).toBeLessThan(0.15 * se);
    }
  });

  it('is deterministic per seed, and the batch API gives each vector the same interval as alone', () => {
    const v1 = Float64Array.from([0.1, -0.3, 0.2, 0.5, 0, 0.4, -0.1]);
    const v2 = Float64Array.from([0.2, 0.1, 0.3, 0.5, 0.7, 0.1, 0]);
    const v3 = Float64Array.from([1, 0, 0, 1]);
    const opts = { resamples: 2000, seed: 8, method: 'bca' as const };
    const many = bootstrapCIMany([v1, v3, v2], opts);
    expect(many[0]).toEqual(bootstrapCI(v1, opts));
    expect(many[1]).toEqual(bootstrapCI(v3, opts));
    expect(many[2]).toEqual(bootstrapCI(v2, opts));
    // With n = 7 many seeds land on the same atoms; a 60-value continuous sample shows the seed matters.
    const wide = Array.from({ length: 60 }, (_, i) => Math.sin(i * 7.31));
    expect(bootstrapCI(wide, { ...opts, seed: 9 }).lo).not.toBe(bootstrapCI(wide, opts).lo);
    expect(bootstrapCI(wide, opts)).toEqual(bootstrapCI(wide, opts));
  });

  it('rejects bad options and BCa with too few resamples to estimate the bias', () => {
    expect(() => bootstrapCI([1, 2], { resamples: 0, seed: 1, method: 'percentile' })).toThrow(/resamples/);
    expect(() => bootstrapCI([1, 2], { resamples: 10, seed: 1, method: 'percentile', level: 1 })).toThrow(/level/);
    expect(() => bootstrapCI([], { resamples: 10, seed: 1, method: 'percentile' })).toThrow(/at least 1/);
    // One resample of [0, 1] is 0, 1/2 or 1: the bias share is 0, 1/2 or 1; find a seed where BCa is undefined.
    const undefinedSeed = [1, 2, 3, 4, 5, 6, 7, 8].find((seed) => {
      try {
        bootstrapCI([0, 1], { resamples: 1, seed, method: 'bca' });
        return false;
      } catch {
        return true;
      }
    });
    expect(undefinedSeed).toBeDefined();
  });
});

describe('orderStatistics (the selection that replaces sorting the resample means)', () => {
  it('finds the k-th smallest values a sort would put at k, for any set of k, ties and tiny arrays included', () => {
    const rng = new Rng(11);
    // From 1,024 values on, ranks are bracketed by a sample first (one pass), else selected in place.
    for (const size of [1, 2, 3, 4, 5, 17, 100, 1000, 1024, 10_000]) {
      for (let trial = 0; trial < 20; trial++) {
        // Few distinct values: many ties, as resample sums of grid-valued differences have.
        const a = Float64Array.from({ length: size }, () => Math.floor(rng.nextFloat() * 7) - 3 + (trial % 2) * rng.nextFloat());
        const sorted = a.slice().sort();
        const ks = [0, size - 1, ...Array.from({ length: 3 }, () => rng.nextInt(size))];
        const got = orderStatistics(a, ks);
        for (const k of ks) expect(got.get(k), `size ${size}, k ${k}`).toBe(sorted[k]);
        // Nothing is lost or invented: the array is a permutation of what it was.
        expect(a.slice().sort()).toEqual(sorted);
      }
    }
  });

  it('gives the sorted values at the percentile ranks of 10,000 resample sums, and falls back when the sample cannot bracket them', () => {
    const rng = new Rng(12);
    // Sums of 20 grid values (heavy ties, as resample sums of grid-valued differences), and a mass of 90% equal
    // values, where the bracket around a rank holds over a quarter of the array and selection takes over.
    const lattice = Float64Array.from({ length: 10_000 }, () =>
      Array.from({ length: 20 }, () => Math.round(rng.nextFloat() * 20) / 20).reduce((x, y) => x + y),
    );
    const massed = Float64Array.from({ length: 10_000 }, () => (rng.nextFloat() < 0.9 ? 0.5 : rng.nextFloat()));
    for (const a of [lattice, massed]) {
      const sorted = a.slice().sort();
      const ks = [0, 240, 241, 4999, 5000, 9758, 9759, 9999];
      const got = orderStatistics(a.slice(), ks);
      for (const k of ks) expect(got.get(k), `k ${k}`).toBe(sorted[k]);
    }
  });
});
