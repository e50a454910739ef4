export { evaluate, relevanceLevelProblem } from './evaluate.js';
export type { Evaluation, EvaluateOptions } from './evaluate.js';
export { describeMeasures, formatMeasure, MEASURE_NAMES, measureAliases, parseMeasure, trecEvalSpelling } from './measure.js';
export type { Measure } from './measure.js';
export { compareIds, compareRanked, rankDocIds } from './ranking.js';
export { formatFixed } from './printf.js';
export { isMeasurePreset, measurePresets } from './presets.js';
export type { MeasurePreset } from './presets.js';
