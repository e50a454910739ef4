/** The `harness/evalset` package entry: the eval-set model, its readers and writers, and validation. */
export type { Corpus, Document, EvalSet, JsonValue, Qrels, Query, Run } from './types.js';
export { evalSetFormats, loadEvalSet, loadEvalSetChecked } from './load.js';
export type { EvalSetFormat, EvalSetSpec } from './load.js';
export { loadBeir } from './beir.js';
export { loadMemory } from './memory.js';
export { applyStrataFile, readStrataFile } from './strata.js';
export { validateEvalSet } from './validate.js';
export type { Validation } from './validate.js';
export { corpusFingerprint, evalSetFingerprint } from './fingerprint.js';
export {
  formatTrecQrels,
  formatTrecRun,
  parseTrecQrels,
  parseTrecRun,
  readTrecQrels,
  readTrecRun,
  writeTrecQrels,
  writeTrecRun,
} from './trec.js';
export type { TrecRun } from './trec.js';
