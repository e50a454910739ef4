import { FusionInputError } from './errors.js';
import type { PackedRun } from './run-form.js';
import type { FusionInput, FusionSpec } from './spec.js';

/**
 * The runs of one fusion re-indexed per query: the union of every input's documents for query q, sorted by
 * DocTable index, is `union[unionOffsets[q], unionOffsets[q+1])`, and `local[i][e]` is the position of entry
 * e of input i inside its query's union. Local positions follow DocTable order, so "higher index first" still
 * breaks ties, and the accumulator of one query is a few thousand contiguous slots that stay in cache instead
 * of one slot per document of the table (random access over megabytes was 5-15x slower than reading the runs).
 * Built once per set of runs and memoized: a grid of hundreds of fusions over the same runs pays it once.
 */
export interface LocalIndex {
  readonly unionOffsets: Int32Array;
  readonly union: Int32Array;
  readonly local: readonly Int32Array[];
  /** The largest union of one query. */
  readonly maxUnion: number;
}

const memo = new WeakMap<Int32Array, { runs: readonly PackedRun[]; index: LocalIndex }[]>();
const MEMO_PER_KEY = 8;

/** The LocalIndex of `runs` (which share one DocTable of `tableSize` ids and one query list), memoized. */
export function localIndex(runs: readonly PackedRun[], tableSize: number): LocalIndex {
  const key = runs[0]!.docs;
  const entries = memo.get(key) ?? [];
  const hit = entries.find((e) => e.runs.length === runs.length && e.runs.every((r, i) => r.docs === runs[i]!.docs && r.offsets === runs[i]!.offsets));
  if (hit) return hit.index;
  const index = buildLocalIndex(runs, tableSize);
  entries.push({ runs: [...runs], index });
  if (entries.length > MEMO_PER_KEY) entries.shift();
  memo.set(key, entries);
  return index;
}

function buildLocalIndex(runs: readonly PackedRun[], tableSize: number): LocalIndex {
  const nq = runs[0]!.queries.length;
  const mark = new Int32Array(tableSize);
  const position = new Int32Array(tableSize);
  let total = 0;
  for (const r of runs) total += r.docs.length;
  let union = new Int32Array(total);
  const unionOffsets = new Int32Array(nq + 1);
  const local = runs.map((r) => new Int32Array(r.docs.length));
  let used = 0;
  let maxUnion = 0;
  for (let q = 0; q < nq; q++) {
    const epoch = q + 1;
    const start = used;
    for (const r of runs) {
      for (let e = r.offsets[q]!; e < r.offsets[q + 1]!; e++) {
        const d = r.docs[e]!;
        if (mark[d] !== epoch) {
          mark[d] = epoch;
          union[used++] = d;
        }
      }
    }
    union.subarray(start, used).sort();
    for (let u = start; u < used; u++) position[union[u]!] = u - start;
    runs.forEach((r, i) => {
      const li = local[i]!;
      for (let e = r.offsets[q]!; e < r.offsets[q + 1]!; e++) li[e] = position[r.docs[e]!]!;
    });
    unionOffsets[q + 1] = used;
    maxUnion = Math.max(maxUnion, used - start);
  }
  if (used < total) union = union.slice(0, used);
  return { unionOffsets, union, local, maxUnion };
}

/** The validated shape of one fusion: inputs actually read (weight > 0, depth > 0) and their index. */
export interface CheckedFusion {
  readonly queries: readonly string[];
  readonly tableSize: number;
  /** Inputs read, with their positions in the caller's list. */
  readonly active: readonly { readonly input: FusionInput; readonly at: number }[];
  /** Sum of the active weights (cc divides by it). */
  readonly weightSum: number;
  readonly index: LocalIndex;
}

/**
 * One query's fused scores. For each input i read and each document d of its top-depth, `acc[local(d)]`
 * receives w_i·c_i(d) - a_i, where c_i is the normalised (or reciprocal-rank) value and a_i what the absent
 * policy gives a document missing from input i; `base` = Σ a_i is added once per document by `score`, so an
 * absent document costs nothing and is still scored by the policy. `count[l]` is how many inputs read it.
 */
