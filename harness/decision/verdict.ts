import { computeComparisons, gateCorrection, questionFamily } from '../compare/comparisons.js';
import { type MeasureTable, measureNamed } from '../compare/measures.js';
import { fmtDelta } from './format.js';
import { describeComparison } from './gate.js';
import { gateOnAnswerJudge, meanOf, overallStratum, primaryMeasure, type ReportCore } from './select.js';
import type { Answers, BestInStratum, Decision, GateResult, JudgeHealth, QuestionAnswer, ReportWarning } from './types.js';

/**
 * The exit statuses of `--gate-exit` (docs/adr/0044): 0 when the verdict stands, 3 on a REJECT, 4 when the
 * verdict rests on a judge nobody validated (no human labels, labels of another qrels version, a failed
 * validation, or no PPI interval where the gate decides on one), unless `gate.judgeValidation: optional`.
 */
export const GATE_EXIT = { stands: 0, reject: 3, judgeUnvalidated: 4 } as const;

/** The judge's health as the verdict reads it: the answer judge's on a gate on `Acc`; undefined on gold qrels (no judge). */
export function judgeHealth(data: ReportCore): JudgeHealth | undefined {
  if (gateOnAnswerJudge(data)) return answerJudgeHealth(data);
  const e = data.evalset;
  if (e.qrelsSource === 'gold') return undefined;
  const v = data.validation;
  const version = e.judge?.qrelsVersion;
  const validation = v === undefined ? 'missing' : version !== undefined && v.qrelsVersion !== version ? 'stale' : v.pass ? 'passed' : 'failed';
  const unavailable = data.gateResult?.config.judged === 'ppi' ? ppiGap(data) : undefined;
  return {
    qrels: e.qrelsSource,
    validation,
    failures: validation === 'failed' ? (v?.failures ?? []) : [],
    ...(unavailable === undefined ? {} : { ppiUnavailable: unavailable }),
    ...(e.judge?.grades === undefined ? {} : { grades: e.judge.grades }),
    ...(data.goldOnly === undefined ? {} : { goldOnly: data.goldOnly }),
  };
}

/** The answer judge's health: validated by `answer.humanLabels` or not (its labels are checked against these very answers). */
function answerJudgeHealth(data: ReportCore): JudgeHealth {
  const v = data.humanLabels?.of === 'answers' ? data.validation : undefined;
  const validation = v === undefined ? 'missing' : v.pass ? 'passed' : 'failed';
  const unavailable = data.gateResult?.config.judged === 'ppi' ? ppiGap(data) : undefined;
  return {
    qrels: 'answers',
    validation,
    failures: validation === 'failed' ? (v?.failures ?? []) : [],
    ...(unavailable === undefined ? {} : { ppiUnavailable: unavailable }),
  };
}

/** Under `gate.judged: ppi`: why the gate's pooled comparison has no PPI interval, or undefined when it has one. */
function ppiGap(data: ReportCore): string | undefined {
  const g = data.gateResult?.config;
  if (g === undefined) return undefined;
  const overall = overallStratum(data).id;
  const row = data.ppi?.find((r) => r.stratum === overall && r.measure === g.measure && r.baseline === g.baseline && r.system === g.candidate);
  if (row?.ppi !== undefined) return undefined;
  return row?.unavailable ?? 'no human labels';
}

/** The judge's part of the verdict sentence: what is missing or failed, or nothing when it is validated. */
function judgeQualifiers(h: JudgeHealth | undefined, data: ReportCore): string[] {
  if (h === undefined) return [];
  const out: string[] = [];
  if (h.validation === 'missing') out.push(`${h.qrels === 'answers' ? 'answer judge' : 'judge'} not validated (no human labels)`);
  if (h.validation === 'stale') out.push(`judge not validated on these judgments (human labels checked qrels version ${data.validation?.qrelsVersion})`);
  if (h.validation === 'failed') {
    const human = data.validation?.gate?.human;
    out.push(
      `${h.qrels === 'answers' ? 'answer judge' : 'judge'} validation FAILED${human !== undefined && human !== data.gateResult?.verdict ? ` (human labels give ${human})` : ''}`,
    );
  }
  if (h.ppiUnavailable !== undefined) out.push(`no PPI interval (${h.ppiUnavailable})`);
  return out;
}

/** The gate's serious warnings other than the judge's own (named by its qualifiers): substitutes by run, the rest by code. */
function warningQualifiers(warnings: readonly ReportWarning[]): string[] {
  const serious = warnings.filter((w) => w.gate && w.severity === 'serious' && w.code !== 'judge-unvalidated');
  const out = serious.filter((w) => w.code === 'substitute').map((w) => `${w.subject} is a substitute`);
  const codes = [...new Set(serious.filter((w) => w.code !== 'substitute').map((w) => w.code))];
  if (codes.length > 0) out.push(`serious warning${codes.length === 1 ? '' : 's'} on the gate: ${codes.join(', ')}`);
  return out;
}

/** What the verdict was decided on: gold qrels, the judge's grades, or the judge's grades corrected by PPI. */
function basisOf(data: ReportCore): Decision['basis'] {
  if (data.evalset.qrelsSource === 'gold' && !gateOnAnswerJudge(data)) return 'gold';
  return data.gateResult?.config.judged === 'ppi' ? 'ppi' : 'judge';
}

