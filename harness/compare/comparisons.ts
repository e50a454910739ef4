import { compareIds } from '../metrics/index.js';
import {
  adjustPValues,
  bootstrapCI,
  cohensDz,
  minimumDetectableEffect,
  pairedTTest,
  randomizationCIMany,
  randomizationTestMany,
  studentTQuantile,
  wilcoxonSignedRank,
  winTieLoss,
  type AdjustMethod,
} from '../stats/index.js';
import type { CompareConfig } from './config.js';
import type { ReportedMeasure } from './measures.js';
import type { Comparison, ComparisonRole, FamilyInfo } from './types.js';

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

/**
 * The pairs a report compares: every run against `baseline` in run order or, with `allPairs`, every pair
 * (earlier run as baseline). `extra` (the gate's pair) is added in its own orientation, replacing the reversed
 * pair if present, so the gate always reads `candidate − baseline` directly.
 */
export function comparisonPairs(runIds: readonly string[], baseline: string, allPairs: boolean, ...extras: (Pair | undefined)[]): Pair[] {
  const pairs: Pair[] = [];
  if (allPairs) {
    for (let i = 0; i < runIds.length; i++) {
      for (let j = i + 1; j < runIds.length; j++) pairs.push({ baseline: runIds[i] as string, system: runIds[j] as string });
    }
  } else {
    for (const id of runIds) if (id !== baseline) pairs.push({ baseline, system: id });
  }
  for (const extra of extras) {
    if (!extra || extra.baseline === extra.system) continue;
    const same = pairs.findIndex((p) => p.baseline === extra.baseline && p.system === extra.system);
    const reversed = pairs.findIndex((p) => p.baseline === extra.system && p.system === extra.baseline);
    if (reversed >= 0) pairs[reversed] = extra;
    else if (same < 0) pairs.push(extra);
  }
  return pairs;
}

/** Family id of a `compare.questions` entry's comparisons. */
export function questionFamily(id: string): string {
  return `question ${id}`;
}

/** The question (if any) whose pair and measure this comparison is: its own family. */
function questionOf(cfg: CompareConfig, measure: string, pair: Pair, fallbackMeasure: string | undefined) {
  return cfg.questions.find((q) => q.baseline === pair.baseline && q.system === pair.system && (q.measure ?? fallbackMeasure) === measure);
}

/** The exploratory family a comparison belongs to under `family` (see `compareSchema.family`). */
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

/** Family id of the gate's confirmatory comparisons. */
export const GATE_FAMILY = 'gate';

/**
 * The confirmatory test a config declares through its gate: `pair` on `measure` in each of `strata` (the
 * overall row, plus every stratum under the no-loss rules). These comparisons form their own family.
 */
export interface ConfirmatorySpec {
  readonly pair: Pair;
  readonly measure: string;
  readonly strata: readonly string[];
  /** The gate decides equivalence (`rule: equivalent`): its comparisons also get the TOST interval. */
  readonly equivalence?: boolean;
}

/**
 * The gate is a claim about each of its comparisons, so it needs family-wise control: Holm, Bonferroni and
 * Hommel are used as configured; `bh`, `by` (false discovery rate) and `none` fall back to Holm for the gate.
 */
export function gateCorrection(correction: CompareConfig['correction']): AdjustMethod {
  return correction === 'bonferroni' || correction === 'hommel' || correction === 'holm' ? correction : 'holm';
}

/** The gate's Monte Carlo draws grow tenfold, up to this factor, while a corrected p is within its error of alpha. */
export const GATE_MAX_DRAW_FACTOR = 100;

/** A corrected p within this many Monte Carlo standard errors of alpha could fall on either side with other draws. */
export const NEAR_ALPHA_SE = 2;

interface Tested {
  p: number | null;
  /** Sign flips behind a randomization p (2^n when enumerated); null for the t and Wilcoxon tests. */
  permutations: number | null;
  exact: boolean;
}

