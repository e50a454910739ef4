import { type MeasureTable, measureNamed, type ReportedMeasure } from '../compare/measures.js';
import { HarnessError } from '../errors.js';
import type { Measure } from '../metrics/measure.js';
import { relevantGrade } from '../metrics/relevant-grade.js';
import { kappaEstimate } from '../stats/kappa-estimate.js';
import { gwetAC1, krippendorffAlphaOrdinal } from '../stats/label-agreement.js';
import { rankAgreementInterval } from '../stats/rank-agreement.js';
import { primaryMeasure } from './select.js';
import type { ReportData, ReportInput } from './types.js';
import type { HumanLabelsInput, RankAgreement, SignCheck, Validation } from './evidence-types.js';

/** What a validation reads: the report as built so far (its input, comparisons and gate). */
type Built = Omit<ReportData, 'warnings' | 'ppi' | 'validation' | 'decision' | 'answers'>;

/** The report's input on the labelled queries only, with `perQuery` (judge's or human) over them. */
function labelledInput(data: Built, labels: HumanLabelsInput, perQuery: ReportInput['perQuery']): ReportInput {
  const at = new Map(data.queries.map((q, i) => [q.id, i] as const));
  const gate = data.gate === undefined ? {} : { gate: { ...data.gate, judged: 'plain' as const } };
  return {
    name: data.name,
    configHash: data.configHash,
    evalset: data.evalset,
    runs: data.runs,
    measures: data.measures,
    queries: labels.queries.map((q) => data.queries[at.get(q) as number] as ReportInput['queries'][number]),
    perQuery,
    compare: data.compare,
    ...gate,
    command: data.command,
  };
}

/** The judge's per-query values restricted to the labelled queries, in their order. */
function judgeOnLabelled(data: Built, labels: HumanLabelsInput): ReportInput['perQuery'] {
  const at = new Map(data.queries.map((q, i) => [q.id, i] as const));
  const idx = labels.queries.map((q) => at.get(q) as number);
  return Object.fromEntries(
    Object.entries(data.perQuery).map(([run, byMeasure]) => [
      run,
      Object.fromEntries(Object.entries(byMeasure).map(([m, v]) => [m, idx.map((i) => v[i] as number)])),
    ]),
  );
}

function signChecks(judge: ReportData, human: ReportData): SignCheck[] {
  const key = (c: { stratum: string; measure: string; baseline: string; system: string }) => `${c.stratum}\t${c.measure}\t${c.baseline}\t${c.system}`;
  const byKey = new Map(human.comparisons.map((c) => [key(c), c] as const));
  return judge.comparisons.flatMap((c) => {
    const h = byKey.get(key(c));
    if (h === undefined) return [];
    const row = { stratum: c.stratum, measure: c.measure, baseline: c.baseline, system: c.system, role: c.role };
    return [{ ...row, judgeDelta: c.delta, humanDelta: h.delta, reproduces: Math.sign(c.delta) === Math.sign(h.delta) }];
  });
}

/** A coefficient that is undefined for the data (one grade only) as undefined, never a made-up number. */
function defined(f: () => number): number | undefined {
  try {
    const v = f();
    return Number.isFinite(v) ? v : undefined;
  } catch (err) {
    if (err instanceof HarnessError) return undefined;
    throw err;
  }
}

/**
 * Pair-level agreement on the labelled pairs. The binary kappa splits where `measure` (the decision's, as read
 * with the report's measures) first gains, as `harness kappa --config` does (metrics/relevant-grade.ts), so it
 * sees the grades that move the verdict.
 */
function agreementOf(labels: HumanLabelsInput, seed: number, measure: Measure): Validation['agreement'] {
  const h = labels.pairs.map((p) => p.human);
  const j = labels.pairs.map((p) => p.judge);
  const at = relevantGrade(measure, labels.relevanceLevel ?? 1);
  const relevantAt = at !== undefined && at >= 1 && at <= 3 ? at : undefined;
  const boot = { resamples: 0, seed, level: 0.95, relevantAt: relevantAt ?? 1 };
  const kb = relevantAt === undefined ? undefined : kappaEstimate(h, j, 'binary', boot).kappa;
  const kq = kappaEstimate(h, j, 'quadratic', boot).kappa;
  const alpha = defined(() => krippendorffAlphaOrdinal(labels.pairs.map((p) => [p.human, p.judge])));
  const ac1 = defined(() => gwetAC1(h, j));
  return {
    pairs: labels.pairs.length,
    ...(relevantAt === undefined ? {} : { relevantAt }),
    ...(kb === undefined ? {} : { kappaBinary: kb }),
    ...(kq === undefined ? {} : { kappaQuadratic: kq }),
    ...(alpha === undefined ? {} : { alphaOrdinal: alpha }),
    ...(ac1 === undefined ? {} : { ac1 }),
  };
}

