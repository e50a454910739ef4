/**
 * The fusion's top-k selection over a query's accumulated sums as a kernel module: the AssemblyScript source
 * select-kernels.as.ts, and as its TypeScript twin rank-sort.ts's {@link bestOfSums} over views of the same
 * memory, which does the same passes in the same order and so writes the same bits (harness/util/kernel-set.ts
 * picks one). {@link SelectMemory} lays the memory out for one fusion.
 */
import { instantiateKernels, type KernelModule, type KernelSet, kernelSet, MAX_MEMORY_BYTES } from '../util/kernel-set.js';
import { bestOfSums, ThresholdScratch, thresholdScratchBytes } from './rank-sort.js';

/**
 * bestOfSums(acc, base, div, size, k, scratch, capacity, outL, outS): writes the best min(k, size) entries of
 * the list scoring (base + acc[l]) / div (f64 at byte address acc) into outL (i32) and outS (f64), best first
 * (score descending, then l descending), and returns their number; -1 when the scores resist it (see
 * rank-sort.ts). `scratch` is a region of thresholdScratchBytes(capacity) bytes, size <= capacity.
 */
export type BestOfSumsKernel = (
  acc: number,
  base: number,
  div: number,
  size: number,
  k: number,
  scratch: number,
  capacity: number,
  outL: number,
  outS: number,
) => number;

/** gatherIds(outL, ids, keep): replaces each of the `keep` local positions at outL by ids[position] (int32). */
export type GatherIdsKernel = (outL: number, ids: number, keep: number) => void;

/**
 * addRanks(acc, li, from, to, table, a): acc[li[e]] += table[e - from] - a over entries e in [from, to), li an
 * i32 array of local positions; addRanks16 the same over u16 positions.
 */
export type AddRanksKernel = (acc: number, li: number, from: number, to: number, table: number, a: number) => void;

/** addScores(acc, li, scores, from, to, w, lo, den, shift): acc[li[e]] += w·((scores[e] - lo) / den) + shift; addScores16 over u16 positions. */
export type AddScoresKernel = (acc: number, li: number, scores: number, from: number, to: number, w: number, lo: number, den: number, shift: number) => void;

export interface SelectKernels {
  readonly bestOfSums: BestOfSumsKernel;
  readonly gatherIds: GatherIdsKernel;
  readonly addRanks: AddRanksKernel;
  readonly addRanks16: AddRanksKernel;
  readonly addScores: AddScoresKernel;
  readonly addScores16: AddScoresKernel;
}

/** The twin: rank-sort.ts's bestOfSums over views of `memory` (the scratch's views kept for its next call). */
function jsSelectKernels(memory: ArrayBuffer): SelectKernels {
  let scratch: ThresholdScratch | undefined;
  let scratchAt = -1;
  const kernel: BestOfSumsKernel = (acc, base, div, size, k, at, capacity, outL, outS) => {
    if (scratch === undefined || scratchAt !== at || scratch.capacity !== capacity) {
      scratch = new ThresholdScratch(capacity, memory, at);
      scratchAt = at;
    }
    const n = Math.max(size, 1);
    return bestOfSums(new Float64Array(memory, acc, n), base, div, size, k, scratch, new Int32Array(memory, outL, n), new Float64Array(memory, outS, n));
  };
  const gatherIds: GatherIdsKernel = (outL, ids, keep) => {
    const locals = new Int32Array(memory, outL, keep);
    const table = new Int32Array(memory, ids);
    for (let j = 0; j < keep; j++) locals[j] = table[locals[j]!]!;
  };
  const [addRanks, addScores] = jsAccumulation(memory, new Int32Array(memory), 4);
  const [addRanks16, addScores16] = jsAccumulation(memory, new Uint16Array(memory), 2);
  return { bestOfSums: kernel, gatherIds, addRanks, addRanks16, addScores, addScores16 };
}

/**
 * The accumulation's twin over positions `pos` of `width` bytes: the same operations in the same order over
 * whole-memory views, indexed by address. Four entries an iteration with their positions loaded first, as the
 * kernel does: on V8 this also runs several times faster than the one-entry loop, as the read-modify-writes
 * overlap. Byte addresses are divided, not shifted: a JavaScript set's memory may pass 2 GiB.
 */