function testOthers(test: 't' | 'wilcoxon', d: Float64Array): Tested {
  const zeros = new Float64Array(d.length);
  const p = test === 't' ? finiteOrNull(pairedTTest(zeros, d).p) : wilcoxonSignedRank(zeros, d).p;
  return { p, permutations: null, exact: test === 'wilcoxon' };
}

function randomizationAt(diffs: readonly Float64Array[], permutations: number, seed: number): Tested[] {
  return randomizationTestMany(diffs, { permutations, seed }).map((r) => ({ p: r.p, permutations: r.permutations, exact: r.exact }));
}

/** Monte Carlo standard error of a randomization p, √(p(1 − p)/B); 0 when the p was enumerated exactly. */
function mcse(t: Tested): number | null {
  if (t.p === null || t.permutations === null) return null;
  return t.exact ? 0 : Math.sqrt((t.p * (1 - t.p)) / t.permutations);
}

type PerQuery = Readonly<Record<string, Readonly<Record<string, readonly number[]>>>>;
type Interval = readonly [number | null, number | null];

/** One comparison before its test: both runs' values over the stratum's queries in id order, and their differences. */
interface Paired {
  readonly stratum: string;
  readonly measure: string;
  readonly pair: Pair;
  readonly role: ComparisonRole;
  readonly family: string;
  readonly base: Float64Array;
  readonly sys: Float64Array;
  readonly d: Float64Array;
}

function isConfirmatory(gate: ConfirmatorySpec | undefined, stratum: string, measure: string, pair: Pair): boolean {
  return (
    gate !== undefined && gate.measure === measure && gate.pair.baseline === pair.baseline && gate.pair.system === pair.system && gate.strata.includes(stratum)
  );
}

function pairedOf(
  perQuery: PerQuery,
  ordered: readonly number[],
  at: { readonly stratum: string; readonly measure: string; readonly pair: Pair; readonly firstMeasure: string | undefined },
  cfg: CompareConfig,
  gate: ConfirmatorySpec | undefined,
): Paired {
  const { stratum, measure, pair } = at;
  const base = pick(valuesOf(perQuery, pair.baseline, measure), ordered);
  const sys = pick(valuesOf(perQuery, pair.system, measure), ordered);
  const d = new Float64Array(base.length);
  for (let i = 0; i < d.length; i++) d[i] = (sys[i] as number) - (base[i] as number);
  const confirmatory = isConfirmatory(gate, stratum, measure, pair);
  const question = confirmatory ? undefined : questionOf(cfg, measure, pair, gate?.measure ?? at.firstMeasure);
  return {
    stratum,
    measure,
    pair,
    role: confirmatory ? 'confirmatory' : 'exploratory',
    family: confirmatory ? GATE_FAMILY : question ? questionFamily(question.id) : familyId(cfg, stratum, measure),
    base,
    sys,
    d,
  };
}

/** Every comparison of the report, stratum by stratum, then measure, then pair. */
function pairAll(
  perQuery: PerQuery,
  queryIds: readonly string[],
  pairs: readonly Pair[],
  strata: readonly StratumIndex[],
  measures: readonly string[],
  cfg: CompareConfig,
  gate: ConfirmatorySpec | undefined,
): Paired[] {
  const out: Paired[] = [];
  for (const stratum of strata) {
    const ordered = [...stratum.indices].sort((i, j) => compareIds(queryIds[i] as string, queryIds[j] as string));
    for (const measure of measures) {
      for (const pair of pairs) out.push(pairedOf(perQuery, ordered, { stratum: stratum.id, measure, pair, firstMeasure: measures[0] }, cfg, gate));
    }
  }
  return out;
}

/** The comparisons' tests as they are corrected: a gate redraw replaces its members' tests and corrected p. */
interface Tests {
  readonly cfg: CompareConfig;
  readonly paired: readonly Paired[];
  readonly tested: Tested[];
  /** Corrected p of each comparison that has a p, by index into `paired`. */
  readonly adjusted: Map<number, number>;
}

