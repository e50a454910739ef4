/**
 * The `harness/evalset` package entry: the eval-set model, its readers and writers, and validation. Functions
 * that take Qrels, Runs or an EvalSet accept Maps or plain objects (public.ts checks and converts them).
 */
export type { Corpus, Document, EvalSet, JsonValue, Qrels, Query, Run } from './types.js';
export type { EvalSetLike, MapLike, QrelsLike, RunLike } from './input.js';
export { applyStrataFile, corpusFingerprint, evalSetFingerprint, loadEvalSet, loadEvalSetChecked, readStrataFile, validateEvalSet } from './public.js';
export { evalSetFormats } from './load.js';
export type { EvalSetFormat, EvalSetSpec } from './load.js';
export { loadBeir } from './beir.js';
export { loadMemory } from './memory.js';
export type { Validation } from './validate.js';
export { formatTrecQrels, formatTrecRun, writeTrecQrels, writeTrecRun } from './public.js';
export { parseTrecQrels, parseTrecRun, readTrecQrels, readTrecRun } from './trec.js';
export type { TrecRun } from './trec.js';
