import type { EvalSet, Qrels, Query, Run } from '../../evalset/types.js';
import { scoreRuns } from '../compare/score.js';
import type { ResolvedConfig } from '../config/load.js';
import type { ExecutedPlan } from '../execution/run-plan.js';
import { measureNamed } from '../compare/measures.js';
import { isTested, type Measure } from '../metrics/measure.js';
import { splitMeasures } from '../config/answer-block.js';
import type { HumanLabelSet } from '../evidence/labels.js';
import { humanQrels } from '../evidence/labels.js';
import type { HumanLabelsInput } from '../decision/evidence-types.js';
import { type AnswerLabelSet, answerHumanInput } from '../evidence/answer-labels.js';
import type { QueryExample, RecallCurves } from '../decision/types.js';
import { type CondensedScores, condensedScores } from './condensed.js';
import { type GoldOnlyScores, goldOnlyScores } from './gold-only.js';
import { queryExamples, recallCurves } from './evidence.js';
import type { LoadedStudy } from './load.js';
import { scoringUnit } from './scopes.js';
import { tuneByFolds, tuneBySplit, type TunedSystem } from './tune.js';

/** runId -> measure -> per-query values, in eval-set query order. */
export type PerQuery = Record<string, Record<string, number[]>>;

/** The pair whose most different queries the report shows, with those queries. */
export interface ExamplePair {
  readonly baseline: string;
  readonly system: string;
  readonly measure: string;
  readonly queries: readonly QueryExample[];
}

/** An ablation scored: every report run (tuned systems included) over the test queries, with what the report shows beside the means. */
export interface ScoredAblation {
  /** The report's runs over the test queries, tuned systems included. */
  readonly runs: ReadonlyMap<string, Run>;
  readonly perQuery: PerQuery;
  readonly means: ReadonlyMap<string, ReadonlyMap<string, number>>;
  readonly tuned: readonly TunedSystem[];
  /** Absent when the study asks no retrieval measure (its queries need not have judgments). */
  readonly curves?: RecallCurves;
  readonly examples?: ExamplePair;
  /** Notes of the scoring (queries without results, ...), for the report's eval-set notes. */
  readonly notes: readonly string[];
  /** The qrels scored with (moved to the scoring unit when `unit:` is set). */
  readonly qrels: Qrels;
  /** On judged or pooled qrels: the decisions' measures on condensed lists, and Bpref (ADR 0040). */
  readonly condensed?: CondensedScores;
  /**
   * The human-labelled queries scored under the human qrels, when the config names `humanLabels:`; or, with
   * `answer.humanLabels`, the questions whose every answer is hand-labelled, with the human `Acc`.
   */
  readonly humanLabels?: HumanLabelsInput;
  /** On judged qrels with gold beside them: the gate's pair on its measure scored on gold alone. */
  readonly goldOnly?: GoldOnlyScores;
}

type Unit = ReturnType<typeof scoringUnit>;

const scoreOptions = (cfg: ResolvedConfig, unit: Unit) => ({
  relevanceLevel: cfg.relevanceLevel,
  ...(unit.units ? { units: unit.units } : {}),
  ...(unit.sessions ? { sessions: unit.sessions } : {}),
});

/** A run restricted to `ids`, in that order (a query it did not answer has no results). */
function only(run: Run, ids: readonly string[]): Run {
  return new Map(ids.map((q) => [q, run.get(q) ?? new Map<string, number>()] as const));
}

/** A run without the queries outside `ids` (a question the answer stage left out of the study). */
function onlyPresent(run: Run, ids: ReadonlySet<string>): Run {
  return [...run.keys()].every((q) => ids.has(q)) ? run : new Map([...run].filter(([q]) => ids.has(q)));
}

/**
 * Every system's run over the test queries: with a dev split the systems also answered the dev queries; when
 * the answer stage left questions out of the study, their results are left out too.
 */
function testRuns(executed: ExecutedPlan, study: LoadedStudy): Map<string, Run> {
  const ids = study.es.queries.map((q) => q.id);
  const set = new Set(ids);
  return new Map([...executed.outcomes].map(([id, o]) => [id, study.dev ? only(o.run, ids) : onlyPresent(o.run, set)] as const));
}

/**
 * The config as retrieval scoring reads it: only its retrieval measures, its gate only when it decides on one,
 * its runs only those with a run. The answer measures' values come from the answer stage.
 */
