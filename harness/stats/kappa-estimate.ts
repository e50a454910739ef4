import { HarnessError } from '../errors.js';
import { cohensKappa, type KappaWeights } from './kappa.js';
import { createRng } from './rng.js';

/**
 * Which kappa the kappa check reads: a weighting of the 0-3 scale, or `binary` (relevant or not, split at the
 * grade the decision's measure first gains from: {@link KappaEstimateOptions.relevantAt}).
 */
export type KappaKind = KappaWeights | 'binary';
export const KAPPA_KINDS: readonly KappaKind[] = ['none', 'linear', 'quadratic', 'binary'];

export const GRADES = [0, 1, 2, 3] as const;

export interface KappaEstimate {
  /** Undefined when kappa is undefined (both raters used one label only). */
  readonly kappa: number | undefined;
  /**
   * Raw agreement: the share of pairs both raters put in one category (the same grade; the same side of
   * `relevantAt` for `binary`); undefined without pairs. Where kappa is undefined it is 0 or 1, and says which.
   */
  readonly agreement: number | undefined;
  /** Percentile bootstrap interval over pairs; undefined with fewer than 2 pairs or no defined resample. */
  readonly ci?: { readonly lo: number; readonly hi: number };
  /** Resamples on which kappa was undefined and that were left out of the interval. */
  readonly undefinedResamples: number;
}

export interface KappaEstimateOptions {
  readonly resamples: number;
  readonly seed: number;
  readonly level: number;
  /** `binary`: a grade at or above it is relevant. Required so no caller binarises at a level of its own guess. */
  readonly relevantAt: number;
}

/** The ratings as the kind compares them: grades, or 1/0 for relevant at `relevantAt` or not. */
function categories(grades: readonly number[], kind: KappaKind, relevantAt: number): readonly number[] {
  return kind === 'binary' ? grades.map((g) => (g >= relevantAt ? 1 : 0)) : grades;
}

function rawAgreement(a: readonly number[], b: readonly number[]): number | undefined {
  return a.length === 0 ? undefined : a.filter((x, i) => x === b[i]).length / a.length;
}

function kappaOf(a: readonly number[], b: readonly number[], kind: KappaKind): number | undefined {
  if (a.length === 0) return undefined;
  const binary = kind === 'binary';
  try {
    return cohensKappa(a, b, { weights: binary ? 'none' : kind, labels: binary ? [0, 1] : [...GRADES] }).kappa;
  } catch (err) {
    if (err instanceof HarnessError && err.message.includes('undefined')) return undefined;
    throw err;
  }
}

/** numpy `percentile` with the default linear method, on an ascending array. */
function percentile(sorted: readonly number[], q: number): number {
  const pos = q * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return (sorted[lo] as number) + ((sorted[hi] as number) - (sorted[lo] as number)) * (pos - lo);
}

/**
 * Kappa with a percentile bootstrap interval over pairs (Efron & Tibshirani 1993, ch. 13): `resamples` draws of
 * n pairs with replacement (xoshiro128**, `seed`, stream 11), kappa on each, the (1 − level)/2 and
 * (1 + level)/2 percentiles. Resamples where kappa is undefined (one label only) are left out and counted.
 */
export function kappaEstimate(human: readonly number[], llm: readonly number[], kind: KappaKind, opts: KappaEstimateOptions): KappaEstimate {
  const a = categories(human, kind, opts.relevantAt);
  const b = categories(llm, kind, opts.relevantAt);
  const kappa = kappaOf(a, b, kind);
  const agreement = rawAgreement(a, b);
  const n = a.length;
  if (n < 2 || opts.resamples < 1) return { kappa, agreement, undefinedResamples: 0 };
  const rng = createRng(opts.seed, 11);
  const values: number[] = [];
  let undef = 0;
  const h = new Array<number>(n);
  const l = new Array<number>(n);
  for (let r = 0; r < opts.resamples; r++) {
    for (let i = 0; i < n; i++) {
      const j = rng.nextInt(n);
      h[i] = a[j] as number;
      l[i] = b[j] as number;
    }
    const k = kappaOf(h, l, kind);
    if (k === undefined) undef++;
    else values.push(k);
  }
  if (values.length === 0) return { kappa, agreement, undefinedResamples: undef };
  values.sort((a, b) => a - b);
  const alpha = (1 - opts.level) / 2;
  return { kappa, agreement, ci: { lo: percentile(values, alpha), hi: percentile(values, 1 - alpha) }, undefinedResamples: undef };
}
