/**
 * The fusion's top-k selection over a query's accumulated sums as a kernel module: the AssemblyScript source
 * select-kernels.as.ts, and as its TypeScript twin rank-sort.ts's {@link bestOfSums} over views of the same
 * memory, which does the same passes in the same order and so writes the same bits (harness/util/kernel-set.ts
 * picks one). {@link SelectMemory} lays the memory out for one fusion.
 */
import { instantiateKernels, type KernelModule, type KernelSet, kernelSet, MAX_MEMORY_BYTES } from '../util/kernel-set.js';
import { FusionInputError } from './errors.js';
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

export interface SelectKernels {
  readonly bestOfSums: BestOfSumsKernel;
  readonly gatherIds: GatherIdsKernel;
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
  return { bestOfSums: kernel, gatherIds };
}

export const SELECT_KERNELS: KernelModule<SelectKernels> = { source: 'harness/fusion/select-kernels.as.ts', js: jsSelectKernels };

/**
 * One fusion's selection memory for unions of up to `capacity` entries: the accumulator (which the
 * accumulation writes and the kernel reads in place, so nothing is copied per query), the chosen entries'
 * local positions and scores, the query's union slice (document index by local position), and the kernel's
 * scratch.
 */
export class SelectMemory {
  readonly kernels: SelectKernels;
  /** A query's accumulated sums, by local position. */
  readonly acc: Float64Array;
  /** The selected entries, best first: local positions and fused scores. */
  readonly outL: Int32Array;
  readonly outS: Float64Array;
  /** The current query's union slice: the DocTable index of each local position. */
  readonly ids: Int32Array;
  private readonly accAt = 0;
  private readonly idsAt: number;
  private readonly outSAt: number;
  private readonly outLAt: number;
  private readonly scratchAt: number;

  constructor(
    readonly capacity: number,
    set: KernelSet = kernelSet(),
  ) {
    const c = Math.max(capacity, 1);
    this.outSAt = 8 * c;
    this.outLAt = 16 * c;
    this.idsAt = this.outLAt + 8 * Math.ceil(c / 2);
    this.scratchAt = this.idsAt + 8 * Math.ceil(c / 2);
    const bytes = this.scratchAt + thresholdScratchBytes(capacity);
    if (bytes > MAX_MEMORY_BYTES) {
      throw new FusionInputError(`a query's union of ${capacity} documents is too large for the selection kernel's memory`, {
        hint: "lower the inputs' depth",
      });
    }
    const { kernels, memory } = instantiateKernels(SELECT_KERNELS, bytes, set);
    this.kernels = kernels;
    this.acc = new Float64Array(memory, this.accAt, c);
    this.outS = new Float64Array(memory, this.outSAt, c);
    this.outL = new Int32Array(memory, this.outLAt, c);
    this.ids = new Int32Array(memory, this.idsAt, c);
  }

  /**
   * The best min(k, size) entries of the accumulated list scoring (base + acc[l]) / div, into outL/outS best
   * first; their number, or -1 when the scores resist the kernel (the caller takes its general path).
   */
  bestOfSums(base: number, div: number, size: number, k: number): number {
    // k past size selects the same entries, and an i32 parameter would wrap a topK beyond 2^31.
    return this.kernels.bestOfSums(this.accAt, base, div, size, Math.min(k, size), this.scratchAt, this.capacity, this.outLAt, this.outSAt);
  }

  /** Replaces outL's first `keep` local positions by their DocTable indices from {@link ids}. */
  gatherIds(keep: number): void {
    this.kernels.gatherIds(this.outLAt, this.idsAt, keep);
  }
}
