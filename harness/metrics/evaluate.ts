import { HarnessError, UsageError } from '../errors.js';
import type { Qrels, Run } from '../../evalset/types.js';
import { formatMeasure, measureKernel, needsTurnSessions, usesRelevanceLevel, type Measure } from './measure.js';
import { compareIds, judgeRankingWithLevels, rankDocIds, REL_NONPOOL, REL_UNJUDGED, type JudgedRanking, type TurnSessions } from './ranking.js';

/** Options of evaluate(). */
export interface EvaluateOptions {
  /** Grades >= this are relevant (trec_eval -l). Default 1. A measure's own `rel=` parameter wins. */
  readonly relevanceLevel?: number;
  /**
   * The queries to score, in output order. Default: every qrels query, in id order. A listed query the run
   * lacks is zero-filled: scored as an empty ranking, which gives 0 for every measure except those that
   * describe the judgments alone (NumRel, IDCG), as under trec_eval -c.
   */
  readonly queries?: readonly string[];
  /**
   * docId -> unitId. When given, each query's ranking is mapped to units before scoring: a unit takes the
   * rank of its best-ranked member and appears once; the qrels must then judge units. For scoring a
   * turn-level run at session level.
   */
  readonly units?: ReadonlyMap<string, string>;
  /**
   * Turn docId -> session id, which LongMemEval's turn-to-session measures (`Success-T2S@k`, `R-all-T2S@k`,
   * `nDCG-LME-T2S@k`) need; they score the turn-level ranking, so `units` must then be absent.
   */
  readonly sessions?: ReadonlyMap<string, string>;
}

/** Per-query values of every measure, plus which queries were filled or dropped (never silently). */
export interface Evaluation {
  /** canonical measure -> queryId -> value, for every query in queryIds. */
  readonly perQuery: ReadonlyMap<string, ReadonlyMap<string, number>>;
  readonly queryIds: readonly string[];
  /** Scored queries the run has no results for (scored as an empty ranking). */
  readonly zeroFilledQueries: readonly string[];
  /** Run queries outside the scored set (absent from the qrels, or not listed in `queries`). */
  readonly droppedRunQueries: readonly string[];
}

const EMPTY = new Map<string, number>();

/**
 * Scores `run` against `qrels` with trec_eval's semantics (ranking by score desc then docId desc; see
 * ranking.ts) and returns per-query values; averaging is the caller's (report/). Pure: inputs are not
 * modified. Conventions: docs/adr/0001-tie-order.md, 0002-averaged-queries.md, 0003-ndcg-gain.md.
 */
export function evaluate(qrels: Qrels, run: Run, measures: readonly Measure[], opts: EvaluateOptions = {}): Evaluation {
  const level = opts.relevanceLevel ?? 1;
  const queryIds = opts.queries ? [...opts.queries] : [...qrels.keys()].sort(compareIds);
  const scored = new Set(queryIds);
  const names = measures.map(formatMeasure);
  const kernels = measures.map(measureKernel);
  const levels = measures.map((m) => (usesRelevanceLevel(m) ? (m.params.rel ?? level) : level));
  const perQuery = new Map<string, Map<string, number>>();
  for (const n of names) if (!perQuery.has(n)) perQuery.set(n, new Map());
  const zeroFilled: string[] = [];
  const scratch = new Float64Array(1);
  const sessions = turnSessionMap(measures, opts);
  for (const qid of queryIds) {
    const judged = qrels.get(qid) ?? EMPTY;
    const docs = run.get(qid);
    if (!docs || docs.size === 0) zeroFilled.push(qid);
    const ids = docs ? rankDocIds(docs) : [];
    const ranked = rankedGrades(qid, ids, judged, opts.units);
    const turnSessions = sessions && turnSessionsOf(qid, ids, judged, sessions);
    const relLevels = gradeCounts(judged);
    const byLevel = new Map<number, JudgedRanking>();
    measures.forEach((m, i) => {
      const l = levels[i]!;
      let r = byLevel.get(l);
      if (!r) {
        r = judgeRankingWithLevels(ranked, relLevels, l);
        if (turnSessions) r = { ...r, turnSessions };
        byLevel.set(l, r);
      }
      const v = kernels[i]!(r, m, l, scratch);
      perQuery.get(names[i]!)!.set(qid, Number.isFinite(v) ? v : 0);
    });
  }
  const dropped = [...run.keys()].filter((q) => !scored.has(q));
  return { perQuery, queryIds, zeroFilledQueries: zeroFilled, droppedRunQueries: dropped };
}

