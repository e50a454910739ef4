import type { Correction, TestKind } from './config.js';

export type ComparisonRole = 'confirmatory' | 'exploratory';

/**
 * One paired comparison, `system` minus `baseline`, over the `n` queries of `stratum`. Numbers that do not
 * exist for the data (p of a t-test on identical vectors, d_z with zero spread) are `null`, never a made-up value.
 */
export interface Comparison {
  readonly stratum: string;
  readonly measure: string;
  readonly baseline: string;
  readonly system: string;
  readonly n: number;
  readonly baselineMean: number;
  readonly systemMean: number;
  readonly delta: number;
  readonly role: ComparisonRole;
  /**
   * Interval for the mean difference at level `ciLevel`, the level the comparison's own corrected decision
   * implies (1 − alpha·p/pAdjusted): it excludes 0 exactly when `significant` (for the t and randomization
   * tests; see computeComparisons). A `null` bound is unbounded: no shift can be rejected at that level.
   */
  readonly ci: readonly [number | null, number | null];
  /** Confidence of `ci`; null when the comparison has no p. */
  readonly ciLevel: number | null;
  readonly test: TestKind;
  readonly p: number | null;
  /** Sign flips behind a randomization p (2^n when enumerated exactly); null for the other tests. */
  readonly permutations: number | null;
  /** Monte Carlo standard error of `p`, √(p(1 − p)/B); 0 when enumerated; null for the other tests. */
  readonly pMcse: number | null;
  /** p after correction within `family`; null when `p` is null (such a test is not in any family). */
  readonly pAdjusted: number | null;
  /** The corrected p is within two Monte Carlo standard errors of alpha: other draws could flip `significant`. */
  readonly nearAlpha: boolean;
  /** `gate` for the confirmatory family; otherwise the exploratory family id (see `compare.family`). */
  readonly family: string;
  /** pAdjusted < alpha. */
  readonly significant: boolean;
  /** Cohen's d_z = mean(diff) / sd(diff). */
  readonly dz: number | null;
  readonly wins: number;
  readonly ties: number;
  readonly losses: number;
  /** Minimum detectable effect at the family's first corrected threshold alpha/m and the configured power. */
  readonly mde: number | null;
  /**
   * Under `gate.rule: equivalent`, a gate comparison's TOST interval: level `equivalenceLevel` = 1 − 2α/m (m the
   * gate family's size), inside (−margin, +margin) exactly when equivalence is shown. Absent otherwise.
   */
  readonly equivalenceCi?: readonly [number | null, number | null];
  readonly equivalenceLevel?: number;
}

export interface FamilyInfo {
  readonly id: string;
  /** Tests with a p-value in the family; the correction's m. */
  readonly size: number;
  readonly role: ComparisonRole;
  /** The correction applied within this family (the gate's is always family-wise). */
  readonly correction: Correction;
}