/** Kendall's tau and tau_AP (human ranking as reference) between the systems' rankings by mean of `measure`. */
function rankings(data: Built, labels: HumanLabelsInput, judge: ReportInput['perQuery'], measure: string) {
  const runs = data.runs.map((r) => r.id);
  if (runs.length < 2 || labels.queries.length < 2) return {};
  const h = runs.map((r) => labels.perQuery[r]?.[measure] ?? []);
  const j = runs.map((r) => judge[r]?.[measure] ?? []);
  const o = { resamples: labels.thresholds.resamples, seed: data.compare.seed, level: 0.95 };
  const of = (stat: 'tau' | 'tauAP'): RankAgreement | undefined => {
    const r = rankAgreementInterval(stat, h, j, o);
    return Number.isNaN(r.value) ? undefined : { value: r.value, ci: [r.ci[0], r.ci[1]] };
  };
  const tau = of('tau');
  const tauAP = of('tauAP');
  return { ...(tau ? { tau } : {}), ...(tauAP ? { tauAP } : {}) };
}

/**
 * Decision-level validation of the judge (docs/adr/0038) on the human-labelled queries: the report rebuilt on
 * those queries under judge labels and under human labels (`build`, the report builder, so the gate and the
 * comparisons are exactly the report's); whether each comparison's sign and the gate's verdict reproduce;
 * Kendall's tau and tau_AP between the system rankings with bootstrap intervals; pair-level kappa, Krippendorff's
 * alpha (ordinal) and Gwet's AC1. It passes when at least `minQueries` queries are labelled, the gate's verdict
 * and every gate comparison's sign reproduce, and tau reaches `minTau`. `measures` are the report's measures as
 * its builder read them, so the kappa split takes the deciding measure's value rather than reading its spelling.
 */
export function validationOf(data: Built, build: (input: ReportInput) => ReportData, measures: MeasureTable): Validation | undefined {
  const labels = data.humanLabels;
  if (labels === undefined) return undefined;
  const decided = measureNamed(measures, primaryMeasure(data));
  const measure = decided.spelling;
  const t = labels.thresholds;
  if (labels.queries.length < 2) return tooFew(data, labels, decided);
  const judgePq = judgeOnLabelled(data, labels);
  const judge = build(labelledInput(data, labels, judgePq));
  const human = build(labelledInput(data, labels, labels.perQuery));
  const signs = signChecks(judge, human);
  const gate =
    judge.gateResult && human.gateResult
      ? { judge: judge.gateResult.verdict, human: human.gateResult.verdict, reproduces: judge.gateResult.verdict === human.gateResult.verdict }
      : undefined;
  const ranks = rankings(data, labels, judgePq, measure);
  const failures: string[] = [];
  if (labels.queries.length < t.minQueries) failures.push(`${labels.queries.length} human-labelled queries, fewer than ${t.minQueries}`);
  if (gate && !gate.reproduces) failures.push(`the gate says ${gate.judge} under the judge's labels and ${gate.human} under the human labels`);
  const flipped = signs.filter((s) => s.role === 'confirmatory' && !s.reproduces);
  if (flipped.length > 0)
    failures.push(`the sign of ${flipped.map((s) => `${s.system} vs ${s.baseline} in ${s.stratum}`).join(', ')} flips under human labels`);
  if (data.runs.length >= 2 && ranks.tau === undefined) failures.push('Kendall tau is undefined (every system tied)');
  else if (ranks.tau !== undefined && ranks.tau.value < t.minTau) failures.push(`Kendall tau ${ranks.tau.value.toFixed(3)} below ${t.minTau}`);
  return {
    ...labelsPart(labels, measure),
    signs,
    ...(gate ? { gate } : {}),
    ...ranks,
    agreement: agreementOf(labels, data.compare.seed, decided.measure),
    thresholds: t,
    pass: failures.length === 0,
    failures,
  };
}

/** What a validation says of the labels it read: the file, the qrels version labelled, the queries, the measure. */
function labelsPart(labels: HumanLabelsInput, measure: string) {
  return {
    labelsFile: labels.file,
    qrelsVersion: labels.qrelsVersion,
    labelledQueries: labels.queries.length,
    incompleteQueries: labels.incomplete,
    measure,
  };
}

/** Fewer than 2 labelled queries among the report's: nothing to rebuild the report on, a failed validation. */
function tooFew(data: Built, labels: HumanLabelsInput, decided: ReportedMeasure): Validation {
  return {
    ...labelsPart(labels, decided.spelling),
    signs: [],
    agreement: agreementOf(labels, data.compare.seed, decided.measure),
    thresholds: labels.thresholds,
    pass: false,
    failures: [
      `${labels.queries.length} human-labelled ${labels.queries.length === 1 ? 'query' : 'queries'} among the report's, fewer than ${Math.max(2, labels.thresholds.minQueries)}`,
    ],
  };
}
