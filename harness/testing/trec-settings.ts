import type { TrecEvalSettings } from '../trec-eval/plan.js';

/** trec_eval's settings with no flag given (summary only, `-l 1`, `official` measures), for tests to override. */
export function trecSettings(overrides: Partial<TrecEvalSettings> = {}): TrecEvalSettings {
  return {
    perQuery: false,
    summary: true,
    averageComplete: false,
    judgedOnly: false,
    relevanceLevel: 1,
    maxDocs: undefined,
    numDocsInColl: 0,
    measures: [],
    ...overrides,
  };
}
