import { FusionInputError } from './errors.js';
import { checkPacked, type PackedRun } from './run-form.js';
import { sortRanked } from './rank-sort.js';

const MS_PER_DAY = 86_400_000;

/**
 * The prior value a document without a timestamp (recency) or without an importance gets: the midpoint of the
 * prior's range [0, 1], so missing metadata neither wins nor loses against the extremes. (Leaving such a
 * document unchanged, factor 1, would rank a memory of unknown date above every dated one.)
 */
export const NEUTRAL_PRIOR = 0.5;

/** Document priors applied to a fused run (or any run); weights in [0, 1], 0 = no effect. */
export interface PriorSpec {
  /** s' = s·(1 - weight + weight·2^(-ageDays / halfLifeDays)); age = queryTime - docTime, clamped at 0. */
  readonly recency?: { readonly halfLifeDays: number; readonly weight: number };
  /** s' = s·(1 - weight + weight·importance), importance in [0, 1] from document metadata. */
  readonly importance?: { readonly weight: number };
}

/** Per-document features the priors read, indexed by DocTable index; NaN = unknown. */
export interface PriorFeatures {
  /** Milliseconds since the epoch. */
  readonly timestampMs: Float64Array;
  /** In [0, 1]. */
  readonly importance: Float64Array;
}

/**
 * Multiplies each score by document priors and re-ranks each query in the trec order (score descending,
 * ties: higher DocTable index first). Pure: returns a new PackedRun.
 *
 * s' = s · (1 - w_r + w_r·2^(-age/h)) · (1 - w_i + w_i·importance), age = max(0, t_query - t_doc) in days,
 * h the half-life in days. A prior multiplies the retrieval score as a document prior multiplies the query
 * likelihood in language-model retrieval: P(d | q) ∝ P(q | d)·P(d), with an exponential recency prior P(d)
 * ∝ e^(-λ·age) (Li & Croft, "Time-based language models", CIKM 2003, doi:10.1145/956863.956951; document
 * priors in general: Kraaij, Westerveld & Hiemstra, SIGIR 2002, doi:10.1145/564376.564383). Each prior is
 * mixed with the uniform one (1 - w + w·p) so that w = 0 changes nothing and w < 1 never zeroes relevance;
 * λ = ln 2 / h states the decay as a half-life. Generative Agents (Park et al., UIST 2023,
 * doi:10.1145/3586183.3606763) add recency and importance to relevance instead, which needs every term on one
 * scale; a product is scale-free, so it works on RRF scores (around 1/60) and on [0, 1] scores alike.
 *
 * Because it multiplies, it needs non-negative scores (a negative score would move *up* as its prior falls):
 * apply it to rrf, min-max or tm2c2 fusions, or to an input whose theoretical minimum is >= 0; a negative score
 * throws FusionInputError. A document of unknown time or importance gets {@link NEUTRAL_PRIOR}; a document
 * newer than the query (age < 0) counts as age 0; a query of unknown time (NaN) gets no recency prior.
 */
export function applyPriors(run: PackedRun, spec: PriorSpec, features: PriorFeatures, queryTimeMs: Float64Array): PackedRun {
  const { recency, importance } = spec;
  if (recency !== undefined) {
    if (!(Number.isFinite(recency.halfLifeDays) && recency.halfLifeDays > 0)) {
      throw new FusionInputError(`priors.recency.halfLifeDays must be a finite number > 0, got ${recency.halfLifeDays}`);
    }
    checkWeight('priors.recency.weight', recency.weight);
  }
  if (importance !== undefined) checkWeight('priors.importance.weight', importance.weight);
  const tableSize = checkPacked(run, 'applyPriors');
  if (queryTimeMs.length !== run.queries.length) {
    throw new FusionInputError(`applyPriors: ${queryTimeMs.length} query times for ${run.queries.length} queries; give one per query (NaN when unknown)`);
  }
  if ((recency && features.timestampMs.length < tableSize) || (importance && features.importance.length < tableSize)) {
    throw new FusionInputError(`applyPriors: the feature arrays must cover the DocTable (at least ${tableSize} entries)`);
  }
  const docs = run.docs.slice();
  const scores = run.scores.slice();
  const wr = recency?.weight ?? 0;
  const wi = importance?.weight ?? 0;
  const halfLifeMs = recency === undefined ? 1 : recency.halfLifeDays * MS_PER_DAY;
  for (let q = 0; q < run.queries.length; q++) {
    const from = run.offsets[q]!;
    const to = run.offsets[q + 1]!;
    const tq = queryTimeMs[q]!;
    const useRecency = recency !== undefined && !Number.isNaN(tq);
    for (let e = from; e < to; e++) {
      const s = scores[e]!;
      if (s < 0) {
        throw new FusionInputError(`applyPriors: query "${run.queries[q]}" has a negative score (${s}); priors multiply scores and need them >= 0`, {
          hint: 'apply priors after rrf, min-max or tm2c2 fusion',
        });
      }
      const d = docs[e]!;
      let factor = 1;
      if (useRecency) {
        const td = features.timestampMs[d]!;
        const decay = Number.isNaN(td) ? NEUTRAL_PRIOR : 2 ** (-Math.max(0, tq - td) / halfLifeMs);
        factor = 1 - wr + wr * decay;
      }
      if (importance !== undefined) {
        const p = features.importance[d]!;
        if (!Number.isNaN(p) && !(p >= 0 && p <= 1)) {
          throw new FusionInputError(`applyPriors: document index ${d} has importance ${p}, outside [0, 1]`);
        }
        factor *= 1 - wi + wi * (Number.isNaN(p) ? NEUTRAL_PRIOR : p);
      }
      scores[e] = s * factor;
    }
    sortRanked(docs, scores, from, to);
  }
  return { queries: run.queries, offsets: run.offsets.slice(), docs, scores };
}

function checkWeight(path: string, w: number): void {
  if (!(w >= 0 && w <= 1)) throw new FusionInputError(`${path} must be in [0, 1], got ${w}`);
}