export function retrievalView(cfg: ResolvedConfig): ResolvedConfig {
  if (cfg.answer === undefined) return cfg;
  const { retrieval } = splitMeasures(cfg.measures.map((m) => measureNamed(cfg.parsedMeasures, m)));
  const only = new Set(cfg.answer.answerOnly.map((s) => s.id));
  const { gate, ...rest } = cfg;
  return {
    ...rest,
    measures: retrieval,
    runIds: cfg.runIds.filter((id) => !only.has(id)),
    ...(gate !== undefined && retrieval.includes(gate.measure) ? { gate } : {}),
  };
}

/** Per-query scores of the grid members on the dev split, on the tuning measure. */
function devScores(cfg: ResolvedConfig, executed: ExecutedPlan, dev: EvalSet, measures: readonly Measure[]): PerQuery {
  const unit = scoringUnit(cfg, dev);
  const grouped = new Set([...cfg.plan.groups.values()].flat());
  const devIds = dev.queries.map((q) => q.id);
  const runs = new Map([...executed.outcomes].filter(([id]) => grouped.has(id)).map(([id, o]) => [id, only(o.run, devIds)] as const));
  const tuning = measures.filter((_, i) => cfg.measures[i] === cfg.tune?.measure);
  return scoreRuns(unit.qrels, runs, tuning, devIds, scoreOptions(cfg, unit)).perQuery;
}

/** One tuned system per grid: picked on the dev split when there is one, else by cross-validation over the test queries. */
function tuneGrids(cfg: ResolvedConfig, executed: ExecutedPlan, study: LoadedStudy, perQuery: PerQuery, measures: readonly Measure[]): TunedSystem[] {
  const t = cfg.tune;
  if (!t) return [];
  const { es, dev } = study;
  const onDev = dev ? devScores(cfg, executed, dev, measures) : undefined;
  return [...cfg.plan.groups].map(([group, members]) =>
    onDev && dev
      ? tuneBySplit(group, members, perQuery, onDev, {
          measure: t.measure,
          split: t.split as string,
          testQueries: es.queries.length,
          devQueries: dev.queries.length,
        })
      : tuneByFolds(group, members, perQuery, es.queries, { measure: t.measure, folds: t.folds as number, seed: t.seed }),
  );
}

/** A tuned system's run: each test query answered by the point picked for it. */
function tunedRun(t: TunedSystem, runs: ReadonlyMap<string, Run>, queries: readonly Query[]): Run {
  return new Map(queries.map((q, i) => [q.id, runs.get(t.picks[i] as string)?.get(q.id) ?? new Map<string, number>()] as const));
}

function meansOf(perQuery: PerQuery): Map<string, Map<string, number>> {
  const means = new Map<string, Map<string, number>>();
  for (const [id, byMeasure] of Object.entries(perQuery)) {
    means.set(id, new Map(Object.entries(byMeasure).map(([m, v]) => [m, v.reduce((a, b) => a + b, 0) / v.length] as const)));
  }
  return means;
}

/**
 * The pair whose most different queries the report shows: the gate's, else the baseline against the system
 * with the best overall mean on the first tested measure.
 */
function examplePair(cfg: ResolvedConfig, perQuery: PerQuery, measures: readonly Measure[]): Omit<ExamplePair, 'queries'> | undefined {
  const baseline = cfg.gate?.baseline ?? cfg.compare.baseline ?? (cfg.runIds[0] as string);
  if (cfg.gate) return { baseline, system: cfg.gate.candidate, measure: cfg.gate.measure };
  const measure = cfg.measures.find((_, i) => isTested(measures[i] as Measure));
  if (measure === undefined) return undefined;
  const mean = (id: string) => {
    const v = perQuery[id]?.[measure] ?? [];
    return v.reduce((a, b) => a + b, 0) / Math.max(1, v.length);
  };
  const best = cfg.runIds.filter((id) => id !== baseline).sort((a, b) => mean(b) - mean(a))[0];
  return best === undefined ? undefined : { baseline, system: best, measure };
}

function examplesOf(
  cfg: ResolvedConfig,
  perQuery: PerQuery,
  measures: readonly Measure[],
  es: EvalSet,
  runs: ReadonlyMap<string, Run>,
): ExamplePair | undefined {
  const pair = examplePair(cfg, perQuery, measures);
  return pair ? { ...pair, queries: queryExamples(pair, perQuery, es.queries, runs, es.documents) } : undefined;
}

