import {
  adjustPValues,
  bootstrapCIMany,
  cohensDz,
  minimumDetectableEffect,
  pairedTTest,
  randomizationTestMany,
  wilcoxonSignedRank,
  winTieLoss,
} from '../stats/index.js';
import type { CompareConfig } from '../report/config.js';
import type { Comparison, FamilyInfo } from '../report/types.js';

/** One ordered pair: `system` is compared against `baseline` (delta = system − baseline). */
export interface Pair {
  readonly baseline: string;
  readonly system: string;
}

/** The queries of one stratum (or of the overall row), as indices into the report's query list. */
export interface StratumIndex {
  readonly id: string;
  readonly indices: readonly number[];
}

/** A measure is tested unless it is a coverage diagnostic (`Judged@k`), which says nothing about quality. */
export function isTestedMeasure(measure: string): boolean {
  return !measure.startsWith('Judged');
}

/**
 * The pairs a report compares: every run against `baseline` in run order or, with `allPairs`, every pair
 * (earlier run as baseline). `extra` (the gate's pair) is added in its own orientation, replacing the reversed
 * pair if present, so the gate always reads `candidate − baseline` directly.
 */
export function comparisonPairs(runIds: readonly string[], baseline: string, allPairs: boolean, extra?: Pair): Pair[] {
  const pairs: Pair[] = [];
  if (allPairs) {
    for (let i = 0; i < runIds.length; i++) {
      for (let j = i + 1; j < runIds.length; j++) pairs.push({ baseline: runIds[i] as string, system: runIds[j] as string });
    }
  } else {
    for (const id of runIds) if (id !== baseline) pairs.push({ baseline, system: id });
  }
  if (extra && extra.baseline !== extra.system) {
    const same = pairs.findIndex((p) => p.baseline === extra.baseline && p.system === extra.system);
    const reversed = pairs.findIndex((p) => p.baseline === extra.system && p.system === extra.baseline);
    if (reversed >= 0) pairs[reversed] = extra;
    else if (same < 0) pairs.push(extra);
  }
  return pairs;
}

/** The family a comparison belongs to under `family` (see `compareSchema.family`). */
export function familyId(cfg: CompareConfig, stratum: string, measure: string): string {
  switch (cfg.family) {
    case 'per-test':
      return cfg.test;
    case 'per-measure':
      return `${cfg.test} ${measure}`;
    case 'per-stratum':
      return `${cfg.test} ${stratum}`;
  }
}

function pick(values: readonly number[], indices: readonly number[]): Float64Array {
  const out = new Float64Array(indices.length);
  for (let i = 0; i < indices.length; i++) out[i] = values[indices[i] as number] as number;
  return out;
}

function mean(v: Float64Array): number {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i] as number;
  return v.length === 0 ? 0 : s / v.length;
}

function sd(v: Float64Array, m: number): number {
  let ss = 0;
  for (let i = 0; i < v.length; i++) ss += ((v[i] as number) - m) ** 2;
  return Math.sqrt(ss / (v.length - 1));
}

function finiteOrNull(x: number): number | null {
  return Number.isFinite(x) ? x : null;
}

/**
 * The exact Wilcoxon distribution holds only for distinct non-zero |d|; scipy's `auto` picks it for n <= 50 under
 * that condition and the tie-corrected normal approximation otherwise. We follow the same rule.
 */
function wilcoxonMethod(diffs: Float64Array): 'exact' | 'approx' {
  if (diffs.length > 50) return 'approx';
  const seen = new Set<number>();
  for (let i = 0; i < diffs.length; i++) {
    const a = Math.abs(diffs[i] as number);
    if (a === 0 || seen.has(a)) return 'approx';
    seen.add(a);
  }
  return 'exact';
}

/** p of the t or Wilcoxon test; the randomization test runs batched in {@link computeComparisons}. */
function pValue(test: 't' | 'wilcoxon', base: Float64Array, sys: Float64Array, diffs: Float64Array): number | null {
  if (base.length < 2) return null;
  if (test === 't') return finiteOrNull(pairedTTest(base, sys).p);
  return wilcoxonSignedRank(base, sys, { method: wilcoxonMethod(diffs) }).p;
}

/**
 * Every paired comparison of a report: for each pair, stratum and tested measure, the two means, the mean
 * difference (system − baseline) with its seeded bootstrap 95% CI, the configured test's p, the p corrected
 * within its family, Cohen's d_z, win/tie/loss counts and the minimum detectable effect.
 *
 * All random draws use `cfg.seed`, so the same input gives the same numbers everywhere. A comparison whose
 * p does not exist (fewer than two queries) is left out of every family and is never significant.
 *
 * @param perQuery run -> measure -> values aligned with the report's query list.
 */
