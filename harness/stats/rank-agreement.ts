/**
 * Agreement between two rankings of the same Systems (under human and under Judge labels): Kendall's tau-b
 * and Yilmaz, Aslam & Robertson's tau_AP, with a bootstrap interval over Queries. O(S²) in the number of
 * Systems, which is small. See docs/adr/0037-judge-validation-estimators.md.
 */
import { HarnessError } from '../errors.js';
import { createRng } from './rng.js';

function checkScores(fn: string, a: readonly number[], b: readonly number[], names: [string, string]): void {
  for (const [v, name] of [
    [a, names[0]],
    [b, names[1]],
  ] as const) {
    if (!Array.isArray(v)) throw new HarnessError(`${fn}: ${name} must be an array of scores, one per system`);
    v.forEach((x, i) => {
      if (!Number.isFinite(x)) throw new HarnessError(`${fn}: ${name}[${i}] is ${String(x)}; every score must be a finite number`);
    });
  }
  if (a.length !== b.length) {
    throw new HarnessError(`${fn}: ${names[0]} has ${a.length} systems but ${names[1]} has ${b.length}; both must score the same systems in the same order`);
  }
  if (a.length < 2) throw new HarnessError(`${fn}: needs at least 2 systems to rank, got ${a.length}`);
}

/**
 * Kendall's tau-b between two score vectors over the same systems (ties handled as scipy.stats.kendalltau,
 * variant 'b'): (concordant − discordant) / sqrt((pairs − pairs tied in a)(pairs − pairs tied in b)). NaN when
 * either vector is constant (the denominator is 0), as scipy returns.
 * @throws HarnessError for a length mismatch, fewer than 2 systems or a non-finite score.
 */
export function kendallTau(a: readonly number[], b: readonly number[]): number {
  checkScores('kendallTau', a, b, ['a', 'b']);
  let concordant = 0;
  let discordant = 0;
  let tiedA = 0;
  let tiedB = 0;
  for (let i = 0; i < a.length; i++) {
    for (let j = i + 1; j < a.length; j++) {
      const sa = Math.sign((a[i] as number) - (a[j] as number));
      const sb = Math.sign((b[i] as number) - (b[j] as number));
      if (sa === 0) tiedA++;
      if (sb === 0) tiedB++;
      if (sa * sb > 0) concordant++;
      else if (sa * sb < 0) discordant++;
    }
  }
  const pairs = (a.length * (a.length - 1)) / 2;
  const denominator = Math.sqrt((pairs - tiedA) * (pairs - tiedB));
  return denominator === 0 ? Number.NaN : (concordant - discordant) / denominator;
}

/**
 * Credit for ranking `u` above `x` when the reference says otherwise or nothing: a pair the reference orders
 * strictly is right or wrong; a pair both tie is right; a pair only the reference ties earns 1/2, the chance a
 * random break of the reference's tie would agree.
 */
function credit(reference: readonly number[], other: readonly number[], u: number, x: number): number {
  const r = (reference[u] as number) - (reference[x] as number);
  if (r !== 0) return r > 0 ? 1 : 0;
  return other[u] === other[x] ? 1 : 0.5;
}

/**
 * Yilmaz, Aslam & Robertson (SIGIR 2008, doi:10.1145/1390334.1390435) tau_AP of ranking `other` against
 * reference ranking `reference` (higher score = better): walk `other`'s ranking from the top; at rank i ≥ 2,
 * C(i) is how many of the i − 1 Systems above are also above in the reference;
 * tau_AP = 2/(N − 1) · Σ_{i=2..N} C(i)/(i − 1) − 1. Not symmetric: reference first.
 *
 * Tie rule: Systems tied in `other` are ordered at random and tau_AP is its expectation over those orders
 * (with a strict reference this is Urbano & Marrero's tau_AP_a, ICTIR 2017); a pair tied in both rankings
 * counts as agreeing, a pair tied in the reference only counts 1/2 (see `credit`). Without ties it is the
 * paper's tau_AP: 1 for identical rankings, −1 for reversed ones.
 * @throws HarnessError for a length mismatch, fewer than 2 systems or a non-finite score.
 */
export function tauAP(reference: readonly number[], other: readonly number[]): number {
  checkScores('tauAP', reference, other, ['reference', 'other']);
  const N = reference.length;
  let sum = 0;
  for (let x = 0; x < N; x++) {
    const ox = other[x] as number;
    let above = 0;
    let creditAbove = 0;
    let tiedCredit = 0;
    let tied = 0;
    for (let u = 0; u < N; u++) {
      if (u === x) continue;
      const ou = other[u] as number;
      if (ou > ox) {
        above++;
        creditAbove += credit(reference, other, u, x);
      } else if (ou === ox) {
        tied++;
        tiedCredit += credit(reference, other, u, x);
      }
    }
    // x sits at rank p ∈ [above+1, above+tied+1], uniformly; then p − above − 1 of its tied Systems, a
    // uniform random subset, are above it, each carrying the mean credit of the tie group.
    const meanTied = tied === 0 ? 0 : tiedCredit / tied;
    for (let p = above + 1; p <= above + tied + 1; p++) {
      if (p >= 2) sum += (creditAbove + (p - above - 1) * meanTied) / (p - 1) / (tied + 1);
    }
  }
  return (2 / (N - 1)) * sum - 1;
}

