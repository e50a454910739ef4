/**
 * Prediction-powered inference on a mean (classic PPI: Angelopoulos et al., Science 382, 2023; PPI++ power
 * tuning: A. N. Angelopoulos, J. C. Duchi, T. Zrnic, arXiv:2311.01453, 2023). Used on per-query paired
 * differences: the Judge's delta on every Query, corrected by the human-minus-judge rectifier on the
 * hand-labelled Queries. See docs/adr/0037-judge-validation-estimators.md and the addendum of docs/adr/0038.
 *
 * With Y the human values and f the judge values on the n labelled Queries, f̃ the judge values on the N
 * unlabelled ones:
 *   estimate = λ·mean(f̃) + mean(Y − λf)
 *   se²      = A + B,  A = λ²·var₁(f̃)/N,  B = var₁(Y − λf)/n
 *   df       = (A + B)² / (A²/(N − 1) + B²/(n − 1))          (Welch–Satterthwaite)
 *   interval = estimate ± t_{1−α/2, df}·se
 * var₁ divides by the count − 1. With λ fixed this is Welch's interval for the sum of two independent means.
 * The default is λ = 1 (classic PPI): the PPI++ tuned λ (`lambda: 'tuned'`) is estimated on the same few labels
 * as the rectifier, and on skewed per-query deltas (nDCG differences with many zeros) its interval covered 79% at
 * nominal 95% with 10 labels and 94.1% with 60, where λ = 1 covered 95% (the addendum of docs/adr/0038).
 */
import { HarnessError } from '../errors.js';
import { studentTQuantile } from './special.js';

/**
 * Human-labelled queries a stratum needs before the PPI gate may decide on it, and the fewest `harness power`
 * recommends. Below it the interval still computes, but its coverage was not shown: at 10 labels it covered within
 * 0.5 point of 95% and 98.33% on every process simulated but one (docs/adr/0038, addendum).
 */
export const MIN_PPI_LABELS = 10;

export interface PpiSample {
  /** Per labelled query: the value under human labels (e.g. candidate-minus-baseline nDCG@10 difference). */
  readonly human: readonly number[];
  /** The same labelled queries, same order: the value under judge labels. */
  readonly judgeOnLabelled: readonly number[];
  /** The queries without human labels: the value under judge labels. */
  readonly judgeOnUnlabelled: readonly number[];
}

export interface PpiOptions {
  readonly alpha: number;
  /** A fixed lambda (1 = classic PPI, the default; 0 = human only), or 'tuned' (PPI++ power tuning, see the file's head). */
  readonly lambda?: 'tuned' | number;
}

export interface PpiResult {
  readonly estimate: number;
  readonly ci: readonly [number, number];
  readonly se: number;
  /** Welch–Satterthwaite degrees of freedom of the t quantile (n − 1 when se is 0). */
  readonly df: number;
  /** The lambda used. For a stratified result: the weighted mean of the strata's lambdas (each is in `strata`). */
  readonly lambda: number;
  /** Labelled queries. */
  readonly n: number;
  /** Unlabelled queries. */
  readonly N: number;
}

function mean(v: readonly number[]): number {
  let s = 0;
  for (const x of v) s += x;
  return s / v.length;
}

/** Σ (x − x̄)(y − ȳ) over paired vectors. */
function coSum(x: readonly number[], y: readonly number[]): number {
  const mx = mean(x);
  const my = mean(y);
  let s = 0;
  for (let i = 0; i < x.length; i++) s += ((x[i] as number) - mx) * ((y[i] as number) - my);
  return s;
}

