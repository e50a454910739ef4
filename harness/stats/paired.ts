import { HarnessError } from '../errors.js';
import { pairedDiffs, type Vector } from './input.js';
import { normalSf, studentTQuantile, studentTTwoSided } from './special.js';

function meanOf(d: Float64Array): number {
  let s = 0;
  for (let i = 0; i < d.length; i++) s += d[i] as number;
  return s / d.length;
}

/** Sample standard deviation (ddof 1), two-pass for accuracy. */
function sdOf(d: Float64Array, mean: number): number {
  let ss = 0;
  for (let i = 0; i < d.length; i++) {
    const e = (d[i] as number) - mean;
    ss += e * e;
  }
  return Math.sqrt(ss / (d.length - 1));
}

export interface PairedTTestResult {
  /** t = mean(d) / (sd(d) / √n), d = b − a: positive when the challenger `b` is better. */
  readonly t: number;
  readonly df: number;
  /** Two-sided p-value. */
  readonly p: number;
  /** mean(b − a). */
  readonly meanDiff: number;
  /** Student t 95% interval for the mean difference. */
  readonly ci95: readonly [lo: number, hi: number];
}

/**
 * Paired (dependent-samples) Student t-test of H0: E[b − a] = 0.
 *
 * With d = b − a over n aligned queries: t = d̄ / (s_d / √n), df = n − 1, p = P(|T_df| ≥ |t|), and
 * ci95 = d̄ ± t_{0.975, n−1} · s_d / √n. Matches scipy `ttest_rel(b, a)` (Student 1908; Smucker, Allan &
 * Carterette 2007, doi:10.1145/1321440.1321528 for its use in IR).
 *
 * Degenerate case: when every difference is identical (s_d = 0) the statistic is 0/0 or ±∞; we return t = 0,
 * p = 1 when all differences are 0 (no evidence of any difference) and t = ±∞, p = 0 otherwise, with the
 * interval collapsed to [d̄, d̄]. scipy returns NaN for the first case.
 *
 * @throws HarnessError when the vectors differ in length, hold non-finite values, or n < 2.
 */
export function pairedTTest(a: Vector, b: Vector): PairedTTestResult {
  const d = pairedDiffs('pairedTTest', a, b, 2);
  const n = d.length;
  const df = n - 1;
  const meanDiff = meanOf(d);
  const sd = sdOf(d, meanDiff);
  if (sd === 0) {
    const t = meanDiff === 0 ? 0 : meanDiff > 0 ? Infinity : -Infinity;
    return { t, df, p: meanDiff === 0 ? 1 : 0, meanDiff, ci95: [meanDiff, meanDiff] };
  }
  const se = sd / Math.sqrt(n);
  const t = meanDiff / se;
  const half = studentTQuantile(0.975, df) * se;
  return { t, df, p: studentTTwoSided(t, df), meanDiff, ci95: [meanDiff - half, meanDiff + half] };
}

/**
 * Cohen's d_z: the standardized mean paired difference d̄ / s_d (ddof 1), d = b − a (Cohen 1988, §2.3;
 * Lakens 2013, doi:10.3389/fpsyg.2013.00863). Equals t / √n. Returns 0 when all differences are 0 and ±∞
 * when they are identical and non-zero.
 */
export function cohensDz(a: Vector, b: Vector): number {
  const d = pairedDiffs('cohensDz', a, b, 2);
  const m = meanOf(d);
  const sd = sdOf(d, m);
  if (sd === 0) return m === 0 ? 0 : m > 0 ? Infinity : -Infinity;
  return m / sd;
}

export interface WinTieLoss {
  /** Queries where b > a. */
  readonly wins: number;
  /** Queries where b = a exactly. */
  readonly ties: number;
  /** Queries where b < a. */
  readonly losses: number;
}

/** Per-query win/tie/loss counts of the challenger `b` against the baseline `a` (d = b − a; exact equality). */
export function winTieLoss(a: Vector, b: Vector): WinTieLoss {
  const d = pairedDiffs('winTieLoss', a, b, 0);
  let wins = 0;
  let losses = 0;
  for (let i = 0; i < d.length; i++) {
    const x = d[i] as number;
    if (x > 0) wins++;
    else if (x < 0) losses++;
  }
  return { wins, ties: d.length - wins - losses, losses };
}

/**
 * Minimum detectable effect of a two-sided paired test over `n` queries: the smallest true mean difference
 * detected with probability `power` at level `alpha`, by the **t approximation**
 *
 *   MDE = (t_{1−α/2, n−1} + t_{power, n−1}) · σ_d / √n,
 *
 * i.e. the normal-theory formula (z_{1−α/2} + z_{power}) σ_d / √n with central t quantiles on n − 1 df, which
 * is slightly conservative for small strata and tends to the normal formula as n grows (Cohen 1988, ch. 2;
 * Webber, Moffat & Zobel 2008, doi:10.1145/1458082.1458158 for IR). Defaults alpha 0.05, power 0.8.
 *
 * @param sdDiff the standard deviation of per-query differences (observed, or expected from a pilot).
 */