export class QueryAccumulator {
  readonly acc: Float64Array;
  /**
   * How many inputs read each document of the current query; valid only when `counted` (CombMNZ, or a query
   * in which some input is not read in full, so that part of the union may be untouched). Otherwise every
   * document of the union was read by at least one input and the count is skipped: it was a third of the
   * accumulation's cost.
   */
  readonly count: Int32Array;
  counted = true;
  base = 0;
  /** Union size of the current query. */
  size = 0;
  /** Per active input, for the current query: entries read, and the gain (w·c - a) of its first entry. */
  readonly reads: Int32Array;
  readonly firstGain: Float64Array;
  private readonly rankTables: (Float64Array | undefined)[];
  /** Per active input under z-score or dbsf: each query's (lo, den), two passes over its list, memoized. */
  private readonly listStats: (Float64Array | undefined)[];
  private readonly cc: boolean;
  private readonly mnz: boolean;

  /** `acc`, when given, holds at least maxUnion slots: a selection kernel's memory, read there in place. */
  constructor(
    readonly checked: CheckedFusion,
    private readonly spec: FusionSpec,
    acc?: Float64Array,
  ) {
    this.acc = acc ?? new Float64Array(checked.index.maxUnion);
    this.count = new Int32Array(checked.index.maxUnion);
    this.reads = new Int32Array(checked.active.length);
    this.firstGain = new Float64Array(checked.active.length);
    this.cc = spec.method === 'cc';
    this.mnz = spec.method === 'combmnz';
    this.listStats = checked.active.map(({ input }) =>
      spec.method !== 'rrf' && (spec.normalization === 'z-score' || spec.normalization === 'dbsf')
        ? listStats(input.run, input.depth, spec.normalization)
        : undefined,
    );
    // RRF contributions depend on rank only: one table per input, w / (rrfK + r), r from 1.
    this.rankTables = checked.active.map(({ input }) => {
      if (spec.method !== 'rrf') return undefined;
      const run = input.run;
      let longest = 0;
      for (let q = 0; q < run.queries.length; q++) longest = Math.max(longest, run.offsets[q + 1]! - run.offsets[q]!);
      const t = new Float64Array(Math.min(longest, input.depth));
      for (let r = 0; r < t.length; r++) t[r] = input.weight / (spec.rrfK + r + 1);
      return t;
    });
  }

  /** The fused score of a document with accumulated gain `gain`, read by `inputs` inputs. */
  score(gain: number, inputs: number): number {
    const sum = this.base + gain;
    return this.cc ? sum / this.checked.weightSum : this.mnz ? inputs * sum : sum;
  }

  /** Writes the fused score of every document of the current query's union, -Infinity for one not read. */
  finalScores(out: Float64Array): void {
    const { acc, count, size, base } = this;
    const w = this.checked.weightSum;
    if (this.mnz) for (let l = 0; l < size; l++) out[l] = count[l] === 0 ? -Infinity : count[l]! * (base + acc[l]!);
    else if (!this.counted) {
      if (this.cc) for (let l = 0; l < size; l++) out[l] = (base + acc[l]!) / w;
      else for (let l = 0; l < size; l++) out[l] = base + acc[l]!;
    } else for (let l = 0; l < size; l++) out[l] = count[l] === 0 ? -Infinity : this.score(acc[l]!, count[l]!);
  }