/** The configured test of each comparison with two or more queries; the others get no p. */
function testAll(paired: readonly Paired[], testable: readonly number[], cfg: CompareConfig): Tested[] {
  const tested: Tested[] = paired.map(() => ({ p: null, permutations: null, exact: false }));
  if (cfg.test === 'randomization') {
    // One batched call: the same sign flips serve every comparison over the same number of queries.
    const ps = randomizationAt(
      testable.map((i) => (paired[i] as Paired).d),
      cfg.permutations,
      cfg.seed,
    );
    testable.forEach((i, k) => (tested[i] = ps[k] as Tested));
  } else {
    for (const i of testable) tested[i] = testOthers(cfg.test, (paired[i] as Paired).d);
  }
  return tested;
}

/** Family id -> the comparisons in it that have a p, in comparison order. */
function familyMembers(t: Tests, testable: readonly number[]): Map<string, number[]> {
  const byFamily = new Map<string, number[]>();
  for (const i of testable) {
    if (t.tested[i]?.p === null) continue;
    const f = (t.paired[i] as Paired).family;
    const list = byFamily.get(f);
    if (list) list.push(i);
    else byFamily.set(f, [i]);
  }
  return byFamily;
}

function correctionOf(cfg: CompareConfig, family: string): AdjustMethod | 'none' {
  const confirmatoryQuestion = cfg.questions.some((q) => q.role === 'confirmatory' && questionFamily(q.id) === family);
  return family === GATE_FAMILY || confirmatoryQuestion ? gateCorrection(cfg.correction) : cfg.correction;
}

function adjust(t: Tests, family: string, members: readonly number[]): void {
  const ps = members.map((i) => t.tested[i]?.p as number);
  const method = correctionOf(t.cfg, family);
  const adj = method === 'none' ? ps : Array.from(adjustPValues(ps, method));
  members.forEach((i, k) => t.adjusted.set(i, adj[k] as number));
}

function nearAlpha(t: Tests, i: number): boolean {
  const tested = t.tested[i] as Tested;
  const se = mcse(tested);
  const pAdj = t.adjusted.get(i);
  if (se === null || se === 0 || pAdj === undefined || tested.p === null || tested.p === 0) return false;
  return Math.abs(pAdj - t.cfg.alpha) <= NEAR_ALPHA_SE * se * (pAdj / tested.p);
}

/** Redraws the gate family with ten times the sign flips while one of its corrected p is near alpha. */
function redrawGate(t: Tests, gateMembers: readonly number[]): void {
  const { cfg } = t;
  if (cfg.test !== 'randomization') return;
  let draws = cfg.permutations;
  while (gateMembers.some((i) => nearAlpha(t, i)) && draws * 10 <= cfg.permutations * GATE_MAX_DRAW_FACTOR) {
    draws *= 10;
    const ps = randomizationAt(
      gateMembers.map((i) => (t.paired[i] as Paired).d),
      draws,
      cfg.seed,
    );
    gateMembers.forEach((i, k) => (t.tested[i] = ps[k] as Tested));
    adjust(t, GATE_FAMILY, gateMembers);
  }
}

/** Level of each comparison's interval: the alpha its own p is held to after correction. */
function levelAlpha(t: Tests, sizeOf: ReadonlyMap<string, number>, i: number): number {
  const p = t.tested[i]?.p as number;
  const pAdj = t.adjusted.get(i) as number;
  const m = sizeOf.get((t.paired[i] as Paired).family) ?? 1;
  return p > 0 && pAdj > 0 ? (t.cfg.alpha * p) / pAdj : t.cfg.alpha / m;
}

/** Randomization intervals, batched by number of draws so each batch inverts its own sign flips. */
function randomizationIntervals(t: Tests, withP: readonly number[], alphaOf: (i: number) => number): Map<number, Interval> {
  const ciOf = new Map<number, Interval>();
  const byDraws = new Map<number, number[]>();
  for (const i of withP) {
    // An enumerated test reports 2^n draws, and the interval enumerates again when given B = 2^n.
    const key = (t.tested[i] as Tested).permutations as number;
    const list = byDraws.get(key);
    if (list) list.push(i);
    else byDraws.set(key, [i]);
  }
  for (const [draws, members] of byDraws) {
    const cis = randomizationCIMany(
      members.map((i) => (t.paired[i] as Paired).d),
      members.map(alphaOf),
      { permutations: draws, seed: t.cfg.seed },
    );
    members.forEach((i, k) => ciOf.set(i, cis[k] as Interval));
  }
  return ciOf;
}