function jsAccumulation(memory: ArrayBuffer, pos: Int32Array | Uint16Array, width: number): [AddRanksKernel, AddScoresKernel] {
  const f64 = new Float64Array(memory);
  const addRanks: AddRanksKernel = (accAt, liAt, from, to, tableAt, a) => {
    const acc = accAt / 8;
    const li = liAt / width;
    let t = tableAt / 8;
    let e = from;
    for (; e + 4 <= to; e += 4, t += 4) {
      const l0 = acc + pos[li + e]!;
      const l1 = acc + pos[li + e + 1]!;
      const l2 = acc + pos[li + e + 2]!;
      const l3 = acc + pos[li + e + 3]!;
      f64[l0] = f64[l0]! + (f64[t]! - a);
      f64[l1] = f64[l1]! + (f64[t + 1]! - a);
      f64[l2] = f64[l2]! + (f64[t + 2]! - a);
      f64[l3] = f64[l3]! + (f64[t + 3]! - a);
    }
    for (; e < to; e++, t++) f64[acc + pos[li + e]!] = f64[acc + pos[li + e]!]! + (f64[t]! - a);
  };
  const addScores: AddScoresKernel = (accAt, liAt, scoresAt, from, to, w, lo, den, shift) => {
    const acc = accAt / 8;
    const li = liAt / width;
    const s = scoresAt / 8;
    let e = from;
    for (; e + 4 <= to; e += 4) {
      const l0 = acc + pos[li + e]!;
      const l1 = acc + pos[li + e + 1]!;
      const l2 = acc + pos[li + e + 2]!;
      const l3 = acc + pos[li + e + 3]!;
      f64[l0] = f64[l0]! + (w * ((f64[s + e]! - lo) / den) + shift);
      f64[l1] = f64[l1]! + (w * ((f64[s + e + 1]! - lo) / den) + shift);
      f64[l2] = f64[l2]! + (w * ((f64[s + e + 2]! - lo) / den) + shift);
      f64[l3] = f64[l3]! + (w * ((f64[s + e + 3]! - lo) / den) + shift);
    }
    for (; e < to; e++) f64[acc + pos[li + e]!] = f64[acc + pos[li + e]!]! + (w * ((f64[s + e]! - lo) / den) + shift);
  };
  return [addRanks, addScores];
}

export const SELECT_KERNELS: KernelModule<SelectKernels> = { source: 'harness/fusion/select-kernels.as.ts', js: jsSelectKernels };

/**
 * A fusion's kernel memory for unions of up to `capacity` entries: the accumulator (which the accumulation
 * kernels write and the selection kernel reads in place, so nothing is copied per query), the chosen entries'
 * local positions and scores, the selection's scratch, and from {@link tailAt} `tail` bytes for the caller
 * (the LocalIndex keeps the union and the runs' positions and scores there, accumulate.ts). Memory past the
 * 2 GiB a kernel can address runs the TypeScript set, whatever was asked.
 */
export class SelectMemory {
  readonly kernels: SelectKernels;
  readonly set: KernelSet;
  readonly buffer: ArrayBuffer;
  /** A query's accumulated sums, by local position. */
  readonly acc: Float64Array;
  /** The selected entries, best first: local positions and fused scores. */
  readonly outL: Int32Array;
  readonly outS: Float64Array;
  readonly accAt = 0;
  readonly outLAt: number;
  private readonly outSAt: number;
  private readonly scratchAt: number;
  /** Where the caller's `tail` bytes start (8-aligned). */
  readonly tailAt: number;

  constructor(
    readonly capacity: number,
    set: KernelSet = kernelSet(),
    tail = 0,
  ) {
    const c = Math.max(capacity, 1);
    this.outSAt = 8 * c;
    this.outLAt = 16 * c;
    this.scratchAt = this.outLAt + 8 * Math.ceil(c / 2);
    this.tailAt = this.scratchAt + thresholdScratchBytes(capacity);
    const bytes = this.tailAt + tail;
    this.set = bytes > MAX_MEMORY_BYTES ? 'js' : set;
    const { kernels, memory } = instantiateKernels(SELECT_KERNELS, bytes, this.set);
    this.kernels = kernels;
    this.buffer = memory;
    this.acc = new Float64Array(memory, this.accAt, c);
    this.outS = new Float64Array(memory, this.outSAt, c);
    this.outL = new Int32Array(memory, this.outLAt, c);
  }

  /**
   * The best min(k, size) entries of the accumulated list scoring (base + acc[l]) / div, into outL/outS best
   * first; their number, or -1 when the scores resist the kernel (the caller takes its general path).
   */
  bestOfSums(base: number, div: number, size: number, k: number): number {
    // k past size selects the same entries, and an i32 parameter would wrap a topK beyond 2^31.
    return this.kernels.bestOfSums(this.accAt, base, div, size, Math.min(k, size), this.scratchAt, this.capacity, this.outLAt, this.outSAt);
  }

  /** Replaces outL's first `keep` local positions by their DocTable indices from the union slice at byte `ids`. */
  gatherIds(keep: number, ids: number): void {
    this.kernels.gatherIds(this.outLAt, ids, keep);
  }
}
