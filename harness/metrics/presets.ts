/**
 * Named lists of measures a config may write in place of the measures themselves. A preset expands, in
 * order, where it stands in `measures:`.
 */
export const measurePresets = {
  /**
   * LongMemEval's retrieval measures at their session-level cutoffs, for comparison with published numbers:
   * recall_any@k = Success@k, recall_all@k = R-all@k, ndcg_any@k = nDCG-LME@k. Questions without a `has_answer` turn among the indexed
   * turns are skipped and counted at load, as their averages skip them; one difference remains: a question whose
   * `has_answer` turns all lie outside its answer sessions scores R-all 0 here and 1 there (Python's all([])).
   */
  longmemeval: ['Success@5', 'R-all@5', 'nDCG-LME@5', 'Success@10', 'R-all@10', 'nDCG-LME@10'],
  /** The same at their turn-level cutoffs (5, 10, 50). */
  'longmemeval-turn': ['Success@5', 'R-all@5', 'nDCG-LME@5', 'Success@10', 'R-all@10', 'nDCG-LME@10', 'Success@50', 'R-all@50', 'nDCG-LME@50'],
  /**
   * Their session-level numbers of a turn-level run (evaluate_retrieval_turn2session, what run_retrieval.py prints
   * under "session" with --granularity turn), at the session cutoffs; needs a turn-level eval set, no `unit:`.
   */
  'longmemeval-t2s': ['Success-T2S@5', 'R-all-T2S@5', 'nDCG-LME-T2S@5', 'Success-T2S@10', 'R-all-T2S@10', 'nDCG-LME-T2S@10'],
} as const satisfies Record<string, readonly string[]>;

export type MeasurePreset = keyof typeof measurePresets;

export function isMeasurePreset(name: string): name is MeasurePreset {
  return Object.hasOwn(measurePresets, name);
}
