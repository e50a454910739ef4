import { describe, expect, it } from 'vitest';
import { randomizationCI, randomizationCIMany, randomizationTest, randomizationTestMany } from './randomization.js';
import { createRng } from './rng.js';

describe('randomizationTest, exact enumeration by hand', () => {
  it('d = [1, 2, 3]: the 8 sign sums are ±6, ±4, ±2, 0, 0; |S| >= 6 twice → p = 2/8', () => {
    expect(randomizationTest([0, 0, 0], [1, 2, 3], { permutations: 8, seed: 1 })).toEqual({ p: 2 / 8, exact: true, permutations: 8 });
  });

  it('all differences zero: every sign vector ties the observed 0 → p = 1 (exact and Monte Carlo)', () => {
    expect(randomizationTest([0.5, 0.2], [0.5, 0.2], { permutations: 4, seed: 1 }).p).toBe(1);
    expect(randomizationTest(new Array(30).fill(0.5), new Array(30).fill(0.5), { permutations: 100, seed: 1 }).p).toBe(1);
  });

  it('d = [1, 1]: sums 2, 0, 0, −2 → p = 2/4', () => {
    expect(randomizationTest([0, 0], [1, 1], { permutations: 1000, seed: 1 }).p).toBe(0.5);
  });

  it('counts sums that equal the observed one up to rounding: d = [0.1, 0.2, −0.3, 0.5] → p = 10/16', () => {
    // Flipping a subset F gives S = 0.5 − 2·Σ_F d, and |S| >= 0.5 iff Σ_F d <= 0 or Σ_F d >= 0.5. The 16 subset
    // sums are 0, .1, .2, −.3, .5, .3, −.2, .6, −.1, .7, .2, 0, .8, .3, .4, .5: ten qualify, one of them
    // {0.1, 0.2, −0.3}, whose floating sum is 5.6e-17, not 0.
    expect(randomizationTest([0, 0, 0, 0], [0.1, 0.2, -0.3, 0.5], { permutations: 16, seed: 1 }).p).toBe(10 / 16);
  });
});

describe('randomizationTest, Monte Carlo', () => {
  const a = [0.1, 0.5, 0.3, 0.9, 0.2, 0.4, 0.7, 0.6, 0.0, 0.8, 0.3, 0.5, 0.2, 0.6];
  const b = [0.3, 0.4, 0.6, 1.0, 0.2, 0.7, 0.6, 0.9, 0.1, 0.8, 0.6, 0.4, 0.5, 0.9];

  it('uses (count + 1)/(B + 1) when 2^n > B and lands within 4 standard errors of the exact p', () => {
    const exact = randomizationTest(a, b, { permutations: 2 ** 14, seed: 3 });
    expect(exact.exact).toBe(true);
    const mc = randomizationTest(a, b, { permutations: 10_000, seed: 3 });
    expect(mc.exact).toBe(false);
    expect(mc.permutations).toBe(10_000);
    const count = mc.p * 10_001 - 1;
    expect(Math.abs(count - Math.round(count))).toBeLessThan(1e-9);
    expect(Math.abs(mc.p - exact.p)).toBeLessThan(4 * Math.sqrt((exact.p * (1 - exact.p)) / 10_000));
  });

  it('never returns 0: an overwhelming effect gives the floor 1/(B + 1)', () => {
    // d = twenty 1s: only the all-plus and all-minus sign vectors reach |S| = 20, probability 2^-19 per draw.
    const r = randomizationTest(new Array(20).fill(0), new Array(20).fill(1), { permutations: 999, seed: 5 });
    expect(r.p).toBe(1 / 1000);
  });

  it('is deterministic per seed, and the batch API gives each vector the same p as alone', () => {
    const d1 = Float64Array.from(a, (x, i) => (b[i] as number) - x);
    const d2 = Float64Array.from(d1, (x, i) => x * (i % 3 === 0 ? -1 : 1));
    const d3 = Float64Array.from([0.1, -0.2, 0.3]);
    const opts = { permutations: 5000, seed: 11 };
    const many = randomizationTestMany([d1, d3, d2], opts);
    const zeros = new Array(14).fill(0);
    expect(many[0]).toEqual(randomizationTest(zeros, Array.from(d1), opts));
    expect(many[2]).toEqual(randomizationTest(zeros, Array.from(d2), opts));
    expect(many[1]).toEqual(randomizationTest([0, 0, 0], Array.from(d3), opts));
    expect(randomizationTest(a, b, opts)).toEqual(randomizationTest(a, b, opts));
    expect(randomizationTest(a, b, opts).p).not.toBe(randomizationTest(a, b, { ...opts, seed: 12 }).p);
  });

  it('rejects bad options', () => {
    expect(() => randomizationTest(a, b, { permutations: 0, seed: 1 })).toThrow(/permutations/);
    expect(() => randomizationTest(a, b, { permutations: 100, seed: -3 })).toThrow(/seed/);
    expect(() => randomizationTestMany([Float64Array.from([1, Number.NaN])], { permutations: 10, seed: 1 })).toThrow(/diffs\[0\]/);
  });
});

