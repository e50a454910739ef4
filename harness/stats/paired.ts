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
export function minimumDetectableEffect(
  n: number,
  sdDiff: number,
  opts: { readonly alpha?: number; readonly power?: number } = {},
): number {
  const alpha = opts.alpha ?? 0.05;
  const power = opts.power ?? 0.8;
  if (!Number.isInteger(n) || n < 2) throw new HarnessError(`minimumDetectableEffect: n must be an integer >= 2, got ${n}`);
  if (!(sdDiff >= 0) || !Number.isFinite(sdDiff)) throw new HarnessError(`minimumDetectableEffect: sdDiff must be finite and >= 0, got ${sdDiff}`);
  if (!(alpha > 0 && alpha < 1)) throw new HarnessError(`minimumDetectableEffect: alpha must be in (0, 1), got ${alpha}`);
  if (!(power > 0 && power < 1)) throw new HarnessError(`minimumDetectableEffect: power must be in (0, 1), got ${power}`);
  const df = n - 1;
  return ((studentTQuantile(1 - alpha / 2, df) + studentTQuantile(power, df)) * sdDiff) / Math.sqrt(n);
}

export type WilcoxonMethod = 'exact' | 'approx';

export interface WilcoxonResult {
  /** min(W+, W−): the smaller of the signed-rank sums over non-zero differences. */
  readonly statistic: number;
  /** Two-sided p-value. */
  readonly p: number;
  /** Number of non-zero differences (the effective sample size). */
  readonly n: number;
}

/**
 * Wilcoxon signed-rank test of the paired differences d = b − a (Wilcoxon 1945, doi:10.2307/3001968), with
 * scipy's conventions `wilcoxon(b, a, zero_method="wilcox", correction=False)`:
 *
 * - zero differences are dropped (n counts the rest); |d| is ranked with average ranks for exact ties
 *   (exact floating equality, as scipy);
 * - statistic T = min(W+, W−);
 * - `approx`: z = (T − n(n+1)/4) / σ with σ² = [n(n+1)(2n+1) − ½ Σ t(t² − 1)] / 24 (tie-corrected, t the size of
 *   each tie group), no continuity correction, p = 2·(1 − Φ(|z|));
 * - `exact`: the exact null distribution of W+ (all 2ⁿ sign assignments, by dynamic programming),
 *   p = min(1, 2·P(W ≤ T)). Valid only without zero or tied |d|: then it throws rather than silently
 *   switching method, because the exact distribution assumes distinct integer ranks.
 *
 * When every difference is zero (n = 0) there is no evidence of a difference: statistic 0, p = 1.
 */
export function wilcoxonSignedRank(a: Vector, b: Vector, opts: { readonly method: WilcoxonMethod }): WilcoxonResult {
  const all = pairedDiffs('wilcoxonSignedRank', a, b, 1);
  const nonZero: number[] = [];
  for (let i = 0; i < all.length; i++) if (all[i] !== 0) nonZero.push(all[i] as number);
  const n = nonZero.length;
  const zeros = all.length - n;
  if (n === 0) {
    if (opts.method === 'exact') throw exactInvalid(`all ${all.length} differences are zero`);
    return { statistic: 0, p: 1, n: 0 };
  }
  const order = nonZero.map((_, i) => i).sort((i, j) => Math.abs(nonZero[i] as number) - Math.abs(nonZero[j] as number));
  let wPlus = 0;
  let wMinus = 0;
  let tieTerm = 0;
  for (let start = 0; start < n; ) {
    const v = Math.abs(nonZero[order[start] as number] as number);
    let end = start + 1;
    while (end < n && Math.abs(nonZero[order[end] as number] as number) === v) end++;
    const size = end - start;
    const rank = (start + 1 + end) / 2;
    if (size > 1) tieTerm += size * (size * size - 1);
    for (let k = start; k < end; k++) {
      if ((nonZero[order[k] as number] as number) > 0) wPlus += rank;
      else wMinus += rank;
    }
    start = end;
  }
  const statistic = Math.min(wPlus, wMinus);
  if (opts.method === 'exact') {
    if (zeros > 0) throw exactInvalid(`${zeros} of ${all.length} differences are zero`);
    if (tieTerm > 0) throw exactInvalid('some |differences| are tied');
    return { statistic, p: Math.min(1, 2 * signedRankCdf(n, statistic)), n };
  }
  const mean = (n * (n + 1)) / 4;
  const sigma = Math.sqrt((n * (n + 1) * (2 * n + 1) - 0.5 * tieTerm) / 24);
  const z = (statistic - mean) / sigma;
  return { statistic, p: Math.min(1, 2 * normalSf(Math.abs(z))), n };
}

function exactInvalid(why: string): HarnessError {
  return new HarnessError(`wilcoxonSignedRank: the exact method needs distinct non-zero differences, but ${why}`, {
    hint: "use { method: 'approx' } (tie-corrected normal approximation), or randomizationTest for an exact test",
  });
}

/** P(W+ ≤ t) under H0 for n distinct ranks: the subset-sum distribution of {1..n}, each subset weight 2⁻ⁿ. */
function signedRankCdf(n: number, t: number): number {
  const max = (n * (n + 1)) / 2;
  let pmf = new Float64Array(max + 1);
  pmf[0] = 1;
  let top = 0;
  for (let k = 1; k <= n; k++) {
    const next = new Float64Array(max + 1);
    for (let s = 0; s <= top; s++) {
      const h = (pmf[s] as number) * 0.5;
      next[s] = (next[s] as number) + h;
      next[s + k] = (next[s + k] as number) + h;
    }
    top += k;
    pmf = next;
  }
  let cdf = 0;
  for (let s = 0; s <= Math.floor(t); s++) cdf += pmf[s] as number;
  return cdf;
}
