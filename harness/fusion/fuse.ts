import { FusionInputError } from './errors.js';
import { localIndex, QueryAccumulator, type CheckedFusion } from './accumulate.js';
import { checkPacked, type PackedRun } from './run-form.js';
import { BucketScratch, bestSorted, heapOffer, heapReplaceRoot, heapSortBestFirst, selectBest, sortRanked } from './rank-sort.js';
import type { SelectMemory } from './select-kernels.js';
import { ABSENT_POLICIES, FUSION_METHODS, type FusionInput, type FusionSpec, NORMALIZATIONS } from './spec.js';

/** Validates a fusion's inputs and spec; every message names the input position and the parameter. */
export function checkFusion(inputs: readonly FusionInput[], spec: FusionSpec): CheckedFusion {
  if (!(FUSION_METHODS as readonly string[]).includes(spec.method)) {
    throw new FusionInputError(`unknown fusion method "${spec.method}" (known: ${FUSION_METHODS.join(', ')})`);
  }
  if (spec.method !== 'rrf' && !(NORMALIZATIONS as readonly string[]).includes(spec.normalization)) {
    throw new FusionInputError(`unknown normalization "${spec.normalization}" (known: ${NORMALIZATIONS.join(', ')})`);
  }
  if (!(ABSENT_POLICIES as readonly string[]).includes(spec.absent)) {
    throw new FusionInputError(`unknown absent policy "${spec.absent}" (known: ${ABSENT_POLICIES.join(', ')})`);
  }
  if (spec.method === 'rrf' && !(Number.isFinite(spec.rrfK) && spec.rrfK >= 0)) {
    throw new FusionInputError(`rrfK must be a finite number >= 0, got ${spec.rrfK}`);
  }
  if (!(Number.isInteger(spec.topK) && spec.topK >= 1)) throw new FusionInputError(`topK must be an integer >= 1, got ${spec.topK}`);
  if (inputs.length === 0) throw new FusionInputError('a fusion needs at least one input run');
  const queries = inputs[0]!.run.queries;
  let tableSize = 0;
  const active: { input: FusionInput; at: number }[] = [];
  let weightSum = 0;
  inputs.forEach((input, i) => {
    const { weight, depth, theoreticalMin } = input;
    if (!(Number.isFinite(weight) && weight >= 0)) throw new FusionInputError(`input ${i}: weight must be a finite number >= 0, got ${weight}`);
    if (!((Number.isInteger(depth) && depth >= 0) || depth === Infinity)) {
      throw new FusionInputError(`input ${i}: depth must be an integer >= 0 or Infinity (read everything), got ${depth}`);
    }
    if (theoreticalMin !== undefined && !Number.isFinite(theoreticalMin)) {
      throw new FusionInputError(`input ${i}: theoreticalMin must be finite when declared, got ${theoreticalMin}`);
    }
    const q = input.run.queries;
    if (q !== queries && (q.length !== queries.length || q.some((id, k) => id !== queries[k]))) {
      throw new FusionInputError(`input ${i}: its query list differs from input 0's`, { hint: 'pack every input with packRun over the same `queries` array' });
    }
    tableSize = Math.max(tableSize, checkPacked(input.run, `input ${i}`));
    if (weight > 0 && depth > 0) {
      if (spec.method !== 'rrf' && spec.normalization === 'tm2c2' && theoreticalMin === undefined) {
        throw new FusionInputError(`input ${i}: tm2c2 needs the theoretical minimum score of the input's kind`, {
          hint: 'declare theoreticalMin (bm25 0, cosine -1), or choose min-max',
        });
      }
      active.push({ input, at: i });
      weightSum += weight;
    }
  });
  if (active.length === 0) {
    throw new FusionInputError('no input is read: every input has weight 0 or depth 0', { hint: 'give at least one input a positive weight and depth' });
  }
  const index = localIndex(
    inputs.map((i) => i.run),
    tableSize,
  );
  return { queries, tableSize, active, weightSum, index };
}

