/**
 * Fusion: pure functions from Runs to a Run (RRF, weighted RRF, CombSUM, CombMNZ, convex combination after
 * min-max / z-score / TM2C2 normalisation), post-fusion priors, and the diagnostics of a fused system
 * (contribution of each input, structural and empirical reachability). Every kernel works on PackedRuns
 * (typed arrays over one DocTable). See docs/adr/0011-fusion.md.
 */
export { FusionInputError, FusionParamsError } from './errors.js';
export { fuse, fusedTheoreticalMin } from './fuse.js';
export { docTable, packArrays, packPairs, packRun, unpackPairs, unpackRun, type DocTable, type PackedRun, type RunPairs } from './run-form.js';
export { fuseParamsSchema, resolveFuseParams, type FuseParams, type ResolvedFuseParams } from './params.js';
export { applyPriors, NEUTRAL_PRIOR, type PriorFeatures, type PriorSpec } from './priors.js';
export { contributions, empiricalReach, reachOnRuns, structuralReach, type Contribution, type Reach, type RunReach } from './reach.js';
export {
  ABSENT_POLICIES,
  FUSION_METHODS,
  NORMALIZATIONS,
  type AbsentPolicy,
  type FusionInput,
  type FusionMethod,
  type FusionSpec,
  type Normalization,
} from './spec.js';