function checkValues(where: string, name: string, v: unknown, min: number): asserts v is readonly number[] {
  if (!Array.isArray(v)) throw new HarnessError(`${where}: ${name} must be an array of numbers`);
  if (v.length < min) {
    throw new HarnessError(`${where}: ${name} has ${v.length} value${v.length === 1 ? '' : 's'}; PPI needs at least ${min}`, {
      hint:
        name === 'judgeOnUnlabelled' ? 'PPI corrects judge values on unlabelled queries; with none, use the human values alone' : 'label more queries by hand',
    });
  }
  for (let i = 0; i < v.length; i++) {
    if (!Number.isFinite(v[i])) throw new HarnessError(`${where}: ${name}[${i}] is ${String(v[i])}; every value must be a finite number`);
  }
}

function checkSample(where: string, s: PpiSample): void {
  if (typeof s !== 'object' || s === null) throw new HarnessError(`${where}: the sample must be an object { human, judgeOnLabelled, judgeOnUnlabelled }`);
  checkValues(where, 'human', s.human, 2);
  checkValues(where, 'judgeOnLabelled', s.judgeOnLabelled, 2);
  checkValues(where, 'judgeOnUnlabelled', s.judgeOnUnlabelled, 2);
  if (s.human.length !== s.judgeOnLabelled.length) {
    throw new HarnessError(
      `${where}: human has ${s.human.length} values but judgeOnLabelled has ${s.judgeOnLabelled.length}; they must be the same labelled queries in the same order`,
    );
  }
}

function checkOptions(where: string, o: PpiOptions): 'tuned' | number {
  if (typeof o !== 'object' || o === null || !(o.alpha > 0 && o.alpha < 1)) {
    throw new HarnessError(`${where}: alpha must be in (0, 1), got ${String(o?.alpha)}`);
  }
  const lambda = o.lambda ?? 1;
  if (lambda !== 'tuned' && !(typeof lambda === 'number' && lambda >= 0 && lambda <= 1)) {
    throw new HarnessError(`${where}: lambda must be 'tuned' or a number in [0, 1], got ${String(lambda)}`);
  }
  return lambda;
}

/**
 * PPI++'s variance-minimising lambda for a mean (Angelopoulos, Duchi & Zrnic 2023, the mean case),
 * clipped to [0, 1]. A judge constant over all queries carries no information (its covariance and variance
 * are both 0): lambda is then 0, and any lambda would give the same estimate and interval.
 */
export function tunedLambda(s: PpiSample): number {
  checkSample('tunedLambda', s);
  const n = s.human.length;
  const N = s.judgeOnUnlabelled.length;
  const cov = coSum(s.human, s.judgeOnLabelled) / n;
  const all = [...s.judgeOnLabelled, ...s.judgeOnUnlabelled];
  const varAll = coSum(all, all) / (all.length - 1);
  if (varAll === 0) return 0;
  return Math.min(1, Math.max(0, cov / ((1 + n / N) * varAll)));
}

/** The two variance terms and their degrees of freedom, kept apart so that strata can pool them (Satterthwaite). */
interface Parts {
  readonly a: number;
  readonly b: number;
  readonly n: number;
  readonly N: number;
}

/** Welch–Satterthwaite df of Σ weighted variance terms; with no variance at all, the labelled df n − 1. */
function satterthwaite(parts: readonly (Parts & { readonly w: number })[]): number {
  let total = 0;
  let denom = 0;
  for (const p of parts) {
    const [a, b] = [p.w * p.w * p.a, p.w * p.w * p.b];
    total += a + b;
    denom += (a * a) / (p.N - 1) + (b * b) / (p.n - 1);
  }
  return denom > 0 ? (total * total) / denom : Math.min(...parts.map((p) => p.n)) - 1;
}

function interval(estimate: number, se: number, df: number, alpha: number): [number, number] {
  const t = studentTQuantile(1 - alpha / 2, df);
  return [estimate - t * se, estimate + t * se];
}

