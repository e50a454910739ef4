import { evalSetFingerprint } from '../../evalset/fingerprint.js';
import type { EvalSet, Qrels } from '../../evalset/types.js';
import type { ResolvedConfig } from '../config/load.js';
import type { SystemOutcome } from '../execution/outcome.js';
import type { ExecutedPlan } from '../execution/run-plan.js';
import { isReturnedId } from '../../arms/remote/text-match.js';
import type { AnswerLevel } from '../decision/answer-level.js';
import { OVERALL, type ReportEvalSet, type ReportInput, type ReportRun, type TextMappingShares } from '../decision/types.js';
import { answerOnlyRuns } from './answer-report.js';
import { holesCheckOf } from './condensed.js';
import { goldOnlyVerdict } from './gold-only.js';
import { costs } from './evidence.js';
import type { LoadedStudy } from './load.js';
import type { ScoredAblation } from './score.js';
import { redactUrlsInValue } from '../util/redact.js';
import { sensitiveSummary } from './sensitive.js';
import type { TunedSystem } from './tune.js';

/** `{ sensitive }` for a system that sends text off this machine and had Sensitive Documents kept from it, else `{}`. */
export function sensitiveField(s: SystemOutcome['system'], sensitiveDocuments: number): { sensitive?: ReportRun['sensitive'] } {
  const sensitive = sensitiveSummary(s.sensitive, s.bound.sendsTextOffMachine, sensitiveDocuments);
  return sensitive === undefined ? {} : { sensitive };
}

/** The Text mapping shares of a system that mapped text or holds Returned items, else undefined. */
export function textMappingShares(o: SystemOutcome, qrels: Qrels): TextMappingShares | undefined {
  const st = o.indexStats;
  const hits =
    st['mappedById'] === undefined
      ? undefined
      : { byId: st['mappedById'], byText: st['mappedByText'] ?? 0, byFuzzy: st['mappedByFuzzy'] ?? 0, returned: st['returnedItems'] ?? 0 };
  let results = 0;
  let returnedResults = 0;
  let returnedJudged = 0;
  for (const [qid, docs] of Object.entries(o.results)) {
    results += docs.length;
    for (const [docId] of docs) {
      if (!isReturnedId(docId)) continue;
      returnedResults++;
      if (qrels.get(qid)?.has(docId) === true) returnedJudged++;
    }
  }
  if (hits === undefined && returnedResults === 0) return undefined;
  return { ...(hits === undefined ? {} : { hits }), results, returnedResults, returnedJudged };
}

function reportRun(o: SystemOutcome, sensitiveDocuments: number, qrels: Qrels): ReportRun {
  const textMapping = textMappingShares(o, qrels);
  const s = o.system;
  return {
    id: s.id,
    kind: s.kind,
    fingerprint: s.fingerprintHash,
    node: s.node,
    ...(s.inputs.length > 0 ? { inputs: s.inputs } : {}),
    // Params as configured may hold a URL with a token (an MCP server's url): report.json gets it redacted.
    params: redactUrlsInValue(s.params),
    ...(s.group === undefined ? {} : { group: s.group }),
    ...(s.point === undefined ? {} : { point: s.point }),
    ...(s.label === undefined ? {} : { label: s.label }),
    ...(s.substitute === undefined ? {} : { substitute: s.substitute }),
    ...(s.deviations === undefined ? {} : { deviations: s.deviations }),
    ...(o.diagnostics === undefined ? {} : { diagnostics: o.diagnostics }),
    ...(o.resultCheck === undefined ? {} : { resultCheck: o.resultCheck }),
    ...(textMapping === undefined ? {} : { textMapping }),
    ...sensitiveField(s, sensitiveDocuments),
  };
}

function tunedRun(t: TunedSystem): ReportRun {
  return {
    id: t.id,
    kind: 'tuned',
    fingerprint: `tuned:${t.group}:${t.method}`,
    node: 'tune',
    group: t.group,
    label: `${t.group}, point picked on ${t.method === 'split' ? `the ${t.choices[0]?.fold} split` : `${t.choices.length}-fold cross-validation`} by ${t.measure}`,
    tuning: { measure: t.measure, method: t.method, choices: t.choices, oracle: t.oracle },
  };
}

function strataCounts(es: EvalSet): Record<string, number> {
  const strata: Record<string, number> = {};
  for (const q of es.queries) strata[q.stratum] = (strata[q.stratum] ?? 0) + 1;
  return strata;
}

/** A pooled qrels judges documents not relevant too; qrels that list only relevant documents make Judged@k equal P@k, so judgment holes can only be read from the former. */
function judgesNonRelevant(qrels: Qrels, relevanceLevel: number): boolean {
  return [...qrels.values()].some((docs) => [...docs.values()].some((g) => g < relevanceLevel));
}