/** The t-test inverted, or for the Wilcoxon test the bootstrap, at each comparison's level. */
function otherIntervals(t: Tests, withP: readonly number[], alphaOf: (i: number) => number): Map<number, Interval> {
  const { cfg } = t;
  const ciOf = new Map<number, Interval>();
  for (const i of withP) {
    const d = (t.paired[i] as Paired).d;
    const a = alphaOf(i);
    if (cfg.test === 't') {
      const m = mean(d);
      const half = (studentTQuantile(1 - a / 2, d.length - 1) * sd(d, m)) / Math.sqrt(d.length);
      ciOf.set(i, [m - half, m + half]);
    } else {
      const r = bootstrapCI(d, { resamples: cfg.resamples, seed: cfg.seed, level: 1 - a, method: cfg.ciMethod });
      ciOf.set(i, [r.lo, r.hi]);
    }
  }
  return ciOf;
}

/**
 * The two one-sided tests of equivalence in their interval-inclusion form (Schuirmann 1987): each gate
 * comparison's interval at level 1 − 2α/m, with α/m the Bonferroni share of the gate family, the same
 * inversion as its own interval (sign-flip test, t-test, or the Wilcoxon test's bootstrap). Equivalence
 * within a margin holds at level α/m exactly when this interval lies inside (−margin, +margin).
 */
function equivalenceIntervals(t: Tests, gateWithP: readonly number[], gateSize: number): { ci: Map<number, Interval>; level: number } {
  const a = (2 * t.cfg.alpha) / Math.max(1, gateSize);
  const ci = t.cfg.test === 'randomization' ? randomizationIntervals(t, gateWithP, () => a) : otherIntervals(t, gateWithP, () => a);
  return { ci, level: 1 - a };
}

function comparisonOf(t: Tests, i: number, ci: Interval | undefined, sizeOf: ReadonlyMap<string, number>): Comparison {
  const { cfg } = t;
  const c = t.paired[i] as Paired;
  const n = c.d.length;
  const delta = mean(c.d);
  const wtl = winTieLoss(c.base, c.sys);
  const tested = t.tested[i] as Tested;
  const pAdjusted = t.adjusted.get(i) ?? null;
  const m = sizeOf.get(c.family) ?? 1;
  const firstThreshold = correctionOf(cfg, c.family) === 'none' ? cfg.alpha : cfg.alpha / m;
  return {
    stratum: c.stratum,
    measure: c.measure,
    baseline: c.pair.baseline,
    system: c.pair.system,
    n,
    baselineMean: mean(c.base),
    systemMean: mean(c.sys),
    delta,
    role: c.role,
    ci: ci ?? [delta, delta],
    ciLevel: pAdjusted === null ? null : 1 - levelAlpha(t, sizeOf, i),
    test: cfg.test,
    p: tested.p,
    permutations: tested.permutations,
    pMcse: mcse(tested),
    pAdjusted,
    nearAlpha: nearAlpha(t, i),
    family: c.family,
    significant: pAdjusted !== null && pAdjusted < cfg.alpha,
    dz: n >= 2 ? finiteOrNull(cohensDz(c.base, c.sys)) : null,
    wins: wtl.wins,
    ties: wtl.ties,
    losses: wtl.losses,
    mde: n >= 2 ? minimumDetectableEffect(n, sd(c.d, delta), { alpha: firstThreshold, power: cfg.power }) : null,
  };
}