/** numpy `percentile(values, q·100)`, default linear method, of ascending `sorted`. */
function percentile(sorted: readonly number[], q: number): number {
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const a = sorted[lo] as number;
  return lo + 1 < sorted.length ? a + (h - lo) * ((sorted[lo + 1] as number) - a) : a;
}

function checkMatrices(human: readonly (readonly number[])[], judge: readonly (readonly number[])[]): number {
  const fn = 'rankAgreementInterval';
  if (!Array.isArray(human) || !Array.isArray(judge)) throw new HarnessError(`${fn}: human and judge must be arrays of per-query vectors, one per system`);
  if (human.length !== judge.length) throw new HarnessError(`${fn}: human has ${human.length} systems but judge has ${judge.length}`);
  if (human.length < 2) throw new HarnessError(`${fn}: needs at least 2 systems to rank, got ${human.length}`);
  const queries = human[0]?.length ?? 0;
  if (queries < 1) throw new HarnessError(`${fn}: needs at least 1 query`);
  for (const [m, name] of [
    [human, 'human'],
    [judge, 'judge'],
  ] as const) {
    m.forEach((row, s) => {
      if (!Array.isArray(row) || row.length !== queries) {
        throw new HarnessError(`${fn}: ${name}[${s}] has ${row?.length} values, expected ${queries} (the same queries for every system and labelling)`);
      }
      row.forEach((x, q) => {
        if (!Number.isFinite(x)) throw new HarnessError(`${fn}: ${name}[${s}][${q}] is ${String(x)}; every value must be a finite number`);
      });
    });
  }
  return queries;
}

function means(m: readonly (readonly number[])[], picks: Uint32Array): number[] {
  return m.map((row) => {
    let s = 0;
    for (const q of picks) s += row[q] as number;
    return s / picks.length;
  });
}

/**
 * Bootstrap interval of a rank statistic over queries: resample queries with replacement, recompute both
 * systems' means, then the statistic. perQuery[s][q] is system s's value on query q under each labelling.
 * `value` is the statistic on all queries (human as tau_AP's reference); `ci` the percentile interval at
 * `level` (numpy's linear interpolation). Each resample draws its Q query indices in order from
 * `createRng(seed)`. A resample whose statistic is undefined (tau with every mean tied) is left out and counted
 * in `undefinedResamples`; if all are, `ci` is [NaN, NaN].
 */
export function rankAgreementInterval(
  stat: 'tau' | 'tauAP',
  human: readonly (readonly number[])[],
  judge: readonly (readonly number[])[],
  o: { readonly resamples: number; readonly seed: number; readonly level: number },
): { readonly value: number; readonly ci: readonly [number, number]; readonly undefinedResamples: number } {
  const fn = 'rankAgreementInterval';
  if (stat !== 'tau' && stat !== 'tauAP') throw new HarnessError(`${fn}: unknown statistic "${String(stat)}" (known: tau, tauAP)`);
  if (!Number.isSafeInteger(o?.resamples) || o.resamples < 1)
    throw new HarnessError(`${fn}: resamples must be a positive integer, got ${String(o?.resamples)}`);
  if (!(o.level > 0 && o.level < 1)) throw new HarnessError(`${fn}: level must be in (0, 1), got ${String(o.level)}`);
  const queries = checkMatrices(human, judge);
  const f = stat === 'tau' ? kendallTau : tauAP;
  const all = Uint32Array.from({ length: queries }, (_, q) => q);
  const value = f(means(human, all), means(judge, all));
  const rng = createRng(o.seed);
  const picks = new Uint32Array(queries);
  const stats: number[] = [];
  for (let b = 0; b < o.resamples; b++) {
    for (let q = 0; q < queries; q++) picks[q] = rng.nextInt(queries);
    const v = f(means(human, picks), means(judge, picks));
    if (!Number.isNaN(v)) stats.push(v);
  }
  stats.sort((x, y) => x - y);
  const tail = (1 - o.level) / 2;
  const ci: [number, number] = stats.length === 0 ? [Number.NaN, Number.NaN] : [percentile(stats, tail), percentile(stats, 1 - tail)];
  return { value, ci, undefinedResamples: o.resamples - stats.length };
}