/**
 * Scores an executed plan on the test queries: per-query values of every measure, one tuned system per grid
 * (picked without leakage), the means, recall curves and the example queries of one pair.
 */
export function scoreAblation(
  given: ResolvedConfig,
  study: LoadedStudy,
  executed: ExecutedPlan,
  labels?: HumanLabelSet,
  answers?: Readonly<Record<string, Record<string, number[]>>>,
  answerLabels?: AnswerLabelSet,
): ScoredAblation {
  const cfg = retrievalView(given);
  const { es } = study;
  const measures = cfg.measures.map((m) => measureNamed(cfg.parsedMeasures, m).measure);
  const unit = scoringUnit(cfg, es);
  const runs = testRuns(executed, study);
  const scored = scoreRuns(
    unit.qrels,
    runs,
    measures,
    es.queries.map((q) => q.id),
    scoreOptions(cfg, unit),
  );
  const perQuery: PerQuery = scored.perQuery;
  const tuned = tuneGrids(cfg, executed, study, perQuery, measures);
  for (const t of tuned) {
    perQuery[t.id] = t.perQuery;
    runs.set(t.id, tunedRun(t, runs, es.queries));
  }
  for (const [id, byMeasure] of Object.entries(answers ?? {})) perQuery[id] = { ...perQuery[id], ...byMeasure };
  const curves = measures.length === 0 ? undefined : recallCurves(unit.qrels, runs, es.queries, cfg.topK, scoreOptions(cfg, unit));
  const examples = examplesOf(cfg, perQuery, measures, es, runs);
  const human = labels && cfg.humanLabels ? scoreHuman(cfg, study.es, runs, measures, labels) : answerHuman(given, es, perQuery, answerLabels);
  const out = {
    runs,
    perQuery,
    means: meansOf(perQuery),
    tuned,
    ...(curves === undefined ? {} : { curves }),
    ...(examples ? { examples } : {}),
    notes: scored.notes,
    qrels: unit.qrels,
    ...(human ? { humanLabels: human } : {}),
  };
  const condensed = condensedScores(cfg, study, executed, out);
  const goldOnly = goldOnlyScores(cfg, study, runs);
  return { ...out, ...(condensed === undefined ? {} : { condensed }), ...(goldOnly === undefined ? {} : { goldOnly }) };
}

/**
 * Every run (tuned systems included) on the labelled queries under the human qrels, through the same scoring
 * path and unit as the judged scores, so a per-query difference between the two is the labels' alone.
 */
function scoreHuman(cfg: ResolvedConfig, es: EvalSet, runs: ReadonlyMap<string, Run>, measures: readonly Measure[], labels: HumanLabelSet): HumanLabelsInput {
  const inEvalSet = new Set(labels.complete);
  const ids = es.queries.map((q) => q.id).filter((q) => inEvalSet.has(q));
  const unit = scoringUnit(cfg, { ...es, qrels: humanQrels(es.qrels, labels) });
  const perQuery = scoreRuns(unit.qrels, runs, measures, ids, scoreOptions(cfg, unit)).perQuery;
  return {
    file: cfg.humanLabels?.asWritten as string,
    kind: labels.kind,
    qrelsVersion: labels.qrelsVersion,
    queries: ids,
    incomplete: labels.incomplete.length,
    perQuery,
    pairs: labels.pairs.map((p) => ({ queryId: p.queryId, docId: p.docId, stratum: p.stratum, human: p.human, judge: p.llm })),
    relevanceLevel: cfg.relevanceLevel,
    thresholds: { minTau: cfg.validation.minTau, minQueries: cfg.validation.minQueries, resamples: cfg.validation.resamples },
  };
}

/**
 * The hand labels of answers (`answer.humanLabels`, checked against this run's answers) as the decision stage's
 * human labels: the questions labelled for every system, with the human `Acc` and every other measure as scored.
 */
function answerHuman(cfg: ResolvedConfig, es: EvalSet, perQuery: PerQuery, set: AnswerLabelSet | undefined): HumanLabelsInput | undefined {
  const file = cfg.answer?.humanLabels?.asWritten;
  if (set === undefined || file === undefined) return undefined;
  return answerHumanInput(set, {
    file,
    queries: es.queries,
    perQuery,
    relevanceLevel: cfg.relevanceLevel,
    thresholds: { minTau: cfg.validation.minTau, minQueries: cfg.validation.minQueries, resamples: cfg.validation.resamples },
  });
}
