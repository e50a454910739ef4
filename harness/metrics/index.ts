/**
 * The `harness/metrics` package entry: trec_eval-exact measures over Qrels and Runs given as Maps or plain
 * objects (public.ts checks and converts them at the call).
 */
export { evaluate, rankDocIds, relevanceLevelProblem } from './public.js';
export type { EvaluateOptions } from './public.js';
export type { Evaluation } from './evaluate.js';
export type { MapLike, QrelsLike, RunLike } from '../../evalset/input.js';
export {
  ANSWER_MEASURE_NAMES,
  describeMeasures,
  formatMeasure,
  isAnswerMeasure,
  MEASURE_NAMES,
  measureAliases,
  parseMeasure,
  trecEvalSpelling,
} from './measure.js';
export type { AnswerMeasureName, Measure } from './measure.js';
export { compareIds, compareRanked } from './ranking.js';
export { formatFixed } from './printf.js';
export { isMeasurePreset, measurePresets } from './presets.js';
export type { MeasurePreset } from './presets.js';