  /** Accumulates query position q into acc/count[0, size). */
  accumulate(q: number): void {
    const { acc, count } = this;
    const { unionOffsets, local } = this.checked.index;
    const size = unionOffsets[q + 1]! - unionOffsets[q]!;
    const active = this.checked.active;
    let counted = this.mnz || active.length < local.length;
    for (let i = 0; i < active.length && !counted; i++) {
      const { input } = active[i]!;
      counted = input.depth < input.run.offsets[q + 1]! - input.run.offsets[q]!;
    }
    acc.fill(0, 0, size);
    if (counted) count.fill(0, 0, size);
    const cnt = counted ? count : undefined;
    this.counted = counted;
    this.size = size;
    let base = 0;
    for (let i = 0; i < active.length; i++) {
      const { input, at } = active[i]!;
      const { scores, offsets } = input.run;
      const li = local[at]!;
      const from = offsets[q]!;
      const end = offsets[q + 1]!;
      // Compare before adding: from + Infinity would turn the loop bound into a double.
      const to = input.depth < end - from ? from + input.depth : end;
      this.reads[i] = to - from;
      if (to === from) continue;
      const w = input.weight;
      const table = this.rankTables[i];
      if (table !== undefined) {
        const a = this.spec.absent === 'min' ? table[to - from - 1]! : 0;
        base += a;
        this.firstGain[i] = table[0]! - a;
        addRanks(acc, cnt, li, from, to, table, a);
        continue;
      }
      // φ(s) = (s - lo) / den, or a constant when the list is degenerate (den = 0): 1 for min-max (every
      // read document is the list's best), 0 for z-score (the mean) and tm2c2 (the floor), 0.5 for dbsf (Qdrant's).
      let lo = 0;
      let den = 1;
      let flat = 0;
      const norm = this.spec.normalization;
      if (norm === 'min-max') {
        lo = scores[to - 1]!;
        den = scores[from]! - lo;
        flat = 1;
      } else if (norm === 'tm2c2') {
        lo = input.theoreticalMin!;
        if (scores[to - 1]! < lo) {
          throw new FusionInputError(`input ${at}: query "${input.run.queries[q]}": score ${scores[to - 1]} is below the declared theoretical minimum ${lo}`, {
            hint: 'fix the theoreticalMin declared for this input, or use min-max',
          });
        }
        den = scores[from]! - lo;
      } else if (norm === 'dbsf' || norm === 'z-score') {
        const stats = this.listStats[i]!;
        lo = stats[2 * q]!;
        den = stats[2 * q + 1]!;
        flat = norm === 'dbsf' ? 0.5 : 0;
      }
      if (den === 0) {
        const c = w * flat;
        const a = this.spec.absent === 'min' ? c : 0;
        base += a;
        this.firstGain[i] = c - a;
        addScores(acc, cnt, li, scores, from, to, 0, lo, 1, c - a);
        continue;
      }
      const a = this.spec.absent === 'min' ? w * ((scores[to - 1]! - lo) / den) : 0;
      base += a;
      this.firstGain[i] = w * ((scores[from]! - lo) / den) - a;
      addScores(acc, cnt, li, scores, from, to, w, lo, den, -a);
    }
    this.base = base;
  }
}

const statsMemo = new WeakMap<Float64Array, Map<string, Float64Array>>();

/**
 * Per query of `run`, its top-`depth` list's (lo, den) under z-score (mean, population sd) or dbsf (see
 * {@link dbsfRange}), interleaved. They depend on the run, the depth and the normalization only, so a grid
 * that re-fuses the same runs under other weights computes them once (they were two of the three passes of
 * a z-score fusion's reading, docs/perf/fusion.md); memoized per scores array, as the LocalIndex is.
 */
function listStats(run: PackedRun, depth: number, norm: 'z-score' | 'dbsf'): Float64Array {
  const key = `${norm} ${depth}`;
  let byKey = statsMemo.get(run.scores);
  const hit = byKey?.get(key);
  if (hit !== undefined) return hit;
  const { scores, offsets } = run;
  const nq = offsets.length - 1;
  const out = new Float64Array(2 * nq);
  for (let q = 0; q < nq; q++) {
    const from = offsets[q]!;
    const end = offsets[q + 1]!;
    const to = depth < end - from ? from + depth : end;
    if (to === from) continue;
    if (norm === 'dbsf') {
      [out[2 * q], out[2 * q + 1]] = dbsfRange(scores, from, to);
      continue;
    }
    let sum = 0;
    for (let e = from; e < to; e++) sum += scores[e]!;
    const lo = sum / (to - from);
    let ss = 0;
    for (let e = from; e < to; e++) ss += (scores[e]! - lo) * (scores[e]! - lo);
    out[2 * q] = lo;
    out[2 * q + 1] = Math.sqrt(ss / (to - from));
  }
  if (byKey === undefined) {
    byKey = new Map();
    statsMemo.set(run.scores, byKey);
  }
  byKey.set(key, out);
  return out;
}

