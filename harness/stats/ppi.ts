/**
 * Prediction-powered inference on a mean (PPI++: A. N. Angelopoulos, J. C. Duchi, T. Zrnic, "PPI++: Efficient
 * prediction-powered inference", arXiv:2311.01453, 2023; classic PPI: Angelopoulos et al., Science 382, 2023).
 * Used on per-query paired differences: the Judge's delta on every Query, corrected by the human-minus-judge
 * rectifier on the hand-labelled Queries. See docs/adr/0037-judge-validation-estimators.md.
 *
 * With Y the human values and f the judge values on the n labelled Queries, f̃ the judge values on the N
 * unlabelled ones:
 *   estimate = λ·mean(f̃) + mean(Y − λf)
 *   se²      = λ²·var₀(f̃)/N + var₀(Y − λf)/n
 *   tuned λ  = cov₀(Y, f) / ((1 + n/N)·var₁(f ∪ f̃)), clipped to [0, 1]
 * where var₀/cov₀ divide by the count (ddof 0) and var₁ by the count − 1 (ddof 1): the conventions of the
 * authors' reference implementation (ppi_py `ppi_mean_ci` and `_calc_lam_glm`), matched so that our numbers
 * and theirs agree to rounding. The interval is estimate ± z₁₋α/₂·se.
 */
import { HarnessError } from '../errors.js';
import { normalQuantile } from './special.js';

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
  /** 'tuned' (PPI++ power tuning, default), or a fixed lambda (1 = classic PPI, 0 = human only). */
  readonly lambda?: 'tuned' | number;
}

export interface PpiResult {
  readonly estimate: number;
  readonly ci: readonly [number, number];
  readonly se: number;
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
  checkValues(where, 'judgeOnUnlabelled', s.judgeOnUnlabelled, 1);
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
  const lambda = o.lambda ?? 'tuned';
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

function ppiAt(s: PpiSample, lambda: number, alpha: number): PpiResult {
  const n = s.human.length;
  const N = s.judgeOnUnlabelled.length;
  const rectifier = s.human.map((y, i) => y - lambda * (s.judgeOnLabelled[i] as number));
  const imputed = s.judgeOnUnlabelled.map((f) => lambda * f);
  const estimate = mean(imputed) + mean(rectifier);
  const se = Math.sqrt(coSum(imputed, imputed) / N / N + coSum(rectifier, rectifier) / n / n);
  const z = normalQuantile(1 - alpha / 2);
  return { estimate, ci: [estimate - z * se, estimate + z * se], se, lambda, n, N };
}

/**
 * PPI++ estimate and normal interval of the mean of the human values over all queries (labelled and not).
 * @throws HarnessError for fewer than 2 labelled or 0 unlabelled queries, a length mismatch between `human`
 * and `judgeOnLabelled`, a non-finite value, alpha outside (0, 1) or lambda outside [0, 1].
 */
export function ppiMean(s: PpiSample, o: PpiOptions): PpiResult {
  checkSample('ppiMean', s);
  const lambda = checkOptions('ppiMean', o);
  return ppiAt(s, lambda === 'tuned' ? tunedLambda(s) : lambda, o.alpha);
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
 * Stratified PPI: one PPI++ estimate per stratum (each its own tuned lambda), combined with weights (default:
 * each stratum's share of all queries, (n_k+N_k)/sum; given weights are normalised to sum 1), variance
 * Σ w_k² se_k², normal interval. The strata are independent samples, so their variances add.
 */
export function stratifiedPpiMean(
  strata: readonly { readonly weight?: number; readonly sample: PpiSample }[],
  o: PpiOptions,
): PpiResult & { readonly strata: readonly PpiResult[] } {
  if (!Array.isArray(strata) || strata.length === 0) throw new HarnessError('stratifiedPpiMean: needs at least one stratum');
  checkOptions('stratifiedPpiMean', o);
  const results = strata.map((st, k) => {
    checkSample(`stratifiedPpiMean: strata[${k}]`, st?.sample);
    return ppiMean(st.sample, o);
  });
  const w = strataWeights(strata);
  let estimate = 0;
  let variance = 0;
  let lambda = 0;
  results.forEach((r, k) => {
    const wk = w[k] as number;
    estimate += wk * r.estimate;
    variance += wk * wk * r.se * r.se;
    lambda += wk * r.lambda;
  });
  const se = Math.sqrt(variance);
  const z = normalQuantile(1 - o.alpha / 2);
  const n = results.reduce((a, r) => a + r.n, 0);
  const N = results.reduce((a, r) => a + r.N, 0);
  return { estimate, ci: [estimate - z * se, estimate + z * se], se, lambda, n, N, strata: results };
}