const ON_BASIS: Readonly<Record<Decision['basis'], string>> = { gold: '', judge: ' on judge labels', ppi: ' on PPI-corrected judge labels' };

/**
 * The one verdict of a gated report: the gate's result, what it was decided on, every qualifier the report's
 * own evidence puts on it (the judge's validation, PPI, gold alone, substitutes, serious warnings on the gate),
 * the sentence that says all of it, and the exit status of `--gate-exit`. Every rendering and the CLI read
 * this value, so none of them can say less than the others.
 */
export function decide(data: ReportCore, gate: GateResult, warnings: readonly ReportWarning[]): Decision {
  const judge = judgeHealth(data);
  const judgeGaps = judgeQualifiers(judge, data);
  const gold = judge?.goldOnly;
  const goldNote = gold !== undefined && gold.verdict !== gate.verdict ? [`gold qrels alone give ${gold.verdict}`] : [];
  const qualifiers = [...judgeGaps, ...goldNote, ...warningQualifiers(warnings)];
  const basis = basisOf(data);
  const head = `${gate.verdict}${ON_BASIS[basis]}`;
  const enforced = gate.config.judgeValidation !== 'optional';
  const exitCode = judgeGaps.length > 0 && enforced ? GATE_EXIT.judgeUnvalidated : gate.verdict === 'REJECT' ? GATE_EXIT.reject : GATE_EXIT.stands;
  return {
    verdict: gate.verdict,
    basis,
    headline: qualifiers.length === 0 ? head : `${head}; ${qualifiers.join('; ')}`,
    reason: gate.reason,
    qualifiers,
    exitCode,
    ...(judge === undefined ? {} : { judge }),
  };
}

/** The verdict sentence in one line: headline, then the reason. */
export function verdictSentence(d: Pick<Decision, 'headline' | 'reason'>): string {
  return `${d.headline}: ${d.reason}`;
}

/** How one `compare.questions` entry came out, overall and per stratum. */
function answerQuestion(data: ReportCore, q: ReportCore['compare']['questions'][number]): QuestionAnswer {
  const family = questionFamily(q.id);
  const rows = data.comparisons.filter((c) => c.family === family);
  const overall = rows.find((c) => c.stratum === overallStratum(data).id);
  const measure = overall?.measure ?? q.measure ?? '';
  const significant = rows.filter((c) => c.significant);
  const correction = q.role === 'confirmatory' ? gateCorrection(data.compare.correction) : data.compare.correction;
  let sentence: string;
  if (overall === undefined) sentence = `${q.id}: not tested (no comparison of ${q.system} against ${q.baseline})`;
  else if (overall.significant) {
    const [better, worse] = overall.delta > 0 ? [q.system, q.baseline] : [q.baseline, q.system];
    sentence = `${q.id}: ${better} is better than ${worse} on ${measure} overall: ${describeComparison(overall, correction)}`;
  } else {
    sentence = `${q.id}: neither ${q.system} nor ${q.baseline} is significantly better on ${measure} overall: ${describeComparison(overall, correction)}`;
  }
  const strata = significant.filter((c) => c !== overall).map((c) => `${c.delta > 0 ? c.system : c.baseline} in ${c.stratum} (delta ${fmtDelta(c.delta)})`);
  if (strata.length > 0) sentence += `; significantly better per stratum: ${strata.join(', ')}`;
  return { id: q.id, role: q.role, baseline: q.baseline, system: q.system, measure, sentence };
}

/**
 * Per stratum, the system with the highest mean on the primary measure and every other one tested against it
 * on that measure, by the configured test, as a family of its own (the others of that stratum, corrected by
 * `compare.correction`): significantly worse, or not. Grid members are left out: their tuned system stands for
 * them. Exploratory: the best is picked after seeing the data, and these tests never reach the gate.
 */
function bestPerStratum(data: ReportCore, measures: MeasureTable): BestInStratum[] {
  const measure = primaryMeasure(data);
  const reported = [measureNamed(measures, measure)];
  const shown = data.runs.filter((r) => r.group === undefined || r.kind === 'tuned').map((r) => r.id);
  if (shown.length < 2) return [];
  const ids = data.queries.map((q) => q.id);
  const cfg = { ...data.compare, family: 'per-test' as const, questions: [] };
  return data.strata.map((s) => {
    const mean = (run: string) => meanOf(data, s.id, run, measure) ?? Number.NEGATIVE_INFINITY;
    const best = shown.reduce((a, b) => (mean(b) > mean(a) ? b : a));
    const others = shown.filter((r) => r !== best);
    const indices = data.queries.flatMap((q, i) => (s.overall || q.stratum === s.id ? [i] : []));
    const pairs = others.map((system) => ({ baseline: best, system }));
    const { comparisons } = computeComparisons(data.perQuery, ids, pairs, [{ id: s.id, indices }], reported, cfg);
    const worse = others.filter((r) => comparisons.some((c) => c.system === r && c.significant && c.delta < 0));
    return { stratum: s.id, measure, best, mean: mean(best), notWorse: others.filter((r) => !worse.includes(r)), worse };
  });
}

/**
 * The answers a study's question asks for besides the gate: each `compare.questions` entry, and the best systems
 * per stratum. `measures` are the report's measures as its builder read them.
 */
export function answersOf(data: ReportCore, measures: MeasureTable): Answers {
  return { questions: data.compare.questions.map((q) => answerQuestion(data, q)), best: bestPerStratum(data, measures) };
}
