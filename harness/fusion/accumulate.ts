import { FusionInputError } from './errors.js';
import type { PackedRun } from './run-form.js';
import { type AddRanksKernel, type AddScoresKernel, SelectMemory } from './select-kernels.js';
import { type KernelSet, kernelSet } from '../util/kernel-set.js';
import type { FusionInput, FusionSpec } from './spec.js';

/**
 * The runs of one fusion re-indexed per query: the union of every input's documents for query q, sorted by
 * DocTable index, is `union[unionOffsets[q], unionOffsets[q+1])`, and `local[i][e]` is the position of entry
 * e of input i inside its query's union. Local positions follow DocTable order, so "higher index first" still
 * breaks ties, and the accumulator of one query is a few thousand contiguous slots that stay in cache instead
 * of one slot per document of the table (random access over megabytes was 5-15x slower than reading the runs).
 * Built once per set of runs and memoized: a grid of hundreds of fusions over the same runs pays it once.
 *
 * The kernels read their own copy in a kernel memory ({@link SelectMemory}): the union, the local positions
 * (u16 where every union fits 65,536, i32 otherwise) and, made on first use by {@link scoresAt}, the inputs'
 * scores, both laid out query-major (query q's lists of input 0, 1, ... one after another), so that a query's
 * accumulation reads two long runs of memory rather than twenty short ones the prefetcher starts on afresh;
 * and each input's reciprocal-rank table (docs/perf/fusion.md). A PackedRun's arrays are never modified once
 * packed (the z-score memo below relies on it too); a run whose docs and offsets match but whose scores are
 * another array gets its scores copied again.
 */
export interface LocalIndex {
  readonly unionOffsets: Int32Array;
  readonly union: Int32Array;
  readonly local: readonly Int32Array[];
  /** The largest union of one query. */
  readonly maxUnion: number;
  readonly memory: SelectMemory;
  /** Bytes a kernel's local position takes: 2 (u16) or 4 (i32). */
  readonly width: number;
  /** Where the list of input i for query position q starts in the query-major layout, in entries: listAt[q · inputs + i]. */
  readonly listAt: Float64Array;
  /** Byte addresses in memory: the union, the local positions and scores (query-major), each input's rank table. */
  readonly unionAt: number;
  readonly localAt: number;
  readonly scoresCopyAt: number;
  readonly tableAt: readonly number[];
  /** The scores array each input's copy was made from (undefined: not yet copied). */
  readonly scoresFrom: (Float64Array | undefined)[];
}

/** Copies input i's scores into the index's memory when the copy there is not of `run`'s scores array. */
export function copyScores(index: LocalIndex, i: number, run: PackedRun): void {
  if (index.scoresFrom[i] === run.scores) return;
  const inputs = index.local.length;
  const copy = new Float64Array(index.memory.buffer, index.scoresCopyAt, totalEntries(index));
  for (let q = 0; q + 1 < run.offsets.length; q++) copy.set(run.scores.subarray(run.offsets[q]!, run.offsets[q + 1]!), index.listAt[q * inputs + i]!);
  index.scoresFrom[i] = run.scores;
}

function totalEntries(index: LocalIndex): number {
  let n = 0;
  for (const li of index.local) n += li.length;
  return n;
}

const memo = new WeakMap<Int32Array, { runs: readonly PackedRun[]; set: KernelSet; index: LocalIndex }[]>();
const MEMO_PER_KEY = 8;

/** The LocalIndex of `runs` (which share one DocTable of `tableSize` ids and one query list), memoized. */
export function localIndex(runs: readonly PackedRun[], tableSize: number, set: KernelSet = kernelSet()): LocalIndex {
  const key = runs[0]!.docs;
  const entries = memo.get(key) ?? [];
  const hit = entries.find(
    (e) => e.set === set && e.runs.length === runs.length && e.runs.every((r, i) => r.docs === runs[i]!.docs && r.offsets === runs[i]!.offsets),
  );
  if (hit) return hit.index;
  const index = inKernelMemory(runs, buildLocalIndex(runs, tableSize), set);
  entries.push({ runs: [...runs], set, index });
  if (entries.length > MEMO_PER_KEY) entries.shift();
  memo.set(key, entries);
  return index;
}

type PlainIndex = Pick<LocalIndex, 'unionOffsets' | 'union' | 'local' | 'maxUnion'>;

/** The largest union whose local positions the kernels read as u16. */
const NARROW_UNION = 65536;

