/**
 * `harness/stats` (package subpath `./stats`): paired significance tests, bootstrap intervals, multiple-
 * comparison adjustment, effect sizes and agreement. Pure functions over per-query vectors; every random
 * procedure takes an explicit seed and uses the xoshiro128** stream in rng.ts, so results are identical on
 * every machine. Conventions follow scipy / statsmodels / scikit-learn, checked against their outputs in
 * ../shared/fixtures/stats. See docs/adr/0004-statistics.md.
 */
export { adjustPValues, ADJUST_METHODS, type AdjustMethod } from './adjust.js';
export { bootstrapCI, bootstrapCIMany, type BootstrapMethod, type BootstrapOptions, type BootstrapResult } from './bootstrap.js';
export { cohensKappa, type KappaOptions, type KappaResult, type KappaWeights, type Label } from './kappa.js';
export {
  cohensDz,
  minimumDetectableEffect,
  pairedTTest,
  wilcoxonSignedRank,
  winTieLoss,
  type PairedTTestResult,
  type WilcoxonMethod,
  type WilcoxonOptions,
  type WilcoxonZeroMethod,
  type WilcoxonResult,
  type WinTieLoss,
} from './paired.js';
export {
  firstThreshold,
  labelsNeeded,
  ppiVariance,
  queriesNeeded,
  type LabelsNeededInput,
  type PlanCorrection,
  type PowerApprox,
  type PpiVariance,
  type QueriesNeededOptions,
} from './power.js';
export {
  randomizationCI,
  randomizationCIMany,
  randomizationTest,
  randomizationTestMany,
  type RandomizationCIOptions,
  type RandomizationOptions,
  type RandomizationResult,
} from './randomization.js';
export { gwetAC1, krippendorffAlphaOrdinal } from './label-agreement.js';
export { discordance, mcnemarExact, type Discordance } from './mcnemar.js';
export { ppiMean, stratifiedPpiMean, tunedLambda, type PpiOptions, type PpiResult, type PpiSample } from './ppi.js';
export { kendallTau, rankAgreementInterval, tauAP } from './rank-agreement.js';
export { createRng, Rng } from './rng.js';
export { wilsonInterval } from './wilson.js';
export { normalCdf, normalQuantile, normalSf, studentTQuantile, studentTSf, studentTTwoSided } from './special.js';
export type { Vector } from './input.js';