/**
 * Fuses runs into one, per query: every input reads its top-`depth` entries; the fused list is the union,
 * scored as below, ranked in the trec order (score descending, ties: higher DocTable index first) and cut to
 * `topK`. Pure: inputs are never modified; the result is a new PackedRun over the same DocTable and queries,
 * so it can feed another fusion (declare its {@link fusedTheoreticalMin} there for tm2c2).
 *
 * With w_i the weights, r_i(d) the rank of d in input i (from 1, in the trec order), φ_i the
 * {@link Normalization} and a_i the {@link AbsentPolicy} value for documents missing from input i:
 * - `rrf`: Σ_i w_i / (rrfK + r_i(d)); reciprocal rank fusion (Cormack, Clarke & Buettcher, SIGIR 2009,
 *   doi:10.1145/1571941.1572114), weighted when the w_i differ; rrfK 60 in the paper.
 * - `combsum`: Σ_i w_i φ_i(s_i(d)) (Fox & Shaw, "Combination of multiple searches", TREC-2, NIST SP 500-215,
 *   1994; normalised and weighted as in Lee 1997, doi:10.1145/258525.258587).
 * - `combmnz`: |{i : d in the top-depth of i}| × CombSUM (Fox & Shaw 1994).
 * - `cc`: Σ_i (w_i / Σ_j w_j) φ_i(s_i(d)), the convex combination of Bruch, Gai & Ingber (ACM TOIS 42(1),
 *   2023, doi:10.1145/3596512); with two inputs and weights α, 1 - α their α·φ(s_sem) + (1 - α)·φ(s_lex),
 *   and with `tm2c2` their TM2C2. Same ranking as CombSUM; scores stay in [0, 1] after min-max / tm2c2.
 * Missing documents contribute a_i (0 under `zero`). Inputs of weight 0 or depth 0 are not read.
 *
 * Cost per query: one pass over the entries read into a dense per-query accumulator (see accumulate.ts), then,
 * when every document of the union was read (the usual case), one pass over the union that keeps the ~1.25
 * topK above a threshold sampled from it and bucket-sorts them (bestOfSums); otherwise one pass over the
 * union with a bounded heap of topK seeded from the inputs' first places and a heap sort of those topK (or,
 * for a topK that is a large share of the union, a bucket sort of the topK): no per-document objects and no
 * sort of the whole union.
 */
export function fuse(inputs: readonly FusionInput[], spec: FusionSpec): PackedRun {
  const checked = checkFusion(inputs, spec);
  const nq = checked.queries.length;
  const topK = spec.topK;
  // Upper bound of the output size: per query, min(topK, entries read).
  let bound = 0;
  for (let q = 0; q < nq; q++) {
    let reads = 0;
    for (const { input } of checked.active) reads += Math.min(input.run.offsets[q + 1]! - input.run.offsets[q]!, input.depth);
    bound += Math.min(topK, reads);
  }
  const offsets = new Int32Array(nq + 1);
  const outDocs = new Int32Array(bound);
  const outScores = new Float64Array(bound);
  const selector = new TopKSelector(checked, spec, topK);
  const accu = new QueryAccumulator(checked, spec);
  let used = 0;
  for (let q = 0; q < nq; q++) {
    accu.accumulate(q);
    used = selector.select(accu, q, outDocs, outScores, used);
    offsets[q + 1] = used;
  }
  return {
    queries: checked.queries,
    offsets,
    docs: used === bound ? outDocs : outDocs.slice(0, used),
    scores: used === bound ? outScores : outScores.slice(0, used),
  };
}

/**
 * Picks each query's topK from its accumulated scores. A class of its own, and the union scan a function of
 * its own, so that the JIT optimizes them apart from `fuse` (inlined into it they ran several times slower).
 */
class TopKSelector {
  private readonly heapScores: Float64Array;
  private readonly heapLocal: Int32Array;
  private readonly seeded: Uint8Array;
  private readonly seeds: Int32Array;
  private readonly final: Float64Array;
  private readonly candidates: Int32Array;
  private readonly chosen: Float64Array;
  private readonly buckets: BucketScratch;
  /** The index's kernel memory, which also holds the accumulator and the union (see LocalIndex). */
  private readonly memory: SelectMemory;
  private readonly unionSlice: Int32Array;
  /** What the accumulated sum is divided by: the weight sum for cc, 1 (exact) otherwise. */
  private readonly div: number;
  /** The fused score is base + acc: rrf, combsum, and cc whose weights sum to 1. */
  private readonly scoreIsSum: boolean;

