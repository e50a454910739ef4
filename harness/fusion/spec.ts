import type { PackedRun } from './run-form.js';

/**
 * What a fusion is asked to do: its method, normalization and absent policy, its inputs and its spec. Shared by
 * the kernels (fuse.ts, accumulate.ts, reach.ts) and the config params (params.ts).
 */

export const FUSION_METHODS = ['rrf', 'combsum', 'combmnz', 'cc'] as const;
/** See `fuse` (fuse.ts) for each method's formula and source. */
export type FusionMethod = (typeof FUSION_METHODS)[number];

export const NORMALIZATIONS = ['none', 'min-max', 'z-score', 'tm2c2', 'dbsf'] as const;
/**
 * How an input's scores are mapped before a score-based fusion, per query, over the entries the fusion reads
 * (the input's top-`depth`), as φ(s):
 *
 * - `none`: φ(s) = s.
 * - `min-max`: φ(s) = (s - min) / (max - min) (Lee 1997, doi:10.1145/258525.258587). All scores equal
 *   (max = min, e.g. a one-document list): φ = 1, the list's best value, so every document the input returned
 *   still counts as returned.
 * - `z-score`: φ(s) = (s - mean) / sd with the population sd (divisor n), Montague & Aslam's ZMUV
 *   (CIKM 2001, doi:10.1145/502585.502657). sd = 0 (all scores equal, one document): φ = 0, the mean.
 * - `tm2c2`: φ(s) = (s - m) / (max - m), m the theoretical minimum the input's kind declares (BM25 0,
 *   cosine -1) and max the query's best read score: the theoretical min-max of Bruch, Gai & Ingber,
 *   "An Analysis of Fusion Functions for Hybrid Retrieval", ACM TOIS 42(1), 2023, doi:10.1145/3596512, robust
 *   to the empirical minimum, which depends on depth. max = m (the best document sits at the floor): φ = 0.
 *   A score below m means the declaration is wrong: FusionInputError.
 * - `dbsf`: distribution-based score fusion as Qdrant ships it (lib/segment/src/common/score_fusion.rs,
 *   `distr_norm`, since v1.11): φ(s) = (s - lo) / (hi - lo) with lo, hi = mean ∓ 3·sd, sd the SAMPLE standard
 *   deviation (divisor n - 1, Welford's one-pass recurrence), not clipped (a score beyond 3 sd maps outside
 *   [0, 1], as in Qdrant). One document, or hi = lo (all scores equal): φ = 0.5, Qdrant's value.
 *
 * An empty list maps nothing; its absent documents follow the {@link AbsentPolicy}.
 */
export type Normalization = (typeof NORMALIZATIONS)[number];

export const ABSENT_POLICIES = ['zero', 'min'] as const;
/**
 * What a document absent from an input's top-`depth` contributes from that input, for that query:
 * - `zero`: 0 (after normalisation). The common convention (ranx, Pyserini, RRF's "absent contributes 0").
 *   With `z-score` this is the list's mean, above every below-average document the input did return; prefer
 *   `min` there.
 * - `min`: the smallest contribution the input gives any document it did read for that query (RRF: w/(rrfK +
 *   n) for n documents read; scores: w·φ(last read score)), i.e. "at best as good as the last one read".
 *   An input that returned nothing for the query contributes 0.
 * CombMNZ's count is the number of inputs whose top-`depth` holds the document, under either policy.
 */
export type AbsentPolicy = (typeof ABSENT_POLICIES)[number];

/** One run fed to a fusion, with how much of it is read and how much it weighs. */
export interface FusionInput {
  /** All inputs of one fusion share one DocTable and the same `queries` order. */
  readonly run: PackedRun;
  /** >= 0. An input of weight 0 is not read at all. */
  readonly weight: number;
  /** How many of the input's best documents per query are read: an integer >= 0, or Infinity for all. */
  readonly depth: number;
  /** The lowest score the input's kind can produce (bm25 0, cosine -1); required by `tm2c2`. */
  readonly theoreticalMin?: number;
}

export interface FusionSpec {
  readonly method: FusionMethod;
  /** The RRF constant in w / (rrfK + rank); rrf only. */
  readonly rrfK: number;
  /** combsum / combmnz / cc; ignored by rrf. */
  readonly normalization: Normalization;
  readonly absent: AbsentPolicy;
  /** Length of each fused list (an integer >= 1). */
  readonly topK: number;
}
