import { HarnessError } from '../errors.js';
import { minimumDetectableEffect } from './paired.js';
import { MIN_PPI_LABELS } from './ppi.js';
import { normalQuantile } from './special.js';

/**
 * Planning a study before it runs: how many queries a stratum needs to detect a difference, and how many
 * human-labelled queries a prediction-powered interval needs to reach a width. Pure functions; the formulas
 * and their checks are in docs/adr/0039-power-planning-equivalence-permutations.md.
 */

/** Corrections whose first step compares the smallest p with a threshold (see {@link firstThreshold}). */
export type PlanCorrection = 'holm' | 'bonferroni' | 'hommel' | 'bh' | 'by' | 'none';

/**
 * The threshold the smallest p of a family of `m` tests must pass, which is what one effect alone has to
 * clear: alpha/m for Holm, Bonferroni and Hommel (their first step) and for Benjamini-Hochberg (its step for
 * one discovery among m, p_(1) <= alpha·1/m); alpha/(m·H_m) for Benjamini-Yekutieli (H_m = 1 + 1/2 + ... +
 * 1/m); alpha itself without correction. BH and BY pass more when many effects are real at once; planning
 * for one effect is the conservative reading.
 */
export function firstThreshold(alpha: number, m: number, correction: PlanCorrection): number {
  if (!(alpha > 0 && alpha < 1)) throw new HarnessError(`firstThreshold: alpha must be in (0, 1), got ${alpha}`);
  if (!Number.isInteger(m) || m < 1) throw new HarnessError(`firstThreshold: m must be an integer >= 1, got ${m}`);
  if (correction === 'none') return alpha;
  if (correction !== 'by') return alpha / m;
  let h = 0;
  for (let k = 1; k <= m; k++) h += 1 / k;
  return alpha / (m * h);
}

/** `t`: the report's MDE formula (t quantiles on n − 1 df); `normal`: the same with normal quantiles. */
export type PowerApprox = 't' | 'normal';

export interface QueriesNeededOptions {
  /** Two-sided level the test is held to (the corrected threshold). */
  readonly alpha: number;
  readonly power: number;
  /** Default `t`, the formula of the report's MDE. */
  readonly approx?: PowerApprox;
}

/** Largest sample size searched; beyond it the plan is not a plan. */
const MAX_QUERIES = 1e9;

function checkPositive(name: string, fn: string, x: number): void {
  if (!(x > 0) || !Number.isFinite(x)) throw new HarnessError(`${fn}: ${name} must be a finite number > 0, got ${x}`);
}

/**
 * Queries a stratum needs so that a two-sided paired test at level `alpha` detects a true mean difference
 * `delta` with probability `power`, for per-query differences with standard deviation `sd`: the smallest
 * n >= 2 whose {@link minimumDetectableEffect} is at most `delta`, i.e. the smallest n with
 *
 *   (t_{1−α/2, n−1} + t_{power, n−1}) · sd / √n <= delta
 *
 * (Dupont & Plummer 1990, Controlled Clinical Trials 11:116, the formula of their PS program and of StatsDirect's
 * paired t sample size), so a stratum of the size returned shows an MDE of at most `delta` in the report.
 * With `approx: 'normal'` the normal-theory n = ⌈((z_{1−α/2} + z_{power}) · sd / delta)²⌉ (Chow, Shao &
 * Wang 2008, Sample Size Calculations in Clinical Research, sec. 3.1), at least 2.
 */
export function queriesNeeded(sd: number, delta: number, opts: QueriesNeededOptions): number {
  const fn = 'queriesNeeded';
  checkPositive('delta', fn, delta);
  if (!(sd >= 0) || !Number.isFinite(sd)) throw new HarnessError(`${fn}: sd must be finite and >= 0, got ${sd}`);
  const { alpha, power } = opts;
  if (!(alpha > 0 && alpha < 1)) throw new HarnessError(`${fn}: alpha must be in (0, 1), got ${alpha}`);
  if (!(power > 0 && power < 1)) throw new HarnessError(`${fn}: power must be in (0, 1), got ${power}`);
  const zSum = normalQuantile(1 - alpha / 2) + normalQuantile(power);
  const normal = Math.max(2, Math.ceil(((zSum * sd) / delta) ** 2 - 1e-9));
  if (normal > MAX_QUERIES) throw new HarnessError(`${fn}: more than ${MAX_QUERIES} queries needed for sd ${sd}, delta ${delta}`);
  if ((opts.approx ?? 't') === 'normal') return normal;
  const mde = (n: number) => minimumDetectableEffect(n, sd, { alpha, power });
  // t quantiles exceed normal ones, so the t answer is at least the normal one: walk up from it, doubling
  // the step, then bisect back to the smallest n that is enough.
  let lo = normal - 1;
  let hi = normal;
  let step = 1;
  while (mde(hi) > delta) {
    lo = hi;
    hi += step;
    step *= 2;
    if (hi > MAX_QUERIES) throw new HarnessError(`${fn}: more than ${MAX_QUERIES} queries needed for sd ${sd}, delta ${delta}`);
  }
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (mde(mid) <= delta) hi = mid;
    else lo = mid;
  }
  return Math.max(2, hi);
}

export interface PpiVariance {
  /** The power-tuning parameter lambda that minimises the variance. */
  readonly lambda: number;
  /** The estimator's variance se² at that lambda. */
  readonly variance: number;
}