/** Copies a built index into a kernel memory laid out as {@link LocalIndex} says (8-aligned regions). */
function inKernelMemory(runs: readonly PackedRun[], plain: PlainIndex, set: KernelSet): LocalIndex {
  const align = (bytes: number) => 8 * Math.ceil(bytes / 8);
  const width = plain.maxUnion <= NARROW_UNION ? 2 : 4;
  const listAt = queryMajor(runs);
  let total = 0;
  for (const r of runs) total += r.docs.length;
  const localAt = align(4 * plain.union.length);
  const scoresCopyAt = localAt + align(width * total);
  let tail = scoresCopyAt + 8 * total;
  const tableAt = runs.map((r) => {
    const at = tail;
    tail += 8 * longestList(r);
    return at;
  });
  const memory = new SelectMemory(plain.maxUnion, set, tail);
  const at = (offset: number) => memory.tailAt + offset;
  new Int32Array(memory.buffer, memory.tailAt, plain.union.length).set(plain.union);
  const positions = width === 2 ? new Uint16Array(memory.buffer, at(localAt), total) : new Int32Array(memory.buffer, at(localAt), total);
  runs.forEach((r, i) => {
    for (let q = 0; q + 1 < r.offsets.length; q++) positions.set(plain.local[i]!.subarray(r.offsets[q]!, r.offsets[q + 1]!), listAt[q * runs.length + i]!);
  });
  return {
    ...plain,
    memory,
    width,
    listAt,
    unionAt: memory.tailAt,
    localAt: at(localAt),
    scoresCopyAt: at(scoresCopyAt),
    tableAt: tableAt.map(at),
    scoresFrom: runs.map(() => undefined),
  };
}

/** Per query position q and input i, where that list starts when the queries' lists follow one another. */
function queryMajor(runs: readonly PackedRun[]): Float64Array {
  const nq = runs[0]!.queries.length;
  const listAt = new Float64Array(nq * runs.length);
  let at = 0;
  for (let q = 0; q < nq; q++) {
    runs.forEach((r, i) => {
      listAt[q * runs.length + i] = at;
      at += r.offsets[q + 1]! - r.offsets[q]!;
    });
  }
  return listAt;
}

function longestList(run: PackedRun): number {
  let longest = 0;
  for (let q = 0; q < run.queries.length; q++) longest = Math.max(longest, run.offsets[q + 1]! - run.offsets[q]!);
  return longest;
}

