import { HarnessError } from '../errors.js';
import { checkVector } from './input.js';

export type AdjustMethod = 'holm' | 'bonferroni' | 'bh' | 'by' | 'hommel';

/** The adjustment methods, for option lists and error messages. */
export const ADJUST_METHODS = ['holm', 'bonferroni', 'bh', 'by', 'hommel'] as const satisfies readonly AdjustMethod[];

/**
 * Multiple-comparison adjusted p-values, in input order, each capped at 1, following statsmodels
 * `multipletests(p, method=…)` (reject H_i at level α iff adjusted p_i <= α). With p_(1) <= … <= p_(m):
 *
 * - `bonferroni` (family-wise): min(1, m·p_i).
 * - `holm` (family-wise, step-down; Holm 1979, https://www.jstor.org/stable/4615733):
 *   p̃_(i) = max_{j<=i} min(1, (m − j + 1)·p_(j)). Valid under any dependence, uniformly more powerful than
 *   Bonferroni: the default family-wise correction here.
 * - `hommel` (family-wise; Hommel 1988, doi:10.1093/biomet/75.2.383): statsmodels' closed-testing algorithm;
 *   more powerful than Holm, valid under independence or positive dependence (Simes inequality).
 * - `bh` (false discovery rate; Benjamini & Hochberg 1995, doi:10.1111/j.2517-6161.1995.tb02031.x):
 *   p̃_(i) = min_{j>=i} min(1, m·p_(j)/j); valid under independence or positive regression dependence.
 * - `by` (FDR under any dependence; Benjamini & Yekutieli 2001, doi:10.1214/aos/1013699998): BH times
 *   c(m) = Σ_{k=1..m} 1/k.
 *
 * Ties in p keep their input order (stable sort), which does not change any adjusted value. Default: `holm`.
 *
 * @throws HarnessError on an empty list or a p outside [0, 1] (including NaN).
 */
export function adjustPValues(p: ArrayLike<number>, method: AdjustMethod = 'holm'): Float64Array {
  checkVector('adjustPValues', 'p', p);
  const m = p.length;
  if (m === 0) throw new HarnessError('adjustPValues: the family is empty; there is nothing to adjust');
  for (let i = 0; i < m; i++) {
    const v = p[i] as number;
    if (!(v >= 0 && v <= 1)) throw new HarnessError(`adjustPValues: p[${i}] is ${v}; p-values must lie in [0, 1]`);
  }
  if (!(ADJUST_METHODS as readonly string[]).includes(method)) {
    throw new HarnessError(`adjustPValues: unknown method "${String(method)}" (known: ${ADJUST_METHODS.join(', ')})`);
  }
  const order = Array.from({ length: m }, (_, i) => i).sort((i, j) => (p[i] as number) - (p[j] as number));
  const sorted = Float64Array.from(order, (i) => p[i] as number);
  const adj = new Float64Array(m);
  switch (method) {
    case 'bonferroni':
      for (let i = 0; i < m; i++) adj[i] = (sorted[i] as number) * m;
      break;
    case 'holm': {
      let running = 0;
      for (let i = 0; i < m; i++) {
        running = Math.max(running, (sorted[i] as number) * (m - i));
        adj[i] = running;
      }
      break;
    }
    case 'bh':
    case 'by': {
      let c = 1;
      if (method === 'by') {
        c = 0;
        for (let k = 1; k <= m; k++) c += 1 / k;
      }
      let running = Infinity;
      for (let i = m - 1; i >= 0; i--) {
        running = Math.min(running, ((sorted[i] as number) * m * c) / (i + 1));
        adj[i] = running;
      }
      break;
    }
    case 'hommel':
      hommelSorted(sorted, adj);
      break;
  }
  const out = new Float64Array(m);
  for (let k = 0; k < m; k++) out[order[k] as number] = Math.min(1, adj[k] as number);
  return out;
}

/** statsmodels' Hommel loop on ascending p; O(m²). */
function hommelSorted(p: Float64Array, a: Float64Array): void {
  const m = p.length;
  a.set(p);
  for (let size = m; size > 1; size--) {
    // cim = min over the `size` largest p of size·p_(k)/rank within that tail.
    let cim = Infinity;
    for (let k = 1; k <= size; k++) cim = Math.min(cim, (size * (p[m - size + k - 1] as number)) / k);
    for (let i = m - size; i < m; i++) a[i] = Math.max(a[i] as number, cim);
    for (let i = 0; i < m - size; i++) a[i] = Math.max(a[i] as number, Math.min(size * (p[i] as number), cim));
  }
}