export function minimumDetectableEffect(n: number, sdDiff: number, opts: { readonly alpha?: number; readonly power?: number } = {}): number {
  const alpha = opts.alpha ?? 0.05;
  const power = opts.power ?? 0.8;
  if (!Number.isInteger(n) || n < 2) throw new HarnessError(`minimumDetectableEffect: n must be an integer >= 2, got ${n}`);
  if (!(sdDiff >= 0) || !Number.isFinite(sdDiff)) throw new HarnessError(`minimumDetectableEffect: sdDiff must be finite and >= 0, got ${sdDiff}`);
  if (!(alpha > 0 && alpha < 1)) throw new HarnessError(`minimumDetectableEffect: alpha must be in (0, 1), got ${alpha}`);
  if (!(power > 0 && power < 1)) throw new HarnessError(`minimumDetectableEffect: power must be in (0, 1), got ${power}`);
  const df = n - 1;
  return ((studentTQuantile(1 - alpha / 2, df) + studentTQuantile(power, df)) * sdDiff) / Math.sqrt(n);
}

/**
 * `auto` (default): scipy 1.17's rule: `exact` when n <= 50 and no |d| is zero or tied, else `exact` when
 * n <= 13 (scipy enumerates all 2ⁿ sign flips there), else `approx`; `exact`: the exact sign-flip
 * distribution of the statistic; `approx`: the normal approximation.
 */
export type WilcoxonMethod = 'auto' | 'exact' | 'approx';

/**
 * How zero differences are treated (scipy's `zero_method`): `wilcox` drops them before ranking; `pratt` ranks
 * them with the rest and then ignores their ranks (Pratt 1959); `zsplit` ranks them and splits their ranks
 * equally between W+ and W−.
 */
export type WilcoxonZeroMethod = 'wilcox' | 'pratt' | 'zsplit';

export interface WilcoxonOptions {
  /** Default `auto`. */
  readonly method?: WilcoxonMethod;
  /** Default `wilcox`. */
  readonly zeroMethod?: WilcoxonZeroMethod;
  /** Continuity correction of the normal approximation (scipy `correction`); default false. */
  readonly correction?: boolean;
}

export interface WilcoxonResult {
  /** min(W+, W−), the signed-rank sums (with `zsplit`, each includes half the zero ranks). */
  readonly statistic: number;
  /** Two-sided p-value. */
  readonly p: number;
  /** Differences the ranks run over: the non-zero ones under `wilcox`, all of them otherwise. */
  readonly n: number;
  /** The method that produced `p` (`auto` resolved). */
  readonly method: 'exact' | 'approx';
}

const WILCOXON_METHODS: readonly WilcoxonMethod[] = ['auto', 'exact', 'approx'];
const ZERO_METHODS: readonly WilcoxonZeroMethod[] = ['wilcox', 'pratt', 'zsplit'];

/**
 * Wilcoxon signed-rank test of the paired differences d = b − a (Wilcoxon 1945, doi:10.2307/3001968), two-sided,
 * following scipy 1.17 `wilcoxon(b, a, zero_method, correction, method)`:
 *
 * - |d| is ranked with average ranks for exact ties (exact floating equality, as scipy); zeros are dropped
 *   before ranking (`wilcox`) or ranked with the rest (`pratt`, `zsplit`); W+ sums the ranks of d > 0;
 *   statistic T = min(W+, W−).
 * - `exact`: the exact distribution of W+ over the 2ᵏ equally likely sign assignments of the k non-zero
 *   differences, with their actual (possibly tied, half-integer) ranks, by dynamic programming on doubled
 *   ranks; p = min(1, 2·min(P(W+ <= w), P(W+ >= w))). Without ties or zeros this is the classical table;
 *   with them it is the permutation distribution scipy's `auto` enumerates for n <= 13. (scipy's explicit
 *   `method="exact"` instead rounds a tied statistic onto the untied table; we never do.)
 * - `approx`: z = (W+ − μ) / σ with μ = n(n+1)/4, σ² = [n(n+1)(2n+1) − ½ Σ t(t² − 1)] / 24 over tie groups of
 *   size t; under `pratt`, μ and σ² lose the zeros' share (Cureton 1967) and the zeros' tie group; optional
 *   continuity correction z − sign(z)·½/σ; p = 2·(1 − Φ(|z|)).
 *
 * When every difference is zero there is no evidence of a difference: statistic as computed, p = 1.
 *
 * @throws HarnessError when the vectors differ in length, hold non-finite values, are empty, or an option is unknown.
 */
