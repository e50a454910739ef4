import type { Comparison, ReportData, StratumInfo } from './types.js';

/** ReportData before its warnings are derived: what warning rules and the gate read. */
export type ReportCore = Omit<ReportData, 'warnings' | 'gateResult'> & Partial<Pick<ReportData, 'gateResult'>>;

/** The row that pools every query: `all` when there are several strata, else the only stratum. */
export function overallStratum(data: Pick<ReportData, 'strata'>): StratumInfo {
  return data.strata.find((s) => s.overall) ?? (data.strata[0] as StratumInfo);
}

/** The strata proper (without the pooled row); with a single stratum, that stratum. */
export function properStrata(data: Pick<ReportData, 'strata'>): StratumInfo[] {
  return data.strata.filter((s) => !s.overall);
}

export function findComparison(
  data: Pick<ReportData, 'comparisons'>,
  stratum: string,
  measure: string,
  baseline: string,
  system: string,
): Comparison | undefined {
  return data.comparisons.find(
    (c) => c.stratum === stratum && c.measure === measure && c.baseline === baseline && c.system === system,
  );
}

export function meanOf(data: Pick<ReportData, 'summary'>, stratum: string, run: string, measure: string): number | undefined {
  return data.summary.find((r) => r.stratum === stratum && r.run === run && r.measure === measure)?.mean;
}

/** Display name of a run: its label when it has one, else its id. */
export function runName(data: Pick<ReportData, 'runs'>, id: string): string {
  return data.runs.find((r) => r.id === id)?.label ?? id;
}

/**
 * Letters of the runs that `run` is significantly better than in `stratum` on `measure` (ranx's superscripts):
 * from every comparison involving `run`, whichever side it is on.
 */
export function winsOver(data: Pick<ReportData, 'comparisons' | 'letters'>, stratum: string, measure: string, run: string): string[] {
  const out: string[] = [];
  for (const c of data.comparisons) {
    if (c.stratum !== stratum || c.measure !== measure || !c.significant) continue;
    if (c.system === run && c.delta > 0) out.push(data.letters[c.baseline] as string);
    else if (c.baseline === run && c.delta < 0) out.push(data.letters[c.system] as string);
  }
  return out.sort();
}

/** The measure plots and the ADR lead with: the gate's, else the first tested measure, else the first measure. */
export function primaryMeasure(data: Pick<ReportData, 'gateResult' | 'testedMeasures' | 'measures'>): string {
  return data.gateResult?.config.measure ?? data.testedMeasures[0] ?? (data.measures[0] as string);
}

/** Human sentence naming the test, correction and family, shared by every rendering's legend. */
export function methodSentence(data: Pick<ReportData, 'compare' | 'families'>): string {
  const c = data.compare;
  const test =
    c.test === 'randomization'
      ? `paired randomization (sign-flip) test, ${c.permutations} permutations or exact enumeration when 2^n is not larger`
      : c.test === 't'
        ? 'paired Student t-test'
        : 'Wilcoxon signed-rank test (exact for n <= 50 without ties or zero differences, else normal approximation)';
  const family =
    c.family === 'per-test'
      ? 'one family per test: every compared pair x stratum (overall row included) x tested measure'
      : c.family === 'per-measure'
        ? 'one family per measure: every compared pair x stratum (overall row included)'
        : 'one family per stratum (overall row its own family): every compared pair x tested measure';
  const sizes = data.families.map((f) => `${f.id}: ${f.size}`).join(', ');
  const correction = c.correction === 'none' ? 'no multiple-comparison correction' : `${c.correction} correction`;
  return (
    `${test}; ${correction} within ${family} (family sizes ${sizes || 'none'}); significant when the corrected p < ${c.alpha}. ` +
    `95% CIs: ${c.ciMethod} bootstrap of the mean per-query difference, ${c.resamples} resamples; all draws seeded with ${c.seed}. ` +
    `MDE: smallest true difference detectable with power ${c.power} at alpha ${c.alpha} for the stratum's n and the observed sd of differences (before correction).`
  );
}