/**
 * Every paired comparison of a report: for each pair, stratum and tested measure, the two means, the mean
 * difference (system − baseline), the configured test's p, the p corrected within its family, the interval
 * that agrees with that decision, Cohen's d_z, win/tie/loss counts and the minimum detectable effect.
 *
 * - **Measures.** Only the tested ones are compared; a coverage diagnostic (`Judged@k`) is left out.
 * - **Families.** The gate's comparisons (`confirmatory`) are one family, corrected within itself by
 *   {@link gateCorrection}; every other comparison is exploratory, in the families `cfg.family` defines, corrected
 *   by `cfg.correction`. Adding an arm or a measure therefore never moves a gate p, interval or verdict.
 * - **Order.** Each stratum's queries are taken in query-id order ({@link compareIds}) before any draw, so the
 *   numbers do not depend on the order a runner or a qrels file listed the queries in.
 * - **Interval.** At level 1 − α·p/p̃ (p̃ the corrected p, so Bonferroni gives the simultaneous 1 − α/m),
 *   by inverting the test: the sign-flip test with the same draws ({@link randomizationCIMany}) or the t-test;
 *   0 lies outside exactly when the comparison is significant. The Wilcoxon test has no mean-difference
 *   interval to invert, so it gets the bootstrap (`cfg.ciMethod`) at that level, which agrees only approximately.
 * - **MDE** at the family's first corrected threshold α/m with power `cfg.power`.
 * - **Monte Carlo error.** Each randomization p carries √(p(1 − p)/B). While a gate p corrected is within
 *   {@link NEAR_ALPHA_SE} errors of alpha, the gate family is redrawn with ten times the sign flips (the first B
 *   draws are the same), up to {@link GATE_MAX_DRAW_FACTOR}·B; `nearAlpha` flags what remains.
 *
 * A comparison whose p does not exist (fewer than two queries) is left out of every family and is never
 * significant. All draws use `cfg.seed`, so the same input gives the same numbers everywhere.
 *
 * @param perQuery run -> measure spelling -> values aligned with `queryIds`.
 */
export function computeComparisons(
  perQuery: PerQuery,
  queryIds: readonly string[],
  pairs: readonly Pair[],
  strata: readonly StratumIndex[],
  measures: readonly ReportedMeasure[],
  cfg: CompareConfig,
  gate?: ConfirmatorySpec,
): { comparisons: Comparison[]; families: FamilyInfo[] } {
  const tested = measures.filter((m) => m.tested).map((m) => m.spelling);
  const paired = pairAll(perQuery, queryIds, pairs, strata, tested, cfg, gate);
  const testable = paired.map((_, i) => i).filter((i) => (paired[i] as Paired).d.length >= 2);
  const t: Tests = { cfg, paired, tested: testAll(paired, testable, cfg), adjusted: new Map() };
  const byFamily = familyMembers(t, testable);
  for (const [family, members] of byFamily) adjust(t, family, members);
  redrawGate(t, byFamily.get(GATE_FAMILY) ?? []);
  const families: FamilyInfo[] = [...byFamily].map(([id, members]) => ({
    id,
    size: members.length,
    role: id === GATE_FAMILY ? 'confirmatory' : 'exploratory',
    correction: correctionOf(cfg, id),
  }));
  const sizeOf = new Map(families.map((f) => [f.id, f.size]));
  const withP = testable.filter((i) => t.adjusted.has(i));
  const alphaOf = (i: number) => levelAlpha(t, sizeOf, i);
  const ciOf = cfg.test === 'randomization' ? randomizationIntervals(t, withP, alphaOf) : otherIntervals(t, withP, alphaOf);
  const gateWithP = withP.filter((i) => (paired[i] as Paired).family === GATE_FAMILY);
  const eq = gate?.equivalence ? equivalenceIntervals(t, gateWithP, sizeOf.get(GATE_FAMILY) ?? 1) : undefined;
  const comparisons = paired.map((_, i) => {
    const c = comparisonOf(t, i, ciOf.get(i), sizeOf);
    const e = eq?.ci.get(i);
    return eq && e ? { ...c, equivalenceCi: e, equivalenceLevel: eq.level } : c;
  });
  return { comparisons, families };
}

function valuesOf(perQuery: PerQuery, run: string, measure: string): readonly number[] {
  const v = perQuery[run]?.[measure];
  if (!v) throw new Error(`computeComparisons: no per-query values for run ${run}, measure ${measure}`);
  return v;
}