export function wilcoxonSignedRank(a: Vector, b: Vector, opts: WilcoxonOptions = {}): WilcoxonResult {
  const fn = 'wilcoxonSignedRank';
  const method = opts.method ?? 'auto';
  const zeroMethod = opts.zeroMethod ?? 'wilcox';
  if (!WILCOXON_METHODS.includes(method)) throw new HarnessError(`${fn}: unknown method "${String(method)}" (known: ${WILCOXON_METHODS.join(', ')})`);
  if (!ZERO_METHODS.includes(zeroMethod)) throw new HarnessError(`${fn}: unknown zeroMethod "${String(zeroMethod)}" (known: ${ZERO_METHODS.join(', ')})`);
  const all = pairedDiffs(fn, a, b, 1);
  const ranked = zeroMethod === 'wilcox' ? all.filter((x) => x !== 0) : all;
  const n = ranked.length;
  let zeros = 0;
  for (let i = 0; i < all.length; i++) if (all[i] === 0) zeros++;
  const order = Array.from({ length: n }, (_, i) => i).sort((i, j) => Math.abs(ranked[i] as number) - Math.abs(ranked[j] as number));
  // Ranks are kept doubled (2·rank is an integer even for averaged ties) so the exact distribution is over integers.
  const rank2 = new Float64Array(n);
  let tieTerm = 0;
  let hasTies = false;
  for (let start = 0; start < n; ) {
    const v = Math.abs(ranked[order[start] as number] as number);
    let end = start + 1;
    while (end < n && Math.abs(ranked[order[end] as number] as number) === v) end++;
    const size = end - start;
    if (size > 1) {
      hasTies = true;
      // pratt leaves the zeros' own tie group out of the variance correction.
      if (!(zeroMethod === 'pratt' && v === 0)) tieTerm += size * (size * size - 1);
    }
    for (let k = start; k < end; k++) rank2[order[k] as number] = start + 1 + end;
    start = end;
  }
  let wPlus2 = 0;
  let wMinus2 = 0;
  let zero2 = 0;
  const nonZeroRanks2: number[] = [];
  for (let i = 0; i < n; i++) {
    const x = ranked[i] as number;
    const r = rank2[i] as number;
    if (x > 0) wPlus2 += r;
    else if (x < 0) wMinus2 += r;
    else zero2 += r;
    if (x !== 0) nonZeroRanks2.push(r);
  }
  const split = zeroMethod === 'zsplit' ? zero2 / 2 : 0;
  const statistic = Math.min(wPlus2 + split, wMinus2 + split) / 2;
  const resolved: 'exact' | 'approx' =
    method !== 'auto' ? method : all.length > 50 ? 'approx' : !hasTies && zeros === 0 ? 'exact' : all.length <= 13 ? 'exact' : 'approx';
  if (nonZeroRanks2.length === 0) return { statistic, p: 1, n, method: resolved };
  if (resolved === 'exact') return { statistic, p: exactSignedRankP(nonZeroRanks2, wPlus2), n, method: 'exact' };
  let mean = (n * (n + 1)) / 4;
  let v = n * (n + 1) * (2 * n + 1);
  if (zeroMethod === 'pratt') {
    mean -= (zeros * (zeros + 1)) / 4;
    v -= zeros * (zeros + 1) * (2 * zeros + 1);
  }
  const sigma = Math.sqrt((v - tieTerm / 2) / 24);
  let z = ((wPlus2 + split) / 2 - mean) / sigma;
  if (opts.correction === true) z -= (Math.sign(z) * 0.5) / sigma;
  return { statistic, p: Math.min(1, 2 * normalSf(Math.abs(z))), n, method: 'approx' };
}

/**
 * Two-sided p of W+ (doubled: `observed2`) under the sign-flip null: each non-zero difference carries its
 * doubled rank with sign + or − with probability ½. Counts are exact integers up to 2⁵³ and then relative.
 */
function exactSignedRankP(ranks2: readonly number[], observed2: number): number {
  let total = 0;
  for (const r of ranks2) total += r;
  const pmf = new Float64Array(total + 1);
  pmf[0] = 1;
  let top = 0;
  for (const r of ranks2) {
    // In place, top down, so pmf[s] is still the previous step's value when it is added at s + r.
    for (let s = top; s >= 0; s--) pmf[s + r] = (pmf[s + r] as number) + (pmf[s] as number);
    top += r;
    for (let s = 0; s <= top; s++) pmf[s] = (pmf[s] as number) * 0.5;
  }
  let below = 0;
  let above = 0;
  for (let s = 0; s <= total; s++) {
    if (s <= observed2) below += pmf[s] as number;
    if (s >= observed2) above += pmf[s] as number;
  }
  return Math.min(1, 2 * Math.min(below, above));
}
