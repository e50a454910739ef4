import type { JudgedRanking } from '../ranking.js';

/**
 * Set-based kernels: they look at the retrieved set as a whole, not at its order. Each is a pure function
 * of one query's JudgedRanking (ranking.ts) and returns trec_eval's per-query value, including its value
 * for degenerate inputs (0 when a denominator is 0). Contingency table notation, as in trec_eval:
 * a = relevant retrieved, b = non-relevant retrieved, c = relevant not retrieved, d = the rest.
 * Cite: C. Buckley and E. M. Voorhees, "Retrieval System Evaluation", in TREC: Experiment and Evaluation in
 * Information Retrieval, MIT Press, 2005 (ISBN 978-0-262-22073-6).
 */

/** NumRet: documents retrieved (after -M / -J). Summed, not averaged, over queries. */
export function numRet(r: JudgedRanking): number {
  return r.numRet;
}

/** NumRel: judged documents with grade >= the relevance level. Summed over queries. */
export function numRel(r: JudgedRanking): number {
  return r.numRel;
}

/** NumRelRet: retrieved documents with grade >= the relevance level. Summed over queries. */
export function numRelRet(r: JudgedRanking): number {
  return r.numRelRet;
}

/** NumNonrelJudgedRet: retrieved documents judged below the relevance level (grade >= 0). Summed. */
export function numNonrelJudgedRet(r: JudgedRanking): number {
  return r.numRet - r.numNonpool - r.numUnjudged - r.numRelRet;
}

/** SetP = a / (a + b); 0 when nothing is retrieved. */
export function setP(r: JudgedRanking): number {
  return r.numRet ? r.numRelRet / r.numRet : 0;
}

/** SetRelP = a / min(a + b, a + c): precision relative to the best possible for this set size. */
export function setRelP(r: JudgedRanking): number {
  return r.numRet && r.numRel ? r.numRelRet / Math.min(r.numRet, r.numRel) : 0;
}

/** SetR = a / (a + c); 0 when the query has no relevant document. */
export function setRecall(r: JudgedRanking): number {
  return r.numRel ? r.numRelRet / r.numRel : 0;
}

/** SetAP = a² / ((a + b)(a + c)) = SetP · SetR (unranked average precision). */
export function setAp(r: JudgedRanking): number {
  return r.numRet && r.numRel ? (r.numRelRet * r.numRelRet) / (r.numRet * r.numRel) : 0;
}

/**
 * SetF = (x + 1)·P·R / (x·P + R) with P = SetP, R = SetR; x weighs recall against precision (default 1,
 * the harmonic mean). Van Rijsbergen, Information Retrieval, Butterworths, 1979. 0 when a = 0.
 */
export function setF(r: JudgedRanking, x = 1): number {
  if (!r.numRelRet) return 0;
  const p = r.numRelRet / r.numRet;
  const rec = r.numRelRet / r.numRel;
  return ((x + 1.0) * p * rec) / (x * p + rec);
}

/**
 * Utility = w1·a + w2·b + w3·c + w4·d, with d = numDocsInColl − a − b − c (trec_eval -N, default 0).
 * Default weights (1, −1, 0, 0) give a − b.
 */
export function utility(r: JudgedRanking, w: readonly number[] = [1, -1, 0, 0], numDocsInColl = 0): number {
  return (
    w[0]! * r.numRelRet + w[1]! * (r.numRet - r.numRelRet) + w[2]! * (r.numRel - r.numRelRet) + w[3]! * (numDocsInColl + r.numRelRet - r.numRet - r.numRel)
  );
}
