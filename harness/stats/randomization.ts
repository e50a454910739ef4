import { HarnessError } from '../errors.js';
import { buildChunkTable, chunkCount, drawSignBytes, groupByLength, lookupSum } from './draws.js';
import { DEFAULT_DRAWS, DEFAULT_SEED, pairedDiffs, positiveInt, seedOf, sumTolerance, toVector, type Vector } from './input.js';

export interface RandomizationOptions {
  /** Monte Carlo sign flips B (default 10,000); when 2ⁿ <= B the test enumerates all 2ⁿ sign vectors instead. */
  readonly permutations?: number;
  /** Seed of the sign-flip stream (see rng.ts); default 42, the config's. */
  readonly seed?: number;
}

export interface RandomizationResult {
  /** Two-sided p-value. */
  readonly p: number;
  /** True when all 2ⁿ sign vectors were enumerated (p exact), false for Monte Carlo. */
  readonly exact: boolean;
  /** Sign vectors evaluated: 2ⁿ when exact, else B. */
  readonly permutations: number;
}

/**
 * Paired randomization (sign-flip permutation) test of the mean difference, d = b − a (Fisher 1935; Smucker,
 * Allan & Carterette 2007, doi:10.1145/1321440.1321528). Under H0 each d_i is symmetric about 0, so every
 * sign vector s ∈ {±1}ⁿ is equally likely; the statistic is |Σ s_i d_i| (equivalently |mean|).
 *
 * - Exact when 2ⁿ <= permutations: all 2ⁿ sign vectors, the identity included,
 *   p = #{s : |Σ s_i d_i| >= |Σ d_i|} / 2ⁿ.
 * - Otherwise Monte Carlo with B = permutations independent uniform sign vectors,
 *   p = (#{b : |Σ s_bi d_i| >= |Σ d_i|} + 1) / (B + 1), which counts the observed labelling once and is never
 *   0 (Phipson & Smyth 2010, doi:10.2202/1544-6115.1585). Its standard error is about √(p(1−p)/B).
 *
 * "≥" is decided with an absolute tolerance of 1e-10·Σ|d_i|, because sums of the same values in another
 * order differ by rounding: without it a sign vector that reproduces the observed sum exactly (ties in |d|)
 * would be counted or not by accident.
 *
 * The result for a vector depends only on (d, permutations, seed): {@link randomizationTestMany} with the same
 * options returns the same p for it.
 */
export function randomizationTest(a: Vector, b: Vector, opts: RandomizationOptions = {}): RandomizationResult {
  const d = pairedDiffs('randomizationTest', a, b, 1);
  const [result] = randomizationOnGroup([d], opts);
  return result as RandomizationResult;
}

/**
 * {@link randomizationTest} for many difference vectors d = b − a at once, sharing one set of sign-flip draws
 * among all vectors of the same length (common random numbers: each test is exactly as valid as alone, and
 * the tests are positively dependent through the shared draws, which the family-wise corrections used here
 * (Holm, Hommel, Bonferroni, BY) tolerate). Results are in input order.
 */
export function randomizationTestMany(diffs: readonly Vector[], opts: RandomizationOptions = {}): RandomizationResult[] {
  const vectors = diffs.map((v, i) => {
    try {
      return toVector('randomizationTestMany', v, 1);
    } catch (e) {
      throw new HarnessError(`randomizationTestMany: diffs[${i}]: ${(e as Error).message}`, { cause: e });
    }
  });
  const results = new Array<RandomizationResult>(vectors.length);
  for (const indices of groupByLength(vectors).values()) {
    const group = randomizationOnGroup(indices.map((i) => vectors[i] as Float64Array), opts);
    indices.forEach((i, k) => {
      results[i] = group[k] as RandomizationResult;
    });
  }
  return results;
}

/** All vectors have the same length n >= 1. */
function randomizationOnGroup(vectors: readonly Float64Array[], opts: RandomizationOptions): RandomizationResult[] {
  const permutations = positiveInt('randomizationTest', 'permutations', opts.permutations ?? DEFAULT_DRAWS);
  const seed = seedOf('randomizationTest', opts.seed ?? DEFAULT_SEED);
  const n = (vectors[0] as Float64Array).length;
  const chunks = chunkCount(n);
  const table = new Float64Array(chunks * 256);
  const exact = n < 53 && 2 ** n <= permutations;
  const signs = exact ? undefined : drawSignBytes(n, permutations, seed);
  return vectors.map((d) => {
    buildChunkTable(d, table);
    let total = 0;
    for (let i = 0; i < n; i++) total += d[i] as number;
    // |2·P − total| >= |total| − tol, where P is the sum over positions whose sign is +1.
    const threshold = Math.abs(total) - sumTolerance(d);
    let count = 0;
    if (exact) {
      const m = 2 ** n;
      for (let s = 0; s < m; s++) {
        let p = 0;
        for (let c = 0; c < chunks; c++) p += table[(c << 8) | ((s / 2 ** (8 * c)) & 0xff)] as number;
        if (Math.abs(2 * p - total) >= threshold) count++;
      }
      return { p: count / m, exact: true, permutations: m };
    }
    const bytes = signs as Uint8Array;
    for (let bIdx = 0; bIdx < permutations; bIdx++) {
      if (Math.abs(2 * lookupSum(table, bytes, bIdx * chunks, chunks) - total) >= threshold) count++;
    }
    return { p: (count + 1) / (permutations + 1), exact: false, permutations };
  });
}
