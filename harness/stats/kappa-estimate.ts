import { HarnessError } from '../errors.js';
import { cohensKappa, type KappaWeights } from './kappa.js';
import { createRng } from './rng.js';

/** Which kappa the kappa check reads: a weighting of the 0-3 scale, or `binary` (relevant at grade >= 2). */
export type KappaKind = KappaWeights | 'binary';
export const KAPPA_KINDS: readonly KappaKind[] = ['none', 'linear', 'quadratic', 'binary'];

export const GRADES = [0, 1, 2, 3] as const;

export interface KappaEstimate {
  /** Undefined when kappa is undefined (both raters used one label only). */
  readonly kappa: number | undefined;
  /** Percentile bootstrap interval over pairs; undefined with fewer than 2 pairs or no defined resample. */
  readonly ci?: { readonly lo: number; readonly hi: number };
  /** Resamples on which kappa was undefined and that were left out of the interval. */
  readonly undefinedResamples: number;
}

function kappaOf(human: readonly number[], llm: readonly number[], kind: KappaKind): number | undefined {
  if (human.length === 0) return undefined;
  const binary = kind === 'binary';
  const a = binary ? human.map((g) => (g >= 2 ? 1 : 0)) : human;
  const b = binary ? llm.map((g) => (g >= 2 ? 1 : 0)) : llm;
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
export function kappaEstimate(
  human: readonly number[],
  llm: readonly number[],
  kind: KappaKind,
  opts: { resamples: number; seed: number; level: number },
): KappaEstimate {
  const kappa = kappaOf(human, llm, kind);
  const n = human.length;
  if (n < 2 || opts.resamples < 1) return { kappa, undefinedResamples: 0 };
  const rng = createRng(opts.seed, 11);
  const values: number[] = [];
  let undef = 0;
  const h = new Array<number>(n);
  const l = new Array<number>(n);
  for (let r = 0; r < opts.resamples; r++) {
    for (let i = 0; i < n; i++) {
      const j = rng.nextInt(n);
      h[i] = human[j] as number;
      l[i] = llm[j] as number;
    }
    const k = kappaOf(h, l, kind);
    if (k === undefined) undef++;
    else values.push(k);
  }
  if (values.length === 0) return { kappa, undefinedResamples: undef };
  values.sort((a, b) => a - b);
  const alpha = (1 - opts.level) / 2;
  return { kappa, ci: { lo: percentile(values, alpha), hi: percentile(values, 1 - alpha) }, undefinedResamples: undef };
}