/** The judge of judged qrels, with its audit (under the config's `judge.audit.maxUpRate` when it has a judge block). */
function judgeField(cfg: ResolvedConfig, chosen: LoadedStudy['qrels'], es: EvalSet): Pick<ReportEvalSet, 'judge'> {
  const j = chosen.judge;
  if (j === undefined) return {};
  const { grades, gold: _gold, ...rest } = j;
  const audit = j.audit === undefined || cfg.judge === undefined ? j.audit : { ...j.audit, maxUpRate: cfg.judge.audit.maxUpRate };
  return { judge: { ...rest, ...(audit === undefined ? {} : { audit }), grades: gradeHistogram(grades, es) } };
}

/** Pairs per grade (0 to the highest seen, at least 3) of the judge's grades, per stratum of the test queries and over all of them. */
function gradeHistogram(grades: Qrels, es: EvalSet): Record<string, number[]> {
  let top = 3;
  for (const docs of grades.values()) for (const g of docs.values()) top = Math.max(top, g);
  const out: Record<string, number[]> = {};
  const bump = (key: string, g: number) => {
    const row = out[key] ?? new Array<number>(top + 1).fill(0);
    row[Math.max(0, g)] = (row[Math.max(0, g)] ?? 0) + 1;
    out[key] = row;
  };
  for (const q of es.queries) {
    for (const g of grades.get(q.id)?.values() ?? []) {
      bump(q.stratum, g);
      bump(OVERALL, g);
    }
  }
  return out;
}

function reportEvalSet(cfg: ResolvedConfig, study: LoadedStudy, scored: ScoredAblation): ReportEvalSet {
  const { es, qrels: chosen } = study;
  return {
    name: es.name,
    format: cfg.evalset.format,
    path: cfg.evalset.pathAsWritten,
    fingerprint: evalSetFingerprint(es),
    queries: es.queries.length,
    documents: es.documents.length,
    strata: strataCounts(es),
    notes: [...(es.notes ?? []), ...scored.notes],
    qrelsSource: chosen.source,
    ...judgeField(cfg, chosen, es),
    qrelsJudgesNonRelevant: judgesNonRelevant(scored.qrels, cfg.relevanceLevel),
    // A judge grades a pool, so judged qrels have holes whatever the eval set declares for its gold ones.
    qrelsCompleteness: chosen.source === 'gold' ? cfg.evalset.qrels : 'pooled',
  };
}

/**
 * What the report is built from: the eval set, every run with its per-query scores, curves, costs and examples,
 * the comparisons asked for, and the answer level when the study asks answer measures.
 */
export function reportInputOf(
  cfg: ResolvedConfig,
  study: LoadedStudy,
  executed: ExecutedPlan,
  scored: ScoredAblation,
  command: string,
  answerLevel?: AnswerLevel,
): ReportInput {
  const input = { ...plainReportInput(cfg, study, executed, scored, command), ...(answerLevel === undefined ? {} : { answerLevel }) };
  const goldOnly = scored.goldOnly === undefined ? undefined : goldOnlyVerdict(input, scored.goldOnly, cfg.parsedMeasures);
  return {
    ...input,
    ...(scored.condensed === undefined ? {} : { holes: holesCheckOf(input, scored.condensed, cfg.parsedMeasures) }),
    ...(goldOnly === undefined ? {} : { goldOnly }),
  };
}

/**
 * The report's runs: every system and tuned system the config reports (`answer.systems` may leave some out),
 * then the answer-only systems; and their per-query values.
 */
function reportRuns(cfg: ResolvedConfig, study: LoadedStudy, executed: ExecutedPlan, scored: ScoredAblation): Pick<ReportInput, 'runs' | 'perQuery'> {
  const reported = new Set(cfg.runIds);
  const runs = [
    ...[...executed.outcomes.values()].map((o) => reportRun(o, study.sensitiveDocuments, scored.qrels)),
    ...scored.tuned.map(tunedRun),
    ...answerOnlyRuns(cfg),
  ].filter((r) => reported.has(r.id));
  const all = Object.keys(scored.perQuery).every((id) => reported.has(id));
  return { runs, perQuery: all ? scored.perQuery : Object.fromEntries(Object.entries(scored.perQuery).filter(([id]) => reported.has(id))) };
}

function plainReportInput(cfg: ResolvedConfig, study: LoadedStudy, executed: ExecutedPlan, scored: ScoredAblation, command: string): ReportInput {
  return {
    name: cfg.name,
    ...(cfg.description === undefined ? {} : { description: cfg.description }),
    configHash: cfg.configHash,
    evalset: reportEvalSet(cfg, study, scored),
    ...reportRuns(cfg, study, executed, scored),
    measures: cfg.measures,
    queries: study.es.queries.map((q) => ({ id: q.id, stratum: q.stratum, text: q.text })),
    ...(scored.curves === undefined ? {} : { curves: scored.curves }),
    costs: costs(executed.outcomes),
    ...(scored.examples === undefined ? {} : { examples: scored.examples }),
    compare: cfg.compare,
    ...(cfg.gate === undefined ? {} : { gate: cfg.gate }),
    ...(scored.humanLabels === undefined ? {} : { humanLabels: scored.humanLabels }),
    command,
  };
}