export function computeComparisons(
  perQuery: Readonly<Record<string, Readonly<Record<string, readonly number[]>>>>,
  pairs: readonly Pair[],
  strata: readonly StratumIndex[],
  measures: readonly string[],
  cfg: CompareConfig,
): { comparisons: Comparison[]; families: FamilyInfo[] } {
  const raw: Omit<Comparison, 'p' | 'pAdjusted' | 'significant' | 'ci95'>[] = [];
  const pOf: (number | null)[] = [];
  const allDiffs: Float64Array[] = [];
  for (const stratum of strata) {
    for (const measure of measures) {
      for (const pair of pairs) {
        const base = pick(valuesOf(perQuery, pair.baseline, measure), stratum.indices);
        const sys = pick(valuesOf(perQuery, pair.system, measure), stratum.indices);
        const n = base.length;
        const diffs = new Float64Array(n);
        for (let i = 0; i < n; i++) diffs[i] = (sys[i] as number) - (base[i] as number);
        allDiffs.push(diffs);
        pOf.push(cfg.test === 'randomization' ? null : pValue(cfg.test, base, sys, diffs));
        const delta = mean(diffs);
        const wtl = winTieLoss(base, sys);
        raw.push({
          stratum: stratum.id,
          measure,
          baseline: pair.baseline,
          system: pair.system,
          n,
          baselineMean: mean(base),
          systemMean: mean(sys),
          delta,
          test: cfg.test,
          family: familyId(cfg, stratum.id, measure),
          dz: n >= 2 ? finiteOrNull(cohensDz(base, sys)) : null,
          wins: wtl.wins,
          ties: wtl.ties,
          losses: wtl.losses,
          mde: n >= 2 ? minimumDetectableEffect(n, sd(diffs, delta), { alpha: cfg.alpha, power: cfg.power }) : null,
        });
      }
    }
  }
  // One batched call each: the same sign flips and resample indices serve every comparison over the same
  // queries, which is what makes a 1,000-comparison family fast; each p and CI equals its single-call value.
  const testable = allDiffs.map((d, i) => ({ d, i })).filter((x) => x.d.length >= 2);
  const cis = bootstrapCIMany(
    testable.map((x) => x.d),
    { resamples: cfg.resamples, seed: cfg.seed, level: 0.95, method: cfg.ciMethod },
  );
  const ciOf = new Map<number, readonly [number, number]>();
  testable.forEach((x, k) => ciOf.set(x.i, [(cis[k] as { lo: number }).lo, (cis[k] as { hi: number }).hi]));
  if (cfg.test === 'randomization') {
    const ps = randomizationTestMany(
      testable.map((x) => x.d),
      { permutations: cfg.permutations, seed: cfg.seed },
    );
    testable.forEach((x, k) => {
      pOf[x.i] = (ps[k] as { p: number }).p;
    });
  }
  const adjusted = new Map<number, number>();
  const families: FamilyInfo[] = [];
  const byFamily = new Map<string, number[]>();
  raw.forEach((c, i) => {
    if (pOf[i] === null) return;
    const list = byFamily.get(c.family) ?? [];
    list.push(i);
    byFamily.set(c.family, list);
  });
  for (const [id, members] of byFamily) {
    const ps = members.map((i) => pOf[i] as number);
    const adj = cfg.correction === 'none' ? ps : adjustPValues(ps, cfg.correction);
    members.forEach((i, k) => adjusted.set(i, adj[k] as number));
    families.push({ id, size: members.length });
  }
  const comparisons = raw.map((c, i): Comparison => {
    const pAdjusted = adjusted.get(i) ?? null;
    return {
      stratum: c.stratum,
      measure: c.measure,
      baseline: c.baseline,
      system: c.system,
      n: c.n,
      baselineMean: c.baselineMean,
      systemMean: c.systemMean,
      delta: c.delta,
      ci95: ciOf.get(i) ?? [c.delta, c.delta],
      test: c.test,
      p: pOf[i] ?? null,
      pAdjusted,
      family: c.family,
      significant: pAdjusted !== null && pAdjusted < cfg.alpha,
      dz: c.dz,
      wins: c.wins,
      ties: c.ties,
      losses: c.losses,
      mde: c.mde,
    };
  });
  return { comparisons, families };
}

function valuesOf(
  perQuery: Readonly<Record<string, Readonly<Record<string, readonly number[]>>>>,
  run: string,
  measure: string,
): readonly number[] {
  const v = perQuery[run]?.[measure];
  if (!v) throw new Error(`computeComparisons: no per-query values for run ${run}, measure ${measure}`);
  return v;
}