describe('randomizationCI: the interval that inverts the test', () => {
  // IR-like differences: rounded to tenths, a third of them zero, so |d| ties and the observed sum recurs.
  const rng = createRng(11);
  const vectors = [8, 14, 40, 106].map((n) => Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 0 : Math.round((rng.nextFloat() - 0.35) * 10) / 10)));

  it.each(vectors.map((d) => ({ d, n: d.length })))('n = $n: 0 is outside exactly when p < alpha, at alpha = p and just above', ({ d }) => {
    const opts = { permutations: 2000, seed: 5 };
    const zeros = d.map(() => 0);
    const { p } = randomizationTest(zeros, d, opts);
    const inside = (ci: readonly [number | null, number | null]): boolean => (ci[0] ?? -Infinity) <= 0 && 0 <= (ci[1] ?? Infinity);
    expect(inside(randomizationCI(d, { ...opts, alpha: p }))).toBe(true);
    if (p < 1) expect(inside(randomizationCI(d, { ...opts, alpha: Math.min(0.999, p * 1.001) }))).toBe(false);
  });

  it('its bounds are where the shifted test crosses alpha', () => {
    const d = vectors[2] as number[];
    const opts = { permutations: 2000, seed: 5 };
    const [lo, hi] = randomizationCI(d, { ...opts, alpha: 0.05 });
    const pAt = (delta: number): number =>
      randomizationTest(
        d.map(() => 0),
        d.map((x) => x - delta),
        opts,
      ).p;
    const eps = 1e-7;
    expect(pAt((hi as number) - eps)).toBeGreaterThanOrEqual(0.05);
    expect(pAt((hi as number) + eps)).toBeLessThan(0.05);
    expect(pAt((lo as number) + eps)).toBeGreaterThanOrEqual(0.05);
    expect(pAt((lo as number) - eps)).toBeLessThan(0.05);
  });

  it('exact enumeration: d = [1, 2, 3] at alpha 0.25 inverts p = count/8', () => {
    // p(δ) >= 0.25 needs 2 of the 8 sign vectors to count. The all-plus and all-minus vectors always count, so
    // every δ is inside: no shift of three values can be rejected at 0.25 by 8 equally likely sign vectors.
    expect(randomizationCI([1, 2, 3], { permutations: 8, seed: 1, alpha: 0.25 })).toEqual([null, null]);
    // At alpha 0.5 four must count; the interval is finite and holds the mean 2.
    const [lo, hi] = randomizationCI([1, 2, 3], { permutations: 8, seed: 1, alpha: 0.5 });
    expect(lo as number).toBeLessThan(2);
    expect(hi as number).toBeGreaterThan(2);
  });

  it('the batch form equals the single form per vector', () => {
    const alphas = vectors.map((_, i) => 0.01 * (i + 1));
    const many = randomizationCIMany(vectors, alphas, { permutations: 3000, seed: 9 });
    vectors.forEach((d, i) => expect(many[i]).toEqual(randomizationCI(d, { permutations: 3000, seed: 9, alpha: alphas[i] as number })));
  });
});
