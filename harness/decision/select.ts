import type { Comparison, ReportData, ReportEvalSet, ReportRun, StratumInfo } from './types.js';
import { hasGrades } from './answer-level.js';

/** ReportData before its warnings are derived: what warning rules and the gate read. */
export type ReportCore = Omit<ReportData, 'warnings' | 'gateResult' | 'decision' | 'answers'> & Partial<Pick<ReportData, 'gateResult' | 'decision'>>;

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
  return data.comparisons.find((c) => c.stratum === stratum && c.measure === measure && c.baseline === baseline && c.system === system);
}

export function meanOf(data: Pick<ReportData, 'summary'>, stratum: string, run: string, measure: string): number | undefined {
  return data.summary.find((r) => r.stratum === stratum && r.run === run && r.measure === measure)?.mean;
}

/** Display name of a run: its label when it has one, else its id. */
export function runName(data: Pick<ReportData, 'runs'>, id: string): string {
  return data.runs.find((r) => r.id === id)?.label ?? id;
}

/** Where the qrels came from, with the judge that filled them when there is one. */
export function qrelsText(e: ReportEvalSet): string {
  if (!e.judge) return e.qrelsSource;
  return `${e.qrelsSource} (judge ${e.judge.model}, prompt ${e.judge.prompt}${e.judge.qrelsVersion === undefined ? '' : `, qrels version ${e.judge.qrelsVersion}`})`;
}

/** A run's kind as the runs table shows it: its node too when that says more (`fuse rrf`). */
export function runKind(r: ReportRun): string {
  return r.node && r.node !== r.kind ? `${r.node} ${r.kind}` : r.kind;
}

/** The runs table's note: baseline, substitute. */
export function runNote(data: Pick<ReportData, 'baseline'>, r: ReportRun): string {
  return [r.id === data.baseline ? 'baseline' : '', r.substitute ? `substitute: ${r.substitute}` : ''].filter(Boolean).join('; ');
}

/** How a comparison is labelled in every rendering: `gate` (confirmatory) or `exploratory`. */
export function roleLabel(c: Pick<Comparison, 'role'>): string {
  return c.role === 'confirmatory' ? 'gate' : 'exploratory';
}

/** The measure plots and the ADR lead with: the gate's, else the first tested measure, else the first measure. */
export function primaryMeasure(data: Pick<ReportData, 'gateResult' | 'testedMeasures' | 'measures'>): string {
  return data.gateResult?.config.measure ?? data.testedMeasures[0] ?? (data.measures[0] as string);
}

/** Human sentence naming the test, families, corrections, intervals and MDE, shared by every rendering's legend. */
export function methodSentence(data: Pick<ReportData, 'compare' | 'families'>): string {
  const c = data.compare;
  const test =
    c.test === 'randomization'
      ? `paired randomization (sign-flip) test, ${c.permutations} permutations or exact enumeration when 2^n is not larger, each p with its Monte Carlo standard error`
      : c.test === 't'
        ? 'paired Student t-test'
        : 'Wilcoxon signed-rank test (scipy auto: exact for n <= 50 without ties or zero differences and for n <= 13 with them, else normal approximation)';
  const family =
    c.family === 'per-test'
      ? 'one exploratory family: every other compared pair x stratum (overall row included) x tested measure'
      : c.family === 'per-measure'
        ? 'one exploratory family per measure: every other compared pair x stratum (overall row included)'
        : 'one exploratory family per stratum (overall row its own family): every other compared pair x tested measure';
  const gate = data.families.find((f) => f.role === 'confirmatory');
  const gateText = gate
    ? `The gate's comparisons are confirmatory: their own family of ${gate.size}, ${gate.correction}-corrected within itself` +
      `${c.test === 'randomization' ? ' (more permutations are drawn while a corrected p is within two standard errors of alpha)' : ''}. `
    : '';
  const sizes = data.families
    .filter((f) => f.role === 'exploratory')
    .map((f) => `${f.id}: ${f.size}`)
    .join(', ');
  const correction = c.correction === 'none' ? 'no multiple-comparison correction' : `${c.correction} correction`;
  const interval =
    c.test === 'wilcoxon'
      ? `${c.ciMethod} bootstrap of the mean per-query difference (${c.resamples} resamples), at the level 1 - alpha·p/p(corrected) of each comparison's own decision (approximately consistent with the Wilcoxon test)`
      : `the ${c.test === 't' ? 't-test' : 'sign-flip test'} inverted at the level 1 - alpha·p/p(corrected) of each comparison's own decision, so an interval excludes 0 exactly when the comparison is significant`;
  return (
    `${test}. ${gateText}Everything else is exploratory: ${correction} within ${family} (family sizes ${sizes || 'none'}). ` +
    `Significant when the corrected p < ${c.alpha}. CIs: ${interval}; all draws seeded with ${c.seed}, queries in id order. ` +
    `MDE: smallest true difference detectable with power ${c.power} at the family's first corrected threshold alpha/m, for the stratum's n and the observed sd of differences.`
  );
}

/** The gate's family in one sentence: what is confirmatory, how it is corrected, what is not. */
export function gateSentence(data: Pick<ReportData, 'families' | 'comparisons' | 'compare'>): string {
  const gate = data.families.find((f) => f.role === 'confirmatory');
  if (!gate) return 'The gate has no testable comparison.';
  const strata = data.comparisons.filter((c) => c.role === 'confirmatory').map((c) => c.stratum);
  const questions = data.compare.questions ?? [];
  const others =
    questions.length === 0
      ? 'every other comparison in this report is exploratory and cannot change the verdict.'
      : `the ${questions.length === 1 ? 'question' : `${questions.length} questions`} of compare.questions (${questions.map((q) => `${q.id}, ${q.role}`).join('; ')}) ${questions.length === 1 ? 'is a family' : 'are families'} of ${questions.length === 1 ? 'its' : 'their'} own, answered below; every other comparison is exploratory, and none of them can change the verdict.`;
  return `Confirmatory family: ${gate.size} test${gate.size === 1 ? '' : 's'} (${strata.join(', ')}), ${gate.correction}-corrected within itself only; ${others}`;
}

/**
 * Does `Acc` rest on an answer judge (a configured one, or grades recorded in an answers file)? Its values are then
 * an LLM's verdicts, and what holds for a relevance judge (validation, PPI, the verdict's qualifiers) holds for it.
 */
export function answerJudged(data: Pick<ReportCore, 'answerLevel' | 'measures'>): boolean {
  return data.measures.includes('Acc') && data.answerLevel !== undefined && hasGrades(data.answerLevel);
}

/** Does the gate decide on `Acc` as an answer judge graded it (docs/adr/0045)? */
export function gateOnAnswerJudge(data: Pick<ReportCore, 'answerLevel' | 'measures' | 'gateResult'>): boolean {
  return data.gateResult?.config.measure === 'Acc' && answerJudged(data);
}
