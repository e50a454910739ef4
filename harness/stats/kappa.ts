import { HarnessError } from '../errors.js';
import { checkArray } from './input.js';

export type KappaWeights = 'none' | 'linear' | 'quadratic';
export type Label = number | string;

export interface KappaOptions {
  /** Default `none` (scikit-learn's `weights=None`). */
  readonly weights?: KappaWeights;
  /**
   * The ordered label set; weights use each label's position in it (so ordinal labels must be listed in
   * order). Default: the sorted union of the observed labels (numeric order for numbers).
   */
  readonly labels?: readonly Label[];
}

export interface KappaResult {
  readonly kappa: number;
  /** confusion[i][j] = #{k : a_k = labels[i] and b_k = labels[j]} (rows rater a, columns rater b). */
  readonly confusion: readonly (readonly number[])[];
  /** The label order of the matrix rows and columns. */
  readonly labels: readonly Label[];
  /** Number of paired ratings. */
  readonly n: number;
  /** Observed (weighted) agreement p_o = 1 − Σ w_ij O_ij / (w_max · n). */
  readonly observed: number;
  /** Chance (weighted) agreement p_e = 1 − Σ w_ij E_ij / (w_max · n), E_ij = row_i · col_j / n. */
  readonly expected: number;
}

/**
 * Cohen's kappa between two raters over the same items, with scikit-learn `cohen_kappa_score` conventions
 * (Cohen 1960, doi:10.1177/001316446002000104; weighted: Cohen 1968, doi:10.1037/h0026256):
 *
 *   κ = 1 − Σ w_ij O_ij / Σ w_ij E_ij = (p_o − p_e) / (1 − p_e),
 *
 * with O the confusion matrix, E_ij = (row total i)(column total j)/n, and disagreement weights on label
 * positions: none w_ij = [i ≠ j], linear |i − j|, quadratic (i − j)².
 *
 * @throws HarnessError when the lists differ in length or are empty, a rating is not in `labels` (scikit-learn
 * silently drops it), or κ is undefined because chance disagreement is 0 (both raters used one label only).
 */
export function cohensKappa(a: readonly Label[], b: readonly Label[], opts: KappaOptions = {}): KappaResult {
  checkArray('cohensKappa', 'a', a, 'ratings (numbers or strings), one per item');
  checkArray('cohensKappa', 'b', b, 'ratings (numbers or strings), one per item, in the order of a');
  if (a.length !== b.length)
    throw new HarnessError(`cohensKappa: the rating lists differ in length (a: ${a.length}, b: ${b.length})`, {
      hint: 'align both raters on the same (queryId, docId) pairs first',
    });
  const n = a.length;
  if (n === 0) throw new HarnessError('cohensKappa: no paired ratings');
  const labels = opts.labels ?? defaultLabels(a, b);
  const index = new Map<Label, number>();
  labels.forEach((l, i) => {
    if (index.has(l)) throw new HarnessError(`cohensKappa: label ${JSON.stringify(l)} is listed twice in labels`);
    index.set(l, i);
  });
  const k = labels.length;
  const confusion = Array.from({ length: k }, () => new Array<number>(k).fill(0));
  for (let t = 0; t < n; t++) {
    const i = index.get(a[t] as Label);
    const j = index.get(b[t] as Label);
    if (i === undefined || j === undefined) {
      const [who, v] = i === undefined ? ['a', a[t]] : ['b', b[t]];
      throw new HarnessError(`cohensKappa: rating ${who}[${t}] = ${JSON.stringify(v)} is not one of the labels ${JSON.stringify(labels)}`);
    }
    const row = confusion[i] as number[];
    row[j] = (row[j] as number) + 1;
  }
  const rows = confusion.map((r) => r.reduce((s, x) => s + x, 0));
  const cols = labels.map((_, j) => confusion.reduce((s, r) => s + (r[j] as number), 0));
  const weights = opts.weights ?? 'none';
  const weight = (i: number, j: number): number => {
    if (weights === 'none') return i === j ? 0 : 1;
    if (weights === 'linear') return Math.abs(i - j);
    if (weights === 'quadratic') return (i - j) * (i - j);
    throw new HarnessError(`cohensKappa: unknown weights "${String(weights)}" (known: none, linear, quadratic)`);
  };
  let wObserved = 0;
  let wExpected = 0;
  let wMax = 0;
  for (let i = 0; i < k; i++) {
    for (let j = 0; j < k; j++) {
      const w = weight(i, j);
      wMax = Math.max(wMax, w);
      wObserved += w * ((confusion[i] as number[])[j] as number);
      wExpected += (w * (rows[i] as number) * (cols[j] as number)) / n;
    }
  }
  if (!(wExpected > 0)) {
    throw new HarnessError('cohensKappa: kappa is undefined: chance disagreement is 0 (both raters used a single label)', {
      hint: 'report raw agreement instead, or judge a sample with more than one label',
    });
  }
  return {
    kappa: 1 - wObserved / wExpected,
    confusion,
    labels,
    n,
    observed: 1 - wObserved / (wMax * n),
    expected: 1 - wExpected / (wMax * n),
  };
}

function defaultLabels(a: readonly Label[], b: readonly Label[]): Label[] {
  const all = [...new Set<Label>([...a, ...b])];
  if (all.every((l) => typeof l === 'number')) return (all as number[]).sort((x, y) => x - y);
  if (all.every((l) => typeof l === 'string')) return (all as string[]).sort();
  throw new HarnessError('cohensKappa: ratings mix numbers and strings; pass labels explicitly');
}
