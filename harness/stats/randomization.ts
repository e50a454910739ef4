import { HarnessError } from '../errors.js';
import { buildChunkTable, chunkCount, drawSignBytes, groupByLength, LANES, SharedDrawSums } from './draws.js';
import { checkArray, checkVector, DEFAULT_DRAWS, DEFAULT_SEED, pairedDiffs, positiveInt, seedOf, sumTolerance, toVector, type Vector } from './input.js';
import { orderStatistics } from './bootstrap.js';

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
  checkArray('randomizationTestMany', 'diffs', diffs, 'difference vectors');
  const vectors = diffs.map((v, i) => {
    checkVector('randomizationTestMany', `diffs[${i}]`, v);
    try {
      return toVector('randomizationTestMany', v, 1);
    } catch (e) {
      throw new HarnessError(`randomizationTestMany: diffs[${i}]: ${(e as Error).message}`, { cause: e });
    }
  });
  const results = new Array<RandomizationResult>(vectors.length);
  for (const indices of groupByLength(vectors).values()) {
    const group = randomizationOnGroup(
      indices.map((i) => vectors[i] as Float64Array),
      opts,
    );
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
  if (exact) {
    return vectors.map((d) => {
      buildChunkTable(d, table);
      const { total, threshold } = observed(d);
      let count = 0;
      const m = 2 ** n;
      for (let s = 0; s < m; s++) {
        let p = 0;
        for (let c = 0; c < chunks; c++) p += table[(c << 8) | ((s / 2 ** (8 * c)) & 0xff)] as number;
        if (Math.abs(2 * p - total) >= threshold) count++;
      }
      return { p: count / m, exact: true, permutations: m };
    });
  }
  // One pass over the shared draws per block of LANES vectors (draws.ts): the same sums, in the same order.
  const kernel = new SharedDrawSums(n, permutations, [drawSignBytes(n, permutations, seed)]);
  const results: RandomizationResult[] = [];
  for (let start = 0; start < vectors.length; start += LANES) {
    const block = vectors.slice(start, start + LANES);
    kernel.setVectors(block);
    const sums = kernel.sums(0);
    block.forEach((d, v) => {
      const { total, threshold } = observed(d);
      const count = countAtLeast(sums, v, permutations, total, threshold);
      results.push({ p: (count + 1) / (permutations + 1), exact: false, permutations });
    });
  }
  return results;
}

/** #{b < count : |2·sums[b·LANES + v] − total| >= threshold}, the draws at least as extreme as the observed sum. */
function countAtLeast(sums: Float64Array, v: number, count: number, total: number, threshold: number): number {
  let n = 0;
  // +(condition) rather than `if`: for p near 1/2 the outcomes are coin flips that a branch would mispredict.
  for (let b = 0; b < count; b++) n += +(Math.abs(2 * (sums[b * LANES + v] as number) - total) >= threshold);
  return n;
}

/** Σd and the threshold a draw's |2·P − Σd| must reach (P the sum where the sign is +1): |Σd| − tol. */
function observed(d: Float64Array): { total: number; threshold: number } {
  let total = 0;
  for (let i = 0; i < d.length; i++) total += d[i] as number;
  return { total, threshold: Math.abs(total) - sumTolerance(d) };
}

export interface RandomizationCIOptions extends RandomizationOptions {
  /** The test level α the interval inverts; the interval's confidence is 1 − α. Default 0.05. */
  readonly alpha?: number;
}

/**
 * The confidence interval for the mean difference that inverts {@link randomizationTest} with the same draws:
 * δ is inside iff the test of d − δ (each difference shifted by δ) has p >= α, so the interval excludes 0
 * exactly when the test rejects at α. Each draw's end points are widened by the test's
 * own tolerance on sums (1e-10·Σ|d_i|, divided by n), so ties with the observed sum count here as they do there. Bounds are `null` where no shift is
 * rejected (α·(B + 1) <= 1 for Monte Carlo draws): the test cannot reach that level.
 *
 * For one sign vector s (with k = Σ s_i) the shifted draw counts when |Σ s_i d_i − δk| >= |Σ d_i − nδ|, a
 * quadratic inequality in δ whose solution set is the closed interval between δ₁ = (T − A)/(n − k) and
 * δ₂ = (T + A)/(n + k), with A = Σ s_i d_i and T = Σ d_i (the whole line when s = ±1). The count is therefore
 * unimodal in δ, and the bounds are the K-th smallest δ-lower end and the K-th largest δ-upper end, with
 * K = ⌈α·2ⁿ⌉ for exact enumeration and K = ⌈α·(B + 1)⌉ − 1 for Monte Carlo (Fisher 1935; Ernst 2004,
 * doi:10.1214/088342304000000396 on inverting permutation tests).
 */
export function randomizationCI(d: Vector, opts: RandomizationCIOptions = {}): readonly [number | null, number | null] {
  checkVector('randomizationCI', 'd', d);
  const [r] = randomizationCIMany([d], [opts.alpha ?? 0.05], opts);
  return r as readonly [number | null, number | null];
}