  constructor(
    private readonly checked: CheckedFusion,
    spec: FusionSpec,
    private readonly topK: number,
  ) {
    this.scoreIsSum = spec.method === 'rrf' || spec.method === 'combsum' || (spec.method === 'cc' && checked.weightSum === 1);
    const maxUnion = checked.index.maxUnion;
    this.heapScores = new Float64Array(Math.min(topK, maxUnion));
    this.heapLocal = new Int32Array(this.heapScores.length);
    this.seeded = new Uint8Array(maxUnion);
    this.seeds = new Int32Array(this.heapScores.length);
    this.final = new Float64Array(maxUnion);
    this.memory = checked.index.memory;
    this.candidates = this.memory.outL;
    this.chosen = this.memory.outS;
    this.buckets = new BucketScratch(maxUnion);
    this.unionSlice = new Int32Array(maxUnion);
    this.div = spec.method === 'cc' ? checked.weightSum : 1;
  }

  /**
   * When topK is a large share of the union (a fused list as long as the runs), a heap would take most
   * documents in and out: bucket-sort the topK (linear, see bestSorted) instead.
   */
  private selectBySort(accu: QueryAccumulator, q: number, outDocs: Int32Array, outScores: Float64Array, used: number): number {
    const { final, candidates, chosen } = this;
    accu.finalScores(final);
    let keep = bestSorted(final, accu.size, this.topK, this.buckets, candidates, chosen);
    if (keep < 0) keep = sortAll(final, accu.size, this.topK, candidates, chosen);
    return this.emit(q, keep, candidates, chosen, outDocs, outScores, used);
  }

  /** Copies query q's `keep` chosen (local, score) pairs to the output as (DocTable index, score). */
  private emit(q: number, keep: number, locals: Int32Array, scores: Float64Array, outDocs: Int32Array, outScores: Float64Array, used: number): number {
    const { union, unionOffsets } = this.checked.index;
    // Nothing since the index was built has read this query's slice of the union, so scattered lookups
    // into it missed the cache at nearly every entry (a third of a topK 1000 selection, docs/perf/fusion.md);
    // one sequential copy into a scratch array is streamed in by the prefetcher.
    const ids = this.unionSlice;
    ids.set(union.subarray(unionOffsets[q]!, unionOffsets[q + 1]!));
    for (let j = 0; j < keep; j++) {
      outDocs[used + j] = ids[locals[j]!]!;
      outScores[used + j] = scores[j]!;
    }
    return used + keep;
  }

  /**
   * Copies the selection kernel's `keep` entries of query q to the output: the kernel looks the local
   * positions up in the query's union slice, which lives in its memory, and two block copies write them out
   * (the per-entry copy-out loop in JavaScript took 0.40x the bench's floor at topK 1000; docs/perf/fusion.md).
   */
  private emitSelected(q: number, keep: number, outDocs: Int32Array, outScores: Float64Array, used: number): number {
    const { unionAt, unionOffsets } = this.checked.index;
    const m = this.memory;
    m.gatherIds(keep, unionAt + 4 * unionOffsets[q]!);
    outDocs.set(m.outL.subarray(0, keep), used);
    outScores.set(m.outS.subarray(0, keep), used);
    return used + keep;
  }

  /** Writes query q's fused list, best first, at `used` in the output arrays; returns the new end. */
  select(accu: QueryAccumulator, q: number, outDocs: Int32Array, outScores: Float64Array, used: number): number {
    const { heapScores, heapLocal, seeded, seeds, topK } = this;
    const { acc, count, size, counted, reads } = accu;
    const { active, index } = this.checked;
    if (!counted) {
      // Every document of the union was read, so each is a candidate scoring (base + acc) / div.
      const keep = this.memory.bestOfSums(accu.base, this.div, size, topK);
      if (keep >= 0) return this.emitSelected(q, keep, outDocs, outScores, used);
    }
    if (topK * 16 >= size) return this.selectBySort(accu, q, outDocs, outScores, used);
    // Seed the heap with the inputs' first places, round robin: they hold most of the fused top, so the heap's
    // worst entry starts high and the scan below rejects nearly every other document with one comparison.
    let kept = 0;
    let nSeeds = 0;
    for (let r = 0; kept < topK; r++) {
      let more = false;
      for (let i = 0; i < active.length && kept < topK; i++) {
        if (r >= reads[i]!) continue;
        more = true;
        const { input, at } = active[i]!;
        const l = index.local[at]![input.run.offsets[q]! + r]!;
        if (seeded[l] === 1) continue;
        seeded[l] = 1;
        seeds[nSeeds++] = l;
        kept = heapOffer(heapScores, heapLocal, kept, topK, accu.score(acc[l]!, counted ? count[l]! : 1), l);
      }
      if (!more) break;
    }
    // A heap left short of topK already holds every document read; otherwise scan the rest of the union.
    if (kept === topK) {
      if (counted || !this.scoreIsSum) {
        accu.finalScores(this.final);
        scanUnion(this.final, 0, size, heapScores, heapLocal, seeded);
      } else {
        // Every document read, and a score that is base + acc (not CombMNZ, no cc division): scan acc itself.
        scanUnion(acc, accu.base, size, heapScores, heapLocal, seeded);
      }
    }
    for (let j = 0; j < nSeeds; j++) seeded[seeds[j]!] = 0;
    heapSortBestFirst(heapScores, heapLocal, kept);
    return this.emit(q, kept, heapLocal, heapScores, outDocs, outScores, used);
  }
}

