/**
 * Rankings joined with their judgments, the input of every kernel. The ranking convention itself (docs/adr/
 * 0001-tie-order.md: score descending, then docId descending in byte order) is evalset/rank-order.ts's, where
 * the Run is defined; it is re-exported here, where the kernels and their callers import it (ADR 0001 names
 * this file).
 */

export { compareIds, compareRanked, rankDocIds } from '../../evalset/rank-order.js';

/** Relevance value of a retrieved document that has no qrels entry (trec_eval RELVALUE_NONPOOL). */
export const REL_NONPOOL = -1;
/** Relevance value of a retrieved document whose qrels grade is negative (trec_eval RELVALUE_UNJUDGED). */
export const REL_UNJUDGED = -2;

/**
 * One query's ranking joined with its judgments, the input of every kernel (trec_eval's RES_RELS).
 * `rels[i]` is the qrels grade of the document at rank i+1, REL_NONPOOL if it has no qrels entry and
 * REL_UNJUDGED if its grade is negative. Counts that depend on the relevance level use the level the
 * structure was built with.
 */
export interface JudgedRanking {
  readonly rels: Int32Array;
  readonly numRet: number;
  /** Retrieved documents with grade >= relevance level. */
  readonly numRelRet: number;
  readonly numNonpool: number;
  readonly numUnjudged: number;
  /** Judged documents (retrieved or not) with grade >= relevance level. */
  readonly numRel: number;
  /** relLevels[g] = number of judged documents with grade g (g >= 0), retrieved or not. */
  readonly relLevels: Int32Array;
  /** 1 + the highest grade g with relLevels[g] > 0; 0 when no document has a grade >= 0. */
  readonly numRelLevels: number;
  /** The turns' sessions, set by evaluate() only when a turn-to-session measure (`*-T2S@k`) is asked for. */
  readonly turnSessions?: TurnSessions;
}

/** Where the turns of one query's ranking and qrels belong, for LongMemEval's turn-to-session measures. */
export interface TurnSessions {
  /** `ranked[i]`: the session of the turn at rank i+1 (parallel to `rels`). */
  readonly ranked: readonly string[];
  /** The session and grade of every judged turn, retrieved or not. */
  readonly judged: readonly (readonly [session: string, grade: number])[];
}

/**
 * Builds one query's JudgedRanking from its ranking values in rank order (`rankedGrades[i]`: the grade at
 * rank i+1, REL_UNJUDGED for a negative grade, REL_NONPOOL without an entry) and the per-grade counts of its
 * qrels. `maxDocs` truncates the ranking (trec_eval -M); `judgedOnly` drops documents without a grade >= 0,
 * keeping rank order (trec_eval -J).
 */
export function judgeRankingWithLevels(
  rankedGrades: Int32Array,
  relLevels: Int32Array,
  relevanceLevel: number,
  opts: { maxDocs?: number; judgedOnly?: boolean } = {},
): JudgedRanking {
  let n = rankedGrades.length;
  if (opts.maxDocs !== undefined && n > opts.maxDocs) n = Math.max(0, opts.maxDocs);
  let rels: Int32Array;
  let numRelRet = 0;
  let numNonpool = 0;
  let numUnjudged = 0;
  if (opts.judgedOnly) {
    let k = 0;
    for (let i = 0; i < n; i++) if (rankedGrades[i]! >= 0) k++;
    rels = new Int32Array(k);
    k = 0;
    for (let i = 0; i < n; i++) {
      const g = rankedGrades[i]!;
      if (g < 0) continue;
      rels[k++] = g;
      if (g >= relevanceLevel) numRelRet++;
    }
  } else {
    rels = n === rankedGrades.length ? rankedGrades : rankedGrades.subarray(0, n);
    for (let i = 0; i < n; i++) {
      const g = rels[i]!;
      if (g === REL_NONPOOL) numNonpool++;
      else if (g === REL_UNJUDGED) numUnjudged++;
      else if (g >= relevanceLevel) numRelRet++;
    }
  }
  let numRel = 0;
  let numRelLevels = 0;
  for (let g = 0; g < relLevels.length; g++) {
    if (relLevels[g]! > 0) {
      numRelLevels = g + 1;
      if (g >= relevanceLevel) numRel += relLevels[g]!;
    }
  }
  return { rels, numRet: rels.length, numRelRet, numNonpool, numUnjudged, numRel, relLevels, numRelLevels };
}