function ppiAt(s: PpiSample, lambda: number, alpha: number): PpiResult & { readonly parts: Parts } {
  const n = s.human.length;
  const N = s.judgeOnUnlabelled.length;
  const rectifier = s.human.map((y, i) => y - lambda * (s.judgeOnLabelled[i] as number));
  const imputed = s.judgeOnUnlabelled.map((f) => lambda * f);
  const estimate = mean(imputed) + mean(rectifier);
  const parts = { a: coSum(imputed, imputed) / (N - 1) / N, b: coSum(rectifier, rectifier) / (n - 1) / n, n, N };
  const se = Math.sqrt(parts.a + parts.b);
  const df = satterthwaite([{ ...parts, w: 1 }]);
  return { estimate, ci: interval(estimate, se, df, alpha), se, df, lambda, n, N, parts };
}

/**
 * PPI estimate and t interval of the population mean of the human values, the labelled and unlabelled queries
 * being draws from it.
 * @throws HarnessError for fewer than 2 labelled or 2 unlabelled queries, a length mismatch between `human`
 * and `judgeOnLabelled`, a non-finite value, alpha outside (0, 1) or lambda outside [0, 1].
 */
export function ppiMean(s: PpiSample, o: PpiOptions): PpiResult {
  checkSample('ppiMean', s);
  const lambda = checkOptions('ppiMean', o);
  const { parts: _, ...r } = ppiAt(s, lambda === 'tuned' ? tunedLambda(s) : lambda, o.alpha);
  return r;
}

function strataWeights(strata: readonly { readonly weight?: number; readonly sample: PpiSample }[]): number[] {
  const given = strata.filter((st) => st.weight !== undefined).length;
  if (given !== 0 && given !== strata.length) {
    throw new HarnessError(`stratifiedPpiMean: ${given} of ${strata.length} strata have a weight; give every stratum a weight or none`);
  }
  const raw = strata.map((st, k) => {
    if (st.weight === undefined) return st.sample.human.length + st.sample.judgeOnUnlabelled.length;
    if (!(Number.isFinite(st.weight) && st.weight > 0)) {
      throw new HarnessError(`stratifiedPpiMean: strata[${k}].weight is ${String(st.weight)}; a weight must be a positive finite number`);
    }
    return st.weight;
  });
  const total = raw.reduce((a, b) => a + b, 0);
  return raw.map((w) => w / total);
}

/**
 * Stratified PPI: one PPI estimate per stratum (each its own lambda when tuned), combined with weights (default:
 * each stratum's share of all queries, (n_k+N_k)/sum; given weights are normalised to sum 1), variance
 * Σ w_k² se_k², and a t interval on the Welch–Satterthwaite df of all the strata's variance terms. The strata are
 * independent samples, so their variances add.
 */
export function stratifiedPpiMean(
  strata: readonly { readonly weight?: number; readonly sample: PpiSample }[],
  o: PpiOptions,
): PpiResult & { readonly strata: readonly PpiResult[] } {
  if (!Array.isArray(strata) || strata.length === 0) throw new HarnessError('stratifiedPpiMean: needs at least one stratum');
  const lambda = checkOptions('stratifiedPpiMean', o);
  const results = strata.map((st, k) => {
    checkSample(`stratifiedPpiMean: strata[${k}]`, st?.sample);
    return ppiAt(st.sample, lambda === 'tuned' ? tunedLambda(st.sample) : lambda, o.alpha);
  });
  const w = strataWeights(strata);
  let estimate = 0;
  let variance = 0;
  let lambdaMean = 0;
  results.forEach((r, k) => {
    const wk = w[k] as number;
    estimate += wk * r.estimate;
    variance += wk * wk * r.se * r.se;
    lambdaMean += wk * r.lambda;
  });
  const se = Math.sqrt(variance);
  const df = satterthwaite(results.map((r, k) => ({ ...r.parts, w: w[k] as number })));
  const n = results.reduce((a, r) => a + r.n, 0);
  const N = results.reduce((a, r) => a + r.N, 0);
  const each = results.map(({ parts: _, ...r }) => r);
  return { estimate, ci: interval(estimate, se, df, o.alpha), se, df, lambda: lambdaMean, n, N, strata: each };
}
