import type { ComparisonRole } from '../compare/types.js';
import type { PpiResult } from '../stats/ppi.js';

/** One hand-labelled pair with the judge's grade, ids only (no text: nothing sensitive). */
export interface HumanPair {
  readonly queryId: string;
  readonly docId: string;
  readonly stratum: string;
  readonly human: number;
  readonly judge: number;
}

/**
 * The human labels of a judged study as the report reads them (`ReportInput.humanLabels`): the labelled queries
 * with every run's per-query values under the human qrels, and every labelled pair with both grades.
 */
export interface HumanLabelsInput {
  /** The labels file as the config names it. */
  readonly file: string;
  readonly kind: 'session' | 'qrels';
  /** What the labels grade: the answers of `answer.humanLabels` (the answer judge's grades), or, absent, documents. */
  readonly of?: 'answers';
  /** The judgments' qrels version the labels were checked against (a session of another version is refused). */
  readonly qrelsVersion: string;
  /** Labelled queries (every judged pair with a human grade), in the report's query order. */
  readonly queries: readonly string[];
  /** Queries labelled in part: left out of `queries`. */
  readonly incomplete: number;
  /** run -> measure -> value under the human qrels, aligned with `queries`. */
  readonly perQuery: Readonly<Record<string, Readonly<Record<string, readonly number[]>>>>;
  readonly pairs: readonly HumanPair[];
  /** The config's relevanceLevel (trec_eval -l), which the binary measures read; absent: 1, the default. */
  readonly relevanceLevel?: number;
  /** When the judge counts as validated (the config's `validation:`). */
  readonly thresholds: { readonly minTau: number; readonly minQueries: number; readonly resamples: number };
}

/** A PPI interval of a mean paired difference, with the level and verdict of its comparison's family. */
export interface PpiEstimate extends PpiResult {
  /** Confidence of `ci`: 1 − alpha/m for a family of m tests (Bonferroni: an interval cannot be Holm-stepped). */
  readonly level: number;
  /** The interval excludes 0. */
  readonly significant: boolean;
}

/**
 * One comparison with its plain judge-based delta (over every query of the stratum, as the comparisons table
 * has it) and its PPI-corrected delta; `unavailable` says why there is no PPI (too few labelled queries).
 */
export interface PpiRow {
  readonly stratum: string;
  readonly measure: string;
  readonly baseline: string;
  readonly system: string;
  readonly role: ComparisonRole;
  readonly plainDelta: number;
  readonly ppi?: PpiEstimate;
  readonly unavailable?: string;
}

/** One comparison on the labelled queries, under judge and under human labels. */
export interface SignCheck {
  readonly stratum: string;
  readonly measure: string;
  readonly baseline: string;
  readonly system: string;
  readonly role: ComparisonRole;
  readonly judgeDelta: number;
  readonly humanDelta: number;
  /** Same sign (a zero only matches a zero). */
  readonly reproduces: boolean;
}

/** A rank correlation with its bootstrap interval over the labelled queries. */
export interface RankAgreement {
  readonly value: number;
  readonly ci: readonly [number, number];
}

/** Decision-level validation of the judge on the human-labelled queries. */
export interface Validation {
  readonly labelsFile: string;
  readonly qrelsVersion: string;
  readonly labelledQueries: number;
  readonly incompleteQueries: number;
  /** The measure the rankings and the gate read. */
  readonly measure: string;
  readonly signs: readonly SignCheck[];
  /** The gate re-run on the labelled queries under judge labels and under human labels. */
  readonly gate?: { readonly judge: string; readonly human: string; readonly reproduces: boolean };
  readonly tau?: RankAgreement;
  readonly tauAP?: RankAgreement;
  /** Pair-level agreement (human vs judge on every labelled pair); undefined where a coefficient is undefined. */
  readonly agreement: {
    readonly pairs: number;
    /** The grade `kappaBinary` splits at: the lowest the validated measure gains from (as `harness kappa --config`). */
    readonly relevantAt?: number;
    readonly kappaBinary?: number;
    readonly kappaQuadratic?: number;
    readonly alphaOrdinal?: number;
    readonly ac1?: number;
  };
  readonly thresholds: HumanLabelsInput['thresholds'];
  readonly pass: boolean;
  /** Why it failed (empty on a pass). */
  readonly failures: readonly string[];
}