/** {@link randomizationCI} for many vectors, each at its own α, sharing the draws by length as the tests do. */
export function randomizationCIMany(
  diffs: readonly Vector[],
  alphas: readonly number[],
  opts: RandomizationOptions = {},
): (readonly [number | null, number | null])[] {
  const permutations = positiveInt('randomizationCI', 'permutations', opts.permutations ?? DEFAULT_DRAWS);
  const seed = seedOf('randomizationCI', opts.seed ?? DEFAULT_SEED);
  checkArray('randomizationCI', 'diffs', diffs, 'difference vectors');
  checkArray('randomizationCI', 'alphas', alphas, 'levels in (0, 1)');
  const vectors = diffs.map((v, i) => {
    const a = alphas[i] as number;
    if (!(a > 0 && a < 1)) throw new HarnessError(`randomizationCI: alpha[${i}] must be in (0, 1), got ${a}`);
    checkVector('randomizationCI', `diffs[${i}]`, v);
    return toVector('randomizationCI', v, 1);
  });
  const out = new Array<readonly [number | null, number | null]>(vectors.length);
  for (const indices of groupByLength(vectors).values()) {
    const n = (vectors[indices[0] as number] as Float64Array).length;
    const chunks = chunkCount(n);
    const exact = n < 53 && 2 ** n <= permutations;
    const count = exact ? 2 ** n : permutations;
    const bytes = exact ? enumerateSignBytes(n) : drawSignBytes(n, permutations, seed);
    // k_b = Σ s_i = 2·(number of + signs) − n depends on the draw only.
    const k = new Float64Array(count);
    for (let b = 0; b < count; b++) {
      let plus = 0;
      for (let c = 0; c < chunks; c++) plus += popcount8(bytes[b * chunks + c] as number);
      k[b] = 2 * plus - n;
    }
    const kernel = new SharedDrawSums(n, count, [bytes]);
    const lows = new Float64Array(count);
    const highs = new Float64Array(count);
    for (let start = 0; start < indices.length; start += LANES) {
      const block = indices.slice(start, start + LANES);
      kernel.setVectors(block.map((i) => vectors[i] as Float64Array));
      const sums = kernel.sums(0);
      block.forEach((i, v) => {
        const d = vectors[i] as Float64Array;
        let total = 0;
        for (let j = 0; j < n; j++) total += d[j] as number;
        // The test's tolerance on sums (see randomizationTest), carried to δ: a shift of ε moves |T − nδ| by nε.
        const tol = sumTolerance(d) / n;
        inversionEnds(sums, v, k, n, total, tol, lows, highs);
        const alpha = alphas[i] as number;
        // Draws that must still count for δ to stay inside; the Monte Carlo p adds the observed labelling once.
        const need = exact ? Math.ceil(alpha * count - 1e-9) : Math.ceil(alpha * (count + 1) - 1e-9) - 1;
        if (need <= 0) {
          out[i] = [null, null];
          return;
        }
        const lo = selectKth(lows, need - 1);
        const hi = selectKth(highs, count - need);
        out[i] = [Number.isFinite(lo) ? lo : null, Number.isFinite(hi) ? hi : null];
      });
    }
  }
  return out;
}

/**
 * For every draw b, the δ-interval [lows[b], highs[b]] where the shifted draw counts (see
 * {@link randomizationCI}), widened by `tol`; the whole line when k_b = ±n. `sums` are lane v's look-up sums.
 */
function inversionEnds(sums: Float64Array, v: number, k: Float64Array, n: number, total: number, tol: number, lows: Float64Array, highs: Float64Array): void {
  for (let b = 0; b < k.length; b++) {
    const kb = k[b] as number;
    if (kb === n || kb === -n) {
      lows[b] = -Infinity;
      highs[b] = Infinity;
      continue;
    }
    const a = 2 * (sums[b * LANES + v] as number) - total;
    const r1 = (total - a) / (n - kb);
    const r2 = (total + a) / (n + kb);
    lows[b] = Math.min(r1, r2) - tol;
    highs[b] = Math.max(r1, r2) + tol;
  }
}

/** The k-th smallest value (0-based) of `a`, which it may reorder ({@link orderStatistics}: no full sort of the draws). */
function selectKth(a: Float64Array, k: number): number {
  return orderStatistics(a, [k]).get(k) as number;
}

function popcount8(x: number): number {
  x = x - ((x >>> 1) & 0x55);
  x = (x & 0x33) + ((x >>> 2) & 0x33);
  return (x + (x >>> 4)) & 0x0f;
}

/** All 2ⁿ sign vectors in the byte layout of drawSignBytes, in the order the exact test enumerates them. */
function enumerateSignBytes(n: number): Uint8Array {
  const chunks = chunkCount(n);
  const m = 2 ** n;
  const out = new Uint8Array(m * chunks);
  for (let s = 0; s < m; s++) for (let c = 0; c < chunks; c++) out[s * chunks + c] = (s / 2 ** (8 * c)) & 0xff;
  return out;
}
