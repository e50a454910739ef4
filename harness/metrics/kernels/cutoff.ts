import { REL_NONPOOL, REL_UNJUDGED, type JudgedRanking } from '../ranking.js';

/**
 * Kernels measured at rank cutoffs. Each fills `out[off + j]` for every cutoff `cutoffs[j]`; cutoffs must
 * be positive, ascending and distinct (trec_eval enforces this at parse time, so do parseMeasure and the
 * trec_eval flag parser). A cutoff deeper than the ranking counts the missing ranks as retrieved
 * non-relevant documents, as trec_eval does ("P@20 of a 15-document ranking with 4 relevant is 4/20").
 * `level` is the relevance level: grades >= level are relevant.
 */

/** out[off + c] = how many of the top cutoffs[c] documents have a grade >= level: the count the kernels below share. */
function relevantCountsAt(r: JudgedRanking, level: number, cutoffs: ArrayLike<number>, out: Float64Array, off: number): void {
  const rels = r.rels;
  let c = 0;
  let relSoFar = 0;
  for (let i = 0; i < r.numRet; i++) {
    if (i === cutoffs[c]) {
      out[off + c] = relSoFar;
      if (++c === cutoffs.length) return;
    }
    if (rels[i]! >= level) relSoFar++;
  }
  for (; c < cutoffs.length; c++) out[off + c] = relSoFar;
}

/** P@k = |relevant in top k| / k. Cite: Buckley & Voorhees, "Retrieval System Evaluation", MIT Press 2005. */
export function precisionAt(r: JudgedRanking, level: number, cutoffs: ArrayLike<number>, out: Float64Array, off = 0): void {
  relevantCountsAt(r, level, cutoffs, out, off);
  for (let c = 0; c < cutoffs.length; c++) out[off + c] = out[off + c]! / cutoffs[c]!;
}

/** R@k = |relevant in top k| / |relevant|; 0 for a query without relevant documents. */
export function recallAt(r: JudgedRanking, level: number, cutoffs: ArrayLike<number>, out: Float64Array, off = 0): void {
  if (r.numRel === 0) return;
  relevantCountsAt(r, level, cutoffs, out, off);
  for (let c = 0; c < cutoffs.length; c++) out[off + c] = out[off + c]! / r.numRel;
}

/** RelP@k = |relevant in top k| / min(k, |relevant|): precision up to R, recall after. 0 without relevant docs. */
export function relativePrecisionAt(r: JudgedRanking, level: number, cutoffs: ArrayLike<number>, out: Float64Array, off = 0): void {
  if (r.numRel === 0) return;
  relevantCountsAt(r, level, cutoffs, out, off);
  for (let c = 0; c < cutoffs.length; c++) {
    const k = cutoffs[c]!;
    out[off + c] = out[off + c]! / (k > r.numRel ? r.numRel : k);
  }
}

/** Success@k = 1 if a relevant document is in the top k, else 0 (S. Tomlinson). */
export function successAt(r: JudgedRanking, level: number, cutoffs: ArrayLike<number>, out: Float64Array, off = 0): void {
  relevantCountsAt(r, level, cutoffs, out, off);
  for (let c = 0; c < cutoffs.length; c++) out[off + c] = out[off + c]! > 0 ? 1.0 : 0.0;
}

/**
 * AP@k = (1/|relevant|) Σ_{relevant d at rank i <= k} P@i: average precision truncated at k, still divided
 * by all relevant documents (trec_eval map_cut). 0 without relevant documents.
 */
export function apAt(r: JudgedRanking, level: number, cutoffs: ArrayLike<number>, out: Float64Array, off = 0): void {
  if (r.numRel === 0) return;
  const rels = r.rels;
  let c = 0;
  let relSoFar = 0;
  let sum = 0.0;
  for (let i = 0; i < r.numRet; i++) {
    if (i === cutoffs[c]) {
      out[off + c] = sum / r.numRel;
      if (++c === cutoffs.length) return;
    }
    if (rels[i]! >= level) {
      relSoFar++;
      sum += relSoFar / (i + 1);
    }
  }
  for (; c < cutoffs.length; c++) out[off + c] = sum / r.numRel;
}

/**
 * Unj@k (trec_eval `unj`) = |top-k documents without a qrels entry or with a negative grade| / k; ranks past
 * the end of the ranking count as judged. A "red flag" measure for pool coverage.
 */
export function unjudgedAt(r: JudgedRanking, cutoffs: ArrayLike<number>, out: Float64Array, off = 0): void {
  const rels = r.rels;
  let c = 0;
  let unj = 0;
  for (let i = 0; i < r.numRet; i++) {
    if (i === cutoffs[c]) {
      out[off + c] = unj / i;
      if (++c === cutoffs.length) return;
    }
    const g = rels[i]!;
    if (g === REL_NONPOOL || g === REL_UNJUDGED) unj++;
  }
  for (; c < cutoffs.length; c++) out[off + c] = unj / cutoffs[c]!;
}

/**
 * Judged@k = |top-k documents that have a qrels entry (any grade, negative included)| / k. Ranks past the
 * end of the ranking count as not judged, as in ir_measures' Judged@k (MacAvaney et al., "Streamlining
 * Evaluation with ir-measures", ECIR 2022, doi:10.1007/978-3-030-99739-7_38). Report it next to every arm:
 * a low value means the comparison rests on holes in the judgments.
 */
export function judgedAt(r: JudgedRanking, cutoffs: ArrayLike<number>, out: Float64Array, off = 0): void {
  const rels = r.rels;
  let c = 0;
  let judged = 0;
  for (let i = 0; i < r.numRet; i++) {
    if (i === cutoffs[c]) {
      out[off + c] = judged / i;
      if (++c === cutoffs.length) return;
    }
    if (rels[i]! !== REL_NONPOOL) judged++;
  }
  for (; c < cutoffs.length; c++) out[off + c] = judged / cutoffs[c]!;
}

/**
 * R-all@k = 1 if every relevant document is in the top k, else 0: the memory-retrieval question "did the
 * agent get all the evidence it needs". A query without relevant documents scores 0 (like R@k, so the
 * vacuous case never inflates a mean).
 */
export function allRelevantAt(r: JudgedRanking, level: number, cutoffs: ArrayLike<number>, out: Float64Array, off = 0): void {
  if (r.numRel === 0) return;
  relevantCountsAt(r, level, cutoffs, out, off);
  for (let c = 0; c < cutoffs.length; c++) out[off + c] = out[off + c] === r.numRel ? 1.0 : 0.0;
}