function gradeCounts(judged: ReadonlyMap<string, number>): Int32Array {
  let max = -1;
  for (const g of judged.values()) if (g > max) max = g;
  const levels = new Int32Array(Math.max(0, max + 1));
  for (const g of judged.values()) if (g >= 0) levels[g]! += 1;
  return levels;
}

/**
 * The turn -> session map when a turn-to-session measure is asked for, else undefined; refused (exit 2) without
 * one, or with `units`, which would score sessions where these measures read turns.
 */
function turnSessionMap(measures: readonly Measure[], opts: EvaluateOptions): ReadonlyMap<string, string> | undefined {
  const asked = measures.filter(needsTurnSessions).map(formatMeasure);
  if (asked.length === 0) return undefined;
  const what = `${asked.join(', ')} (LongMemEval's turn-to-session numbers)`;
  if (opts.units) {
    throw new UsageError(`${what} score the turn ranking and map it to sessions themselves; they cannot be scored at a unit`, {
      hint: 'score the turn-level eval set without `unit:`; Success@k, R-all@k and nDCG-LME@k are the measures to use at unit session',
    });
  }
  if (!opts.sessions) {
    throw new UsageError(`${what} need the session of every turn, and none was given`, {
      hint: 'load LongMemEval with `options: { unit: turn }`: its `session` unit map gives each turn its session',
    });
  }
  return opts.sessions;
}

/** The sessions of one query's ranked and judged turns; a turn without one is an error, never a guess. */
function turnSessionsOf(qid: string, ids: readonly string[], judged: ReadonlyMap<string, number>, sessions: ReadonlyMap<string, string>): TurnSessions {
  const of = (id: string, role: string) => {
    const s = sessions.get(id);
    if (s === undefined) throw new HarnessError(`query ${qid}: ${role} turn "${id}" has no session in the eval set's session map`);
    return s;
  };
  return { ranked: ids.map((id) => of(id, 'retrieved')), judged: [...judged].map(([id, grade]) => [of(id, 'judged'), grade] as const) };
}

function rankedGrades(qid: string, docIds: readonly string[], judged: ReadonlyMap<string, number>, units: ReadonlyMap<string, string> | undefined): Int32Array {
  let ids = docIds;
  if (units) {
    const seen = new Set<string>();
    const mapped: string[] = [];
    for (const id of docIds) {
      const u = units.get(id);
      if (u === undefined) throw new HarnessError(`query ${qid}: retrieved document "${id}" has no unit in the eval set's unit map`);
      if (!seen.has(u)) {
        seen.add(u);
        mapped.push(u);
      }
    }
    ids = mapped;
  }
  const out = new Int32Array(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const g = judged.get(ids[i]!);
    out[i] = g === undefined ? REL_NONPOOL : g < 0 ? REL_UNJUDGED : g;
  }
  return out;
}

/**
 * Why `level` cannot be the relevance level of these qrels, or undefined when it can: a level above every
 * grade (or a non-integer one) makes no document relevant, so every measure that counts relevant documents
 * (AP, RR, P, R, Success, R-all, ...) is 0 for every query and every arm: a plausible-looking zero, never a
 * finding. `measures` (read already: the library API reads names, a study's config loader its list) narrows
 * the message to those it zeroes; when none of them depends on the level (nDCG, Judged), there is no problem.
 * Pure; callers decide to refuse or warn.
 */
export function relevanceLevelProblem(qrels: Qrels, level: number, measures?: readonly Measure[]): string | undefined {
  let highest = -Infinity;
  for (const docs of qrels.values()) for (const g of docs.values()) if (g > highest) highest = g;
  return relevanceLevelProblemOfGrade(highest, level, measures);
}

/** relevanceLevelProblem() given the highest grade of the qrels (-Infinity for qrels with no judgment). */
export function relevanceLevelProblemOfGrade(highest: number, level: number, measures?: readonly Measure[]): string | undefined {
  if (!Number.isInteger(level)) return `relevance level ${level} is not an integer grade`;
  if (highest === -Infinity || level <= highest) return undefined;
  const zeroed = measures === undefined ? undefined : measures.filter(usesRelevanceLevel).map(formatMeasure);
  if (zeroed !== undefined && zeroed.length === 0) return undefined;
  const which = zeroed === undefined ? 'every measure that counts relevant documents (AP, RR, P, R, Success, R-all, ...)' : zeroed.join(', ');
  return (
    `relevance level ${level} is above the highest grade in the qrels (${highest}): no document is relevant, so ${which} ` +
    `would be 0 for every query; ${highest >= 1 ? `use a level of ${highest} or less` : 'these qrels grade no document relevant (1 or more)'}`
  );
}
