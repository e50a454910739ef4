/**
 * The functions of `harness/metrics` as the Library exports them: they take Qrels, Runs and unit maps as Maps
 * or in the plain-object form (`{ q1: { d1: 1 } }`), and measures as Measures or their names, check them, and
 * call the Map-based functions of evaluate.ts and ranking.ts, which the workbench itself calls directly. A
 * wrong shape is a TypeError naming the argument and what to pass (evalset/input.ts).
 */
import { kindOf, toQrels, toRun, toScores, toUnitMap, type MapLike, type QrelsLike, type RunLike } from '../../evalset/input.js';
import { evaluate as evaluateMaps, relevanceLevelProblem as relevanceLevelProblemOfMaps, type Evaluation } from './evaluate.js';
import { MEASURE_NAMES, parseMeasure, type Measure } from './measure.js';
import { rankDocIds as rankDocIdsOfMap } from './ranking.js';

/** Options of evaluate(). */
export interface EvaluateOptions {
  /** Grades >= this are relevant (trec_eval -l): an integer, default 1. A measure's own `rel=` parameter wins. */
  readonly relevanceLevel?: number;
  /**
   * The queries to score, in output order. Default: every qrels query, in id order. A listed query the run
   * lacks is zero-filled: scored as an empty ranking, which gives 0 for every measure except those that
   * describe the judgments alone (NumRel, IDCG), as under trec_eval -c.
   */
  readonly queries?: readonly string[];
  /**
   * docId -> unitId, as a Map or a plain object. When given, each query's ranking is mapped to units before
   * scoring: a unit takes the rank of its best-ranked member and appears once; the qrels must then judge
   * units. For scoring a turn-level run at session level.
   */
  readonly units?: MapLike<string>;
  /**
   * Turn docId -> session id, as a Map or a plain object: what LongMemEval's turn-to-session measures
   * (`Success-T2S@k`, `R-all-T2S@k`, `nDCG-LME-T2S@k`) read; they score the turn ranking, so no `units` then.
   */
  readonly sessions?: MapLike<string>;
}

const FN = 'evaluate';

function toMeasures(fn: string, measures: unknown): Measure[] {
  if (!Array.isArray(measures)) {
    throw new TypeError(`${fn}: measures must be an array of measure names or Measures, e.g. ['nDCG@10', 'AP']; got ${kindOf(measures)}`);
  }
  return measures.map((m: unknown, i) => {
    if (typeof m === 'string') return parseMeasure(m);
    const name = typeof m === 'object' && m !== null ? (m as { name?: unknown }).name : undefined;
    const params = typeof m === 'object' && m !== null ? (m as { params?: unknown }).params : undefined;
    if (typeof name !== 'string' || !MEASURE_NAMES.includes(name) || typeof params !== 'object' || params === null) {
      throw new TypeError(`${fn}: measures[${i}] is ${kindOf(m)}, not a measure; pass a name such as 'nDCG@10' or the result of parseMeasure()`);
    }
    return m as Measure;
  });
}

type MapOptions = { relevanceLevel?: number; queries?: readonly string[]; units?: ReadonlyMap<string, string>; sessions?: ReadonlyMap<string, string> };

function toOptions(opts: unknown): MapOptions {
  if (typeof opts !== 'object' || opts === null || Array.isArray(opts)) {
    throw new TypeError(`${FN}: options must be an object { relevanceLevel?, queries?, units?, sessions? }; got ${kindOf(opts)}`);
  }
  const o = opts as EvaluateOptions;
  const out: MapOptions = {};
  if (o.relevanceLevel !== undefined) {
    if (!Number.isSafeInteger(o.relevanceLevel)) {
      throw new TypeError(`${FN}: options.relevanceLevel is ${kindOf(o.relevanceLevel)}; it must be an integer grade (trec_eval -l), default 1`);
    }
    out.relevanceLevel = o.relevanceLevel;
  }
  if (o.queries !== undefined) {
    if (!Array.isArray(o.queries)) throw new TypeError(`${FN}: options.queries must be an array of query ids; got ${kindOf(o.queries)}`);
    o.queries.forEach((q: unknown, i) => {
      if (typeof q !== 'string') throw new TypeError(`${FN}: options.queries[${i}] is ${kindOf(q)}; a query id must be a string`);
    });
    out.queries = o.queries;
  }
  if (o.units !== undefined) out.units = toUnitMap(FN, 'options.units', o.units);
  if (o.sessions !== undefined) out.sessions = toUnitMap(FN, 'options.sessions', o.sessions);
  return out;
}

/**
 * Scores `run` against `qrels` with trec_eval's semantics (ranking by score desc then docId desc) and returns
 * per-query values, keyed by each measure's canonical spelling (`'ndcg_cut_10'` is `nDCG@10`); averaging is
 * the caller's. `qrels` and `run` are Maps or plain objects, `{ q1: { d1: 1 } }` and `{ q1: { d1: 0.9 } }`;
 * the same data gives the same numbers either way. Pure: inputs are not modified.
 *
 * @throws TypeError when an argument has the wrong shape: a non-object, a grade that is not an integer, a
 * score that is not a finite number, a measure that is not one. UsageError for an unknown measure name.
 */
export function evaluate(qrels: QrelsLike, run: RunLike, measures: readonly (Measure | string)[], opts: EvaluateOptions = {}): Evaluation {
  const q = toQrels(FN, 'qrels', qrels);
  const r = toRun(FN, 'run', run);
  return evaluateMaps(q, r, toMeasures(FN, measures), toOptions(opts));
}

/**
 * Why `level` cannot be the relevance level of these qrels (Maps or plain objects), or undefined when it can:
 * a level above every grade (or a non-integer one) makes no document relevant, so every measure that counts
 * relevant documents is 0 for every query. `measures` narrows the message to those it zeroes.
 */
export function relevanceLevelProblem(qrels: QrelsLike, level: number, measures?: readonly string[]): string | undefined {
  const fn = 'relevanceLevelProblem';
  if (typeof level !== 'number') throw new TypeError(`${fn}: level is ${kindOf(level)}; pass an integer grade`);
  if (measures !== undefined && (!Array.isArray(measures) || measures.some((m) => typeof m !== 'string'))) {
    throw new TypeError(`${fn}: measures must be an array of measure names, e.g. ['nDCG@10', 'AP']; got ${kindOf(measures)}`);
  }
  return relevanceLevelProblemOfMaps(
    toQrels(fn, 'qrels', qrels),
    level,
    measures?.map((m) => parseMeasure(m)),
  );
}

/** The docIds of one query's run entries (`docId -> score`, a Map or a plain object) in trec_eval order. */
export function rankDocIds(docs: MapLike<number>): string[] {
  return rankDocIdsOfMap(toScores('rankDocIds', 'docs', docs));
}