/**
 * Variance of the PPI++ estimate of a mean difference from `labelled` human-labelled queries and `judged`
 * judge-labelled ones (Angelopoulos, Duchi & Zrnic 2023, "PPI++: Efficient Prediction-Powered Inference",
 * arXiv:2311.01453, eq. for the mean):
 *
 *   se²(λ) = λ² σ_f² / N + Var(Y − λ f) / n = λ² σ_f² / N + (σ_Y² − 2λ ρ σ_Y σ_f + λ² σ_f²) / n,
 *
 * with f the judge's per-query delta, Y the human one, ρ their correlation. It is a quadratic in λ, least at
 * λ* = ρ σ_Y / (σ_f (1 + n/N)), where se² = (σ_Y² / n) · (1 − ρ² N / (N + n)).
 */
export function ppiVariance(p: { sdHuman: number; sdJudge: number; rho: number; labelled: number; judged: number }): PpiVariance {
  const { sdHuman: sy, sdJudge: sf, rho, labelled: n, judged: N } = p;
  if (sf === 0) return { lambda: 0, variance: (sy * sy) / n };
  const lambda = (rho * sy) / (sf * (1 + n / N));
  return { lambda, variance: ((sy * sy) / n) * (1 - (rho * rho * N) / (N + n)) };
}

export interface LabelsNeededInput {
  /** Standard deviation of the judge's per-query delta in the stratum. */
  readonly sdJudge: number;
  /** Of the human per-query delta; default `sdJudge` (the judge's spread stands in for the humans'). */
  readonly sdHuman?: number;
  /** Correlation between the judge's and the humans' per-query delta. */
  readonly rho: number;
  /** Half-width wanted for the interval. */
  readonly halfWidth: number;
  /** Two-sided level of the interval is 1 − alpha. */
  readonly alpha: number;
  /** Queries the judge labels in the stratum (N). */
  readonly judged: number;
}

/**
 * Human-labelled queries n a stratum needs so that the PPI++ interval z_{1−α/2} · se (tuned λ, see
 * {@link ppiVariance}) has at most `halfWidth`. With s = halfWidth / z_{1−α/2}, σ = σ_Y and r = ρ², the
 * condition (σ²/n)(1 − rN/(N + n)) <= s² is, multiplied out, the quadratic
 *
 *   s² n² + (s² N − σ²) n − σ² (1 − r) N >= 0,
 *
 * whose positive root, rounded up, is the answer: n = ⌈(σ² − s²N + √((s²N − σ²)² + 4 s² σ² (1 − r) N)) / (2 s²)⌉.
 * As N grows it tends to σ²(1 − ρ²)/s²: a judge that correlates ρ with the humans saves a share ρ² of the
 * labels a human-only interval would need. The answer is at least MIN_PPI_LABELS, the floor below which the PPI
 * gate does not decide. `exceedsJudged` says when n > N: the judge's queries alone cannot carry the interval, and
 * more queries (not only more labels) are needed.
 */
export function labelsNeeded(p: LabelsNeededInput): { labels: number; exceedsJudged: boolean } {
  const need = labelsForWidth(p);
  // Below the floor the PPI gate does not decide (docs/adr/0038, addendum), so no plan may recommend fewer.
  const labels = Math.max(need, MIN_PPI_LABELS);
  return { labels, exceedsJudged: labels > p.judged };
}

function labelsForWidth(p: LabelsNeededInput): number {
  const fn = 'labelsNeeded';
  checkPositive('halfWidth', fn, p.halfWidth);
  if (!(p.rho >= -1 && p.rho <= 1)) throw new HarnessError(`${fn}: rho must be in [-1, 1], got ${p.rho}`);
  if (!(p.alpha > 0 && p.alpha < 1)) throw new HarnessError(`${fn}: alpha must be in (0, 1), got ${p.alpha}`);
  if (!Number.isInteger(p.judged) || p.judged < 1) throw new HarnessError(`${fn}: judged must be an integer >= 1, got ${p.judged}`);
  const sigma = p.sdHuman ?? p.sdJudge;
  if (!(sigma >= 0) || !Number.isFinite(sigma) || !(p.sdJudge >= 0)) throw new HarnessError(`${fn}: standard deviations must be finite and >= 0`);
  const s2 = (p.halfWidth / normalQuantile(1 - p.alpha / 2)) ** 2;
  const v = sigma * sigma;
  const N = p.judged;
  const b = s2 * N - v;
  const root = (-b + Math.sqrt(b * b + 4 * s2 * v * (1 - p.rho * p.rho) * N)) / (2 * s2);
  // The root can land a rounding error above an integer that is already enough.
  let labels = Math.max(1, Math.ceil(root - 1e-9));
  const enough = (n: number) => ppiVariance({ sdHuman: sigma, sdJudge: p.sdJudge, rho: p.rho, labelled: n, judged: N }).variance <= s2 * (1 + 1e-12);
  while (!enough(labels)) labels++;
  while (labels > 1 && enough(labels - 1)) labels--;
  return labels;
}

/**
 * Pearson's correlation of two equally long samples (NaN when either is constant or shorter than 2): the
 * judge-human correlation a PPI label plan reads from a pilot's human-labelled queries.
 */
export function pearsonCorrelation(x: readonly number[], y: readonly number[]): number {
  const n = x.length;
  if (n !== y.length) throw new RangeError(`pearsonCorrelation: ${n} values against ${y.length}`);
  if (n < 2) return Number.NaN;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += x[i] as number;
    my += y[i] as number;
  }
  mx /= n;
  my /= n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = (x[i] as number) - mx;
    const dy = (y[i] as number) - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  return sxx === 0 || syy === 0 ? Number.NaN : sxy / Math.sqrt(sxx * syy);
}