function buildLocalIndex(runs: readonly PackedRun[], tableSize: number): PlainIndex {
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
  // A view, not a copy: inKernelMemory copies it into the kernel memory.
  if (used < total) union = union.subarray(0, used);
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
  /** Per active input of a score fusion: each query's first and last score read, memoized (see listEnds). */
  private readonly listEnds: (Float64Array | undefined)[];
  private readonly cc: boolean;
  private readonly mnz: boolean;
  /** The accumulation kernels for the index's position width. */
  private readonly addRanks: AddRanksKernel;
  private readonly addScoresK: AddScoresKernel;

  /** The accumulator is the index's kernel memory's (see LocalIndex), so a fusion's selection reads it in place. */
  constructor(
    readonly checked: CheckedFusion,
    private readonly spec: FusionSpec,
  ) {
    const memory = checked.index.memory;
    const narrow = checked.index.width === 2;
    this.addRanks = narrow ? memory.kernels.addRanks16 : memory.kernels.addRanks;
    this.addScoresK = narrow ? memory.kernels.addScores16 : memory.kernels.addScores;
    this.acc = memory.acc;
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
    this.listEnds = checked.active.map(({ input }) => (spec.method === 'rrf' ? undefined : listEnds(input.run, input.depth)));
    // RRF contributions depend on rank only: one table per input, w / (rrfK + r), r from 1, in the index's memory.
    this.rankTables = checked.active.map(({ input, at }) => {
      if (spec.method !== 'rrf') return undefined;
      const t = new Float64Array(memory.buffer, checked.index.tableAt[at]!, tableLength(input));
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
    const index = this.checked.index;
    const { unionOffsets, local, memory } = index;
    const size = unionOffsets[q + 1]! - unionOffsets[q]!;
    const active = this.checked.active;
    let counted = this.mnz || active.length < local.length;
    for (let i = 0; i < active.length && !counted; i++) {
      const { input } = active[i]!;
      counted = input.depth < input.run.offsets[q + 1]! - input.run.offsets[q]!;
    }
    acc.fill(0, 0, size);
    if (counted) count.fill(0, 0, size);
    this.counted = counted;
    this.size = size;
    let base = 0;
    for (let i = 0; i < active.length; i++) {
      const { input, at } = active[i]!;
      const { offsets } = input.run;
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
        this.addRanks(memory.accAt, index.localAt + index.width * index.listAt[q * local.length + at]!, 0, to - from, index.tableAt[at]!, a);
        if (counted) countReads(count, local[at]!, from, to);
        continue;
      }
      // φ(s) = (s - lo) / den, or a constant when the list is degenerate (den = 0): 1 for min-max (every
      // read document is the list's best), 0 for z-score (the mean) and tm2c2 (the floor), 0.5 for dbsf (Qdrant's).
      let lo = 0;
      let den = 1;
      let flat = 0;
      const norm = this.spec.normalization;
      const ends = this.listEnds[i]!;
      const first = ends[2 * q]!;
      const last = ends[2 * q + 1]!;
      if (norm === 'min-max') {
        lo = last;
        den = first - lo;
        flat = 1;
      } else if (norm === 'tm2c2') {
        lo = input.theoreticalMin!;
        if (last < lo) {
          throw new FusionInputError(`input ${at}: query "${input.run.queries[q]}": score ${last} is below the declared theoretical minimum ${lo}`, {
            hint: 'fix the theoreticalMin declared for this input, or use min-max',
          });
        }
        den = first - lo;
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
        this.addScores(i, q, from, to, 0, lo, 1, c - a);
        continue;
      }
      const a = this.spec.absent === 'min' ? w * ((last - lo) / den) : 0;
      base += a;
      this.firstGain[i] = w * ((first - lo) / den) - a;
      this.addScores(i, q, from, to, w, lo, den, -a);
    }
    this.base = base;
  }

  /** Active input i's entries [from, to) of query position q into the accumulator, w·((s - lo) / den) + shift each, and the count. */
  private addScores(i: number, q: number, from: number, to: number, w: number, lo: number, den: number, shift: number): void {
    const { input, at } = this.checked.active[i]!;
    const index = this.checked.index;
    copyScores(index, at, input.run);
    const list = index.listAt[q * index.local.length + at]!;
    this.addScoresK(index.memory.accAt, index.localAt + index.width * list, index.scoresCopyAt + 8 * list, 0, to - from, w, lo, den, shift);
    if (this.counted) countReads(this.count, index.local[at]!, from, to);
  }
}

/** The entries read of one rrf table: the input's longest list, or its depth when shorter. */
function tableLength(input: FusionInput): number {
  return Math.min(longestList(input.run), input.depth);
}

const listMemo = new WeakMap<Float64Array, Map<string, Float64Array>>();

/**
 * Per query of `run`, two values `of` its top-`depth` list, interleaved ((0, 0) for an empty list). They depend on
 * the run, the depth and `key` only, so a grid that re-fuses the same runs under other weights computes them
 * once; memoized per scores array, as the LocalIndex is.
 */
function perList(run: PackedRun, depth: number, key: string, of: (scores: Float64Array, from: number, to: number) => readonly [number, number]): Float64Array {
  const memoKey = `${key} ${depth}`;
  let byKey = listMemo.get(run.scores);
  const hit = byKey?.get(memoKey);
  if (hit !== undefined) return hit;
  const { scores, offsets } = run;
  const nq = offsets.length - 1;
  const out = new Float64Array(2 * nq);
  for (let q = 0; q < nq; q++) {
    const from = offsets[q]!;
    const end = offsets[q + 1]!;
    const to = depth < end - from ? from + depth : end;
    if (to !== from) [out[2 * q], out[2 * q + 1]] = of(scores, from, to);
  }
  if (byKey === undefined) {
    byKey = new Map();
    listMemo.set(run.scores, byKey);
  }
  byKey.set(memoKey, out);
  return out;
}

/**
 * Each query's first and last score read: min-max's lo and den, tm2c2's check, the absent value and the first
 * gain. Read per query and input, they were two cache misses each, a third of the JavaScript part of a fusion's
 * accumulation (docs/perf/fusion.md).
 */
function listEnds(run: PackedRun, depth: number): Float64Array {
  return perList(run, depth, 'ends', (scores, from, to) => [scores[from]!, scores[to - 1]!]);
}

/**
 * Each query's (lo, den) under z-score (mean, population sd) or dbsf (see {@link dbsfRange}): two of the three
 * passes of a z-score fusion's reading before they were memoized (docs/perf/fusion.md).
 */
function listStats(run: PackedRun, depth: number, norm: 'z-score' | 'dbsf'): Float64Array {
  return perList(run, depth, norm, norm === 'dbsf' ? dbsfRange : meanSd);
}

/** Mean and population standard deviation of scores[from, to). */
function meanSd(scores: Float64Array, from: number, to: number): [number, number] {
  let sum = 0;
  for (let e = from; e < to; e++) sum += scores[e]!;
  const lo = sum / (to - from);
  let ss = 0;
  for (let e = from; e < to; e++) ss += (scores[e]! - lo) * (scores[e]! - lo);
  return [lo, Math.sqrt(ss / (to - from))];
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

/** count[local] += 1 over entries [from, to): how many inputs read each document, when it matters (CombMNZ). */
function countReads(count: Int32Array, li: Int32Array, from: number, to: number): void {
  for (let e = from; e < to; e++) count[li[e]!] = count[li[e]!]! + 1;
}