/**
 * The comparison-sort path of {@link bestSorted} (which declines scores whose range is not finite): the
 * candidates (scores above -Infinity) are compacted, their best `k` quickselected, and those sorted.
 */
function sortAll(scores: Float64Array, size: number, k: number, outL: Int32Array, outS: Float64Array): number {
  let n = 0;
  for (let l = 0; l < size; l++) {
    if (scores[l] === -Infinity) continue;
    outL[n] = l;
    outS[n++] = scores[l]!;
  }
  const keep = Math.min(k, n);
  selectBest(outL, outS, 0, n, keep);
  sortRanked(outL, outS, 0, keep);
  return keep;
}

/**
 * Replaces the heap's worst entry by every document of the union (score: base + scores[l]) that outranks it and
 * is not already in the heap. The heap's worst score is cached, so a rejected document costs one load and one comparison. A document
 * enters when it scores above the worst entry, or ties it from a higher local position (= higher DocTable
 * index, which ranks first in the trec order).
 */
function scanUnion(scores: Float64Array, base: number, size: number, hs: Float64Array, hl: Int32Array, inHeap: Uint8Array): void {
  let worst = hs[0]!;
  for (let l = 0; l < size; l++) {
    const s = base + scores[l]!;
    if (s < worst) continue;
    if ((s === worst && l <= hl[0]!) || inHeap[l] === 1) continue;
    heapReplaceRoot(hs, hl, hs.length, s, l);
    worst = hs[0]!;
  }
}

/**
 * A lower bound of every score `fuse(inputs, spec)` can produce, for a fusion that feeds a `tm2c2` fusion as
 * one of its inputs; undefined when no finite bound exists.
 * - rrf: 0 (every contribution, present or absent, is >= 0).
 * - combsum / combmnz / cc after `min-max` or `tm2c2`: 0, under either absent policy (φ and a_i lie in [0, 1]).
 * - after `z-score`: undefined (z-scores of a list of n reach -sqrt(n - 1), unbounded in n); after `dbsf` too
 *   (unclipped: down to 0.5 - (n - 1) / (6 sqrt(n)), below 0 from n = 11).
 * - after `none`: with every read input (weight > 0) declaring m_i, L = Σ_i w_i·min(0, m_i) for combsum,
 *   L / Σ_i w_i for cc, N·L for combmnz over N read inputs (its count multiplies a sum >= L, and L <= 0);
 *   undefined when an input declares nothing. The bound is attained when every m_i <= 0.
 */
export function fusedTheoreticalMin(inputs: readonly Pick<FusionInput, 'weight' | 'theoreticalMin'>[], spec: FusionSpec): number | undefined {
  if (spec.method === 'rrf') return 0;
  if (spec.normalization === 'min-max' || spec.normalization === 'tm2c2') return 0;
  if (spec.normalization === 'z-score' || spec.normalization === 'dbsf') return undefined;
  let low = 0;
  let weightSum = 0;
  let read = 0;
  for (const { weight, theoreticalMin } of inputs) {
    if (!(weight > 0)) continue;
    if (theoreticalMin === undefined) return undefined;
    low += weight * Math.min(0, theoreticalMin);
    weightSum += weight;
    read++;
  }
  if (read === 0) return undefined;
  if (spec.method === 'cc') return low / weightSum;
  if (spec.method === 'combmnz') return read * low;
  return low;
}
