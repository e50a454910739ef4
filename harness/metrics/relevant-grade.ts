import { isTested, type Measure, usesRelevanceLevel } from './measure.js';

/** The judge's scale: a grade the kappa check can binarise at lies in it (0 counts nothing, by the scale's words). */
const SCALE = [1, 2, 3] as const;

/**
 * The lowest grade a measure draws value from, the grade at which agreement on relevance matters to it:
 * `rel=` or the config's relevance level (trec_eval -l) for the binary measures (P, R, AP, RR, nDCG-LME, ...);
 * for the graded-gain measures (nDCG, DCG, G, RBP, ...) the lowest grade of 1-3 with a gain above 0 (gain g,
 * 2^g - 1 under gain=exp, or the `gains=` table's entry). A measure that reads no relevance (Judged@k, NumRet,
 * RBPResid) falls back to the relevance level. Undefined when no grade 1-3 gains (a `gains=` table that zeroes all).
 */
export function relevantGrade(m: Measure, relevanceLevel: number): number | undefined {
  if (usesRelevanceLevel(m)) return m.params.rel ?? relevanceLevel;
  if (m.params.gains === undefined && !GAINED.has(m.name)) return relevanceLevel;
  const exp = m.params.gain === 'exp';
  return SCALE.find((g) => (m.params.gains?.[String(g)] ?? (exp ? 2 ** g - 1 : g)) > 0);
}

/** The families whose value sums a gain per grade (trec_eval's setup_gains). */
const GAINED = new Set(['nDCG', 'DCG', 'IDCG', 'nDCGRel', 'RnDCG', 'G', 'RBP']);

/**
 * The measure a decision reads, as the report picks it (decision/select.ts primaryMeasure): the gate's, else the
 * first tested measure, else the first. It takes measures already read (a config loader's ReportedMeasure, or
 * anything carrying its Measure), so choosing one never reads a spelling again; the caller's own value comes back.
 */
export function decidingMeasure<M extends { readonly measure: Measure }>(measures: readonly M[], gate: M | undefined): M | undefined {
  return gate ?? measures.find((m) => isTested(m.measure)) ?? measures[0];
}
