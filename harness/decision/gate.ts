import { type GateConfig, marginOf } from '../compare/config.js';
import { gateCorrection } from '../compare/comparisons.js';
import { fmtCI, fmtCompCI, fmtDelta, fmtLevel, fmtMde, fmtMean, fmtP } from './format.js';
import { findComparison, overallStratum, properStrata, type ReportCore } from './select.js';
import type { Comparison, GateResult, Verdict } from './types.js';

/** One comparison as the gate quotes it, with the report's rounding. */
export const describeComparison = describePlain;

function describePlain(c: Comparison, correction: string): string {
  return (
    `${c.measure} in ${c.stratum} (n=${c.n}): ${c.system} ${fmtMean(c.systemMean)} vs ${c.baseline} ` +
    `${fmtMean(c.baselineMean)}, delta ${fmtDelta(c.delta)}, ${fmtLevel(c.ciLevel)} CI ${fmtCompCI(c)}, ` +
    `p ${fmtP(c.pAdjusted)} (${correction}-corrected)`
  );
}

/**
 * The decision rule of the `gate:` block over its confirmatory comparisons: (baseline, candidate) on the gate's
 * measure, overall and, under the no-loss rules, per stratum, corrected only within that family (see
 * computeComparisons), so no exploratory arm or measure can move the verdict. "Significant" is the report's
 * own flag: corrected p below alpha. Rules (see `gateSchema.rule`):
 *
 * - any rule: a significant loss overall is REJECT;
 * - `gain-overall-no-loss` and `no-loss`: a significant loss in any stratum is REJECT;
 * - `gain-overall-no-loss` and `gain-overall`: ADOPT on a significant overall gain of at least `minDelta`;
 * - `no-loss`: ADOPT when the overall interval's lower bound lies above `-minDelta` (non-inferiority);
 * - everything else is INCONCLUSIVE, with the overall MDE when the eval set was too small to see the delta;
 * - `equivalent` is its own branch (see equivalenceVerdict): two one-sided tests per stratum against the margins.
 */
export function evaluateGate(data: ReportCore, cfg: GateConfig & { readonly baseline: string }): GateResult {
  const correction = gateCorrection(data.compare.correction);
  const overall = overallStratum(data);
  const onPpi = cfg.judged === 'ppi';
  const get = (stratum: string): Comparison => {
    const c = findComparison(data, stratum, cfg.measure, cfg.baseline, cfg.candidate);
    if (!c) throw new Error(`evaluateGate: no comparison for ${cfg.candidate} vs ${cfg.baseline} on ${cfg.measure} in ${stratum}`);
    return onPpi ? ppiComparison(data, c) : c;
  };
  const describeComparison = (c: Comparison, corr: string) => (onPpi ? describePpi(data, c) : describePlain(c, corr));
  const all = get(overall.id);
  const minDelta = cfg.minDelta ?? 0;
  const done = (verdict: Verdict, reason: string): GateResult => ({ verdict, reason, config: cfg });
  // Without a PPI interval the gate has nothing to decide on: say that, not "no significant difference".
  if (onPpi && all.ciLevel === null) return done('INCONCLUSIVE', `no PPI interval to decide on: ${describePpi(data, all)}`);
  if (cfg.rule === 'equivalent') {
    const strata = [...properStrata(data).filter((s) => s.id !== overall.id), overall];
    return done(...equivalenceVerdict(strata.map((s) => ({ c: get(s.id), margin: marginFor(cfg, s.id, s.id === overall.id) }))));
  }
  if (all.significant && all.delta < 0) return done('REJECT', `significant loss overall: ${describeComparison(all, correction)}`);
  if (cfg.rule !== 'gain-overall') {
    const losses = properStrata(data)
      .filter((s) => s.id !== overall.id)
      .map((s) => get(s.id))
      .filter((c) => c.significant && c.delta < 0);
    if (losses.length > 0) {
      return done('REJECT', `significant loss in ${losses.map((c) => describeComparison(c, correction)).join('; ')}`);
    }
  }
  const noLossClause = cfg.rule === 'gain-overall' ? '' : ' and no significant loss in any stratum';
  if (cfg.rule === 'no-loss') {
    if (all.ci[0] !== null && all.ci[0] > -minDelta) {
      return done(
        'ADOPT',
        `no significant loss in any stratum, and the overall CI lies above -${fmtMean(minDelta)} (non-inferior): ${describeComparison(all, correction)}`,
      );
    }
    return done(
      'INCONCLUSIVE',
      `a loss larger than the margin ${fmtMean(minDelta)} cannot be ruled out: ${describeComparison(all, correction)}${mdeNote(all)}`,
    );
  }
  if (all.significant && all.delta > 0) {
    if (all.delta >= minDelta) return done('ADOPT', `significant gain overall${noLossClause}: ${describeComparison(all, correction)}`);
    return done('INCONCLUSIVE', `significant gain overall, but below minDelta ${fmtMean(minDelta)}: ${describeComparison(all, correction)}`);
  }
  return done('INCONCLUSIVE', `no significant difference overall: ${describeComparison(all, correction)}${mdeNote(all)}`);
}