/**
 * DBSF's [lo, hi) as (lo, hi - lo) over scores[from, to): mean ∓ 3 sample sd by Welford's recurrence, in the
 * order Qdrant's `welfords_mean_variance` runs it (f64 here, f32 there); (0, 0) for fewer than two scores, so
 * the caller's flat value (0.5) applies, as it does when hi - lo is 0.
 */
export function dbsfRange(scores: Float64Array, from: number, to: number): [number, number] {
  if (to - from < 2) return [0, 0];
  let mean = 0;
  let aggregate = 0;
  for (let e = from, k = 1; e < to; e++, k++) {
    const old = scores[e]! - mean;
    mean += old / k;
    aggregate += old * (scores[e]! - mean);
  }
  const sd = Math.sqrt(aggregate / (to - from - 1));
  const lo = mean - 3 * sd;
  return [lo, mean + 3 * sd - lo];
}

// The two hot loops. Four entries per iteration, their positions loaded first: on V8 this runs several times
// faster than the one-entry loop (measured in bench/fusion.ts), as the four read-modify-writes overlap. Entries
// of one input are distinct documents, so the four slots never alias.

/** acc[local] += table[rank] - a over entries [from, to); count[local] += 1 when counting. */
function addRanks(acc: Float64Array, count: Int32Array | undefined, li: Int32Array, from: number, to: number, table: Float64Array, a: number): void {
  let e = from;
  let r = 0;
  for (; e + 4 <= to; e += 4, r += 4) {
    const l0 = li[e]!;
    const l1 = li[e + 1]!;
    const l2 = li[e + 2]!;
    const l3 = li[e + 3]!;
    acc[l0] = acc[l0]! + (table[r]! - a);
    acc[l1] = acc[l1]! + (table[r + 1]! - a);
    acc[l2] = acc[l2]! + (table[r + 2]! - a);
    acc[l3] = acc[l3]! + (table[r + 3]! - a);
  }
  for (; e < to; e++, r++) acc[li[e]!] = acc[li[e]!]! + (table[r]! - a);
  if (count !== undefined) for (let i = from; i < to; i++) count[li[i]!] = count[li[i]!]! + 1;
}

/** acc[local] += w·((s - lo) / den) + shift over entries [from, to); count[local] += 1 when counting. */
function addScores(
  acc: Float64Array,
  count: Int32Array | undefined,
  li: Int32Array,
  scores: Float64Array,
  from: number,
  to: number,
  w: number,
  lo: number,
  den: number,
  shift: number,
): void {
  let e = from;
  for (; e + 4 <= to; e += 4) {
    const l0 = li[e]!;
    const l1 = li[e + 1]!;
    const l2 = li[e + 2]!;
    const l3 = li[e + 3]!;
    acc[l0] = acc[l0]! + (w * ((scores[e]! - lo) / den) + shift);
    acc[l1] = acc[l1]! + (w * ((scores[e + 1]! - lo) / den) + shift);
    acc[l2] = acc[l2]! + (w * ((scores[e + 2]! - lo) / den) + shift);
    acc[l3] = acc[l3]! + (w * ((scores[e + 3]! - lo) / den) + shift);
  }
  for (; e < to; e++) acc[li[e]!] = acc[li[e]!]! + (w * ((scores[e]! - lo) / den) + shift);
  if (count !== undefined) for (let i = from; i < to; i++) count[li[i]!] = count[li[i]!]! + 1;
}
