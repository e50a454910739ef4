import { describe, expect, it } from 'vitest';
import { randomizationTest, randomizationTestMany } from './randomization.js';

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