function marginFor(cfg: GateConfig, stratum: string, overall: boolean): number {
  const m = marginOf(cfg, stratum, overall);
  if (m === undefined)
    throw new Error(`evaluateGate: no equivalence margin for stratum ${stratum}; set gate.margin or gate.margins.${overall ? 'overall' : stratum}`);
  return m;
}

/** One stratum's equivalence test as the gate quotes it: its TOST interval, level and margin. */
function describeEquivalence(c: Comparison, margin: number): string {
  const ci = c.equivalenceCi ?? [null, null];
  const why = ci[0] === null && ci[1] === null ? 'no shift can be rejected at that level' : undefined;
  return (
    `${c.measure} in ${c.stratum} (n=${c.n}): delta ${fmtDelta(c.delta)}, ${fmtLevel(c.equivalenceLevel ?? null)} CI ${fmtCI(ci, why)}, ` +
    `margin ${fmtMean(margin)}`
  );
}

/**
 * `rule: equivalent`, by two one-sided tests in interval form: a stratum is equivalent when its TOST interval
 * (level 1 − 2α/m, see computeComparisons) lies inside (−margin, +margin); ADOPT when every stratum is. A
 * stratum whose whole interval lies below −margin is a significant loss beyond the margin: REJECT. Anything
 * else leaves the claim open: INCONCLUSIVE, naming each stratum not shown equivalent with its interval.
 */
function equivalenceVerdict(rows: readonly { c: Comparison; margin: number }[]): [Verdict, string] {
  const lo = (r: { c: Comparison }) => r.c.equivalenceCi?.[0] ?? null;
  const hi = (r: { c: Comparison }) => r.c.equivalenceCi?.[1] ?? null;
  const losses = rows.filter((r) => hi(r) !== null && (hi(r) as number) < -r.margin);
  if (losses.length > 0) return ['REJECT', `significant loss beyond the margin in ${losses.map((r) => describeEquivalence(r.c, r.margin)).join('; ')}`];
  const open = rows.filter((r) => !(lo(r) !== null && hi(r) !== null && (lo(r) as number) > -r.margin && (hi(r) as number) < r.margin));
  if (open.length === 0) return ['ADOPT', `equivalent within the margins in every stratum: ${rows.map((r) => describeEquivalence(r.c, r.margin)).join('; ')}`];
  return ['INCONCLUSIVE', `not shown equivalent within the margin in ${open.map((r) => describeEquivalence(r.c, r.margin)).join('; ')}`];
}

function mdeNote(c: Comparison): string {
  if (c.mde === null || c.mde <= Math.abs(c.delta)) return '';
  return `; with ${c.n} queries only effects of about ${fmtMde(c.mde)} or more are detectable at the corrected threshold (MDE)`;
}

/**
 * `gate.judged: ppi`: the comparison with its PPI-corrected delta and interval in place of the judge-based ones;
 * significant when that interval excludes 0 (docs/adr/0038). Without a PPI interval (too few labelled queries)
 * nothing is significant and the interval is unbounded, so the gate cannot ADOPT or REJECT on it.
 */
function ppiComparison(data: ReportCore, c: Comparison): Comparison {
  const row = findPpi(data, c);
  if (row?.ppi === undefined) return { ...c, ci: [null, null], ciLevel: null, significant: false, mde: null };
  return { ...c, delta: row.ppi.estimate, ci: row.ppi.ci, ciLevel: row.ppi.level, significant: row.ppi.significant, mde: null };
}

/**
 * The report as its gate decided it, for rendering: under `gate.judged: ppi` each confirmatory comparison
 * carries its PPI-corrected delta, interval and significance (no p: PPI gives none), so bold, significance
 * marks and forest plots follow the interval the verdict rests on; the judge-based ones stay in
 * comparisons.csv and the PPI table. Any other report is returned as it is.
 */
export function asDecided<T extends ReportCore>(data: T): T {
  if (data.gateResult?.config.judged !== 'ppi') return data;
  return {
    ...data,
    comparisons: data.comparisons.map((c) =>
      c.role === 'confirmatory' ? { ...ppiComparison(data, c), p: null, pAdjusted: null, nearAlpha: false, permutations: null } : c,
    ),
  };
}

function findPpi(data: ReportCore, c: Comparison) {
  return data.ppi?.find((r) => r.stratum === c.stratum && r.measure === c.measure && r.baseline === c.baseline && r.system === c.system);
}

function describePpi(data: ReportCore, c: Comparison): string {
  const row = findPpi(data, c);
  const head = `${c.measure} in ${c.stratum} (n=${c.n}): ${c.system} vs ${c.baseline}`;
  if (row?.ppi === undefined)
    return `${head}, no PPI interval (${row?.unavailable ?? 'no human labels'}); judge-based delta ${fmtDelta(row?.plainDelta ?? c.delta)}`;
  return (
    `${head}, PPI-corrected delta ${fmtDelta(row.ppi.estimate)}, ${fmtLevel(row.ppi.level)} CI ${fmtCI(row.ppi.ci)} ` +
    `(${row.ppi.n} human-labelled queries; judge-based delta ${fmtDelta(row.plainDelta)})`
  );
}
