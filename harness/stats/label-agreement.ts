/**
 * Agreement between labellers beside Cohen's kappa (kappa.ts): Krippendorff's alpha with the ordinal metric
 * (any number of coders, missing labels allowed) and Gwet's AC1 (two raters, nominal). Undefined cases throw
 * a HarnessError, as cohensKappa does, rather than return NaN for a report to print. See
 * docs/adr/0037-judge-validation-estimators.md.
 */
import { HarnessError } from '../errors.js';

function checkUnits(units: readonly (readonly (number | null)[])[]): void {
  const fn = 'krippendorffAlphaOrdinal';
  if (!Array.isArray(units)) throw new HarnessError(`${fn}: units must be an array of units, each an array of grades (one per coder, null when missing)`);
  const coders = units[0]?.length ?? 0;
  units.forEach((unit, u) => {
    if (!Array.isArray(unit) || unit.length !== coders) {
      throw new HarnessError(
        `${fn}: units[${u}] has ${Array.isArray(unit) ? unit.length : 'no'} grades but units[0] has ${coders}; give every unit one entry per coder (null when missing)`,
      );
    }
    unit.forEach((g, c) => {
      if (g !== null && !Number.isFinite(g))
        throw new HarnessError(`${fn}: units[${u}][${c}] is ${String(g)}; a grade must be a finite number, or null when the coder did not grade the unit`);
    });
  });
}

/**
 * Krippendorff's alpha for ordinal data (two or more coders, missing values allowed: null). units[u][c] =
 * coder c's grade of unit u. Computed from the coincidence matrix (K. Krippendorff, "Computing Krippendorff's
 * Alpha-Reliability", 2011): o_ck = Σ_u (pairs of values c, k in unit u) / (m_u − 1) over units with m_u ≥ 2
 * grades; n_c = Σ_k o_ck; ordinal δ²_ck = (Σ_{g=c..k} n_g − (n_c + n_k)/2)², the grades ranked by value;
 * α = 1 − (n − 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck. Units with fewer than 2 grades are not pairable and count
 * for nothing.
 * @throws HarnessError when no unit has 2 grades (nothing to compare), when every pairable grade is the same
 * (no variation: α is 0/0), or for ragged units or a non-finite grade.
 */
export function krippendorffAlphaOrdinal(units: readonly (readonly (number | null)[])[]): number {
  checkUnits(units);
  const pairable = units.map((unit) => unit.filter((g): g is number => g !== null)).filter((values) => values.length >= 2);
  if (pairable.length === 0) {
    throw new HarnessError('krippendorffAlphaOrdinal: no unit has grades from 2 or more coders, so there is no pair to compare', {
      hint: 'alpha needs units graded by at least two coders',
    });
  }
  const values = [...new Set(pairable.flat())].sort((a, b) => a - b);
  if (values.length < 2) {
    throw new HarnessError(`krippendorffAlphaOrdinal: every pairable grade is ${values[0]}; alpha is undefined without variation (expected disagreement is 0)`);
  }
  const rank = new Map(values.map((v, i) => [v, i]));
  const V = values.length;
  const o = Array.from({ length: V }, () => new Float64Array(V));
  for (const unit of pairable) {
    const w = 1 / (unit.length - 1);
    const ranks = unit.map((g) => rank.get(g) as number);
    ranks.forEach((c, i) => {
      const row = o[c] as Float64Array;
      ranks.forEach((k, j) => {
        if (i !== j) row[k] = (row[k] as number) + w;
      });
    });
  }
  const nc = o.map((row) => row.reduce((a, b) => a + b, 0));
  const n = nc.reduce((a, b) => a + b, 0);
  // cumulative[g] = n_0 + … + n_{g-1}, so Σ_{g=c..k} n_g = cumulative[k+1] − cumulative[c].
  const cumulative = [0];
  for (const x of nc) cumulative.push((cumulative.at(-1) as number) + x);
  let observed = 0;
  let expected = 0;
  for (let c = 0; c < V; c++) {
    for (let k = c + 1; k < V; k++) {
      const d2 = ((cumulative[k + 1] as number) - (cumulative[c] as number) - ((nc[c] as number) + (nc[k] as number)) / 2) ** 2;
      // Both (c, k) and (k, c): the matrices are symmetric and δ² is 0 on the diagonal.
      observed += 2 * ((o[c] as Float64Array)[k] as number) * d2;
      expected += 2 * (nc[c] as number) * (nc[k] as number) * d2;
    }
  }
  return 1 - ((n - 1) * observed) / expected;
}

/**
 * Gwet's AC1 for two raters, nominal categories (K. L. Gwet, "Computing inter-rater reliability and its
 * variance in the presence of high agreement", Br. J. Math. Stat. Psychol. 61, 2008): p_a the share of items
 * both rate alike; π_k = (share of a's ratings in k + share of b's) / 2; p_e = Σ_k π_k(1 − π_k) / (q − 1);
 * AC1 = (p_a − p_e) / (1 − p_e). The q categories are those either rater used.
 * @throws HarnessError for lists of different lengths, no items, a non-finite rating, or a single category
 * (q = 1: p_e is 0/0).
 */
export function gwetAC1(a: readonly number[], b: readonly number[]): number {
  const fn = 'gwetAC1';
  if (!Array.isArray(a) || !Array.isArray(b)) throw new HarnessError(`${fn}: a and b must be arrays of ratings, one per item`);
  if (a.length !== b.length) throw new HarnessError(`${fn}: a has ${a.length} ratings but b has ${b.length}; both must rate the same items in the same order`);
  if (a.length === 0) throw new HarnessError(`${fn}: no rated items`);
  for (const [v, name] of [
    [a, 'a'],
    [b, 'b'],
  ] as const) {
    v.forEach((x, i) => {
      if (!Number.isFinite(x)) throw new HarnessError(`${fn}: ${name}[${i}] is ${String(x)}; a rating must be a finite number`);
    });
  }
  const n = a.length;
  const share = new Map<number, number>();
  let agree = 0;
  for (let i = 0; i < n; i++) {
    const x = a[i] as number;
    const y = b[i] as number;
    if (x === y) agree++;
    share.set(x, (share.get(x) ?? 0) + 1 / (2 * n));
    share.set(y, (share.get(y) ?? 0) + 1 / (2 * n));
  }
  const q = share.size;
  if (q < 2) throw new HarnessError(`${fn}: both raters used only the category ${a[0]}; AC1 is undefined with a single category (chance agreement is 0/0)`);
  let pe = 0;
  for (const pi of share.values()) pe += pi * (1 - pi);
  pe /= q - 1;
  const pa = agree / n;
  return (pa - pe) / (1 - pe);
}
