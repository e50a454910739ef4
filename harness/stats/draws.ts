/**
 * Shared random draws and the chunk-table trick that makes 1,200 tests × 10,000 draws cheap.
 *
 * Both resampling tests reduce to sums of a subset (or multiset) of one difference vector d. Split the n
 * positions into chunks of 8; for each chunk precompute the 256 partial sums of d over every subset of its
 * positions. A draw encoded as one byte per chunk then costs ⌈n/8⌉ table look-ups instead of n
 * multiply-adds, and the byte-encoded draws are generated once and shared by every vector of the same n.
 * Draws depend only on (seed, n, count), so a vector gets the same result alone or in a batch. The look-ups
 * run four vectors at a time in the kernels of draw-kernels.ts ({@link SharedDrawSums}; WebAssembly SIMD by
 * default), which add every term in the order of the scalar definitions, so their sums are bit for bit theirs
 * (ADR 0004).
 */
import { HarnessError } from '../errors.js';
import { instantiateKernels, MAX_MEMORY_BYTES } from '../util/kernel-set.js';
import { BLOCK_CHUNKS, DRAW_KERNELS, type DrawKernels, ENTRY_BYTES, LANES, SLICE_BYTES } from './draw-kernels.js';
import { Rng } from './rng.js';

/** Comparisons per pass of the kernels: callers of {@link SharedDrawSums} hand it vectors in blocks of this many. */
export { LANES };

/** Stream ids under one user seed, so a Comparison's sign flips and resamples never share draws. */
const SIGN_STREAM = 1;
const RESAMPLE_STREAM = 2;

/** Number of 8-position chunks covering n positions. */
export function chunkCount(n: number): number {
  return (n + 7) >>> 3;
}

/** T[(c << 8) | m] = Σ_{bit k set in m} d[8c + k]; bits beyond n are never set by the draws. */
export function buildChunkTable(d: Float64Array, table: Float64Array): void {
  const chunks = chunkCount(d.length);
  for (let c = 0; c < chunks; c++) {
    const base = c << 8;
    table[base] = 0;
    for (let m = 1; m < 256; m++) {
      const low = 31 - Math.clz32(m & -m);
      const i = (c << 3) + low;
      table[base | m] = (table[base | (m & (m - 1))] as number) + (i < d.length ? (d[i] as number) : 0);
    }
  }
}

/**
 * `count` uniformly random sign vectors of length n, one byte per chunk (bit set = sign +1), drawn from
 * stream 1 of `seed`: each u32 supplies four chunk bytes, the last chunk masked to its valid bits.
 */
export function drawSignBytes(n: number, count: number, seed: number): Uint8Array {
  const chunks = chunkCount(n);
  const lastMask = n % 8 === 0 ? 0xff : (1 << (n % 8)) - 1;
  const out = new Uint8Array(count * chunks);
  const rng = new Rng(seed, SIGN_STREAM);
  for (let b = 0; b < count; b++) {
    const off = b * chunks;
    let word = 0;
    for (let c = 0; c < chunks; c++) {
      if ((c & 3) === 0) word = rng.nextU32();
      out[off + c] = (word >>> ((c & 3) << 3)) & 0xff;
    }
    out[off + chunks - 1] = (out[off + chunks - 1] as number) & lastMask;
  }
  return out;
}

/**
 * Bootstrap resamples of n positions with replacement, stored as multiplicities c_i split into bit plane 0
 * (c_i & 1), bit plane 1 ((c_i >> 1) & 1), both byte-encoded per chunk, and a sparse list of the rare
 * c_i >= 4 (about 2% of positions) with weight c_i >> 2. Then Σ_i c_i d_i = S(plane0) + 2·S(plane1) + 4·Σ_hi.
 */
export interface ResampleDraws {
  readonly n: number;
  readonly count: number;
  readonly chunks: number;
  readonly plane0: Uint8Array;
  readonly plane1: Uint8Array;
  /** Resample b's high entries are hiIndex/hiWeight[hiStart[b] .. hiStart[b + 1]). */
  readonly hiStart: Uint32Array;
  readonly hiIndex: Uint32Array;
  readonly hiWeight: Uint32Array;
}

/** `count` resamples of size n (indices uniform on [0, n), drawn in order from stream 2 of `seed`). */
export function drawResamples(n: number, count: number, seed: number): ResampleDraws {
  const chunks = chunkCount(n);
  const plane0 = new Uint8Array(count * chunks);
  const plane1 = new Uint8Array(count * chunks);
  const hiStart = new Uint32Array(count + 1);
  let hiIndex = new Uint32Array(Math.max(16, Math.ceil(count * n * 0.03)));
  let hiWeight = new Uint32Array(hiIndex.length);
  let hiLen = 0;
  const counts = new Uint32Array(n);
  const rng = new Rng(seed, RESAMPLE_STREAM);
  for (let b = 0; b < count; b++) {
    counts.fill(0);
    for (let j = 0; j < n; j++) {
      const i = rng.nextInt(n);
      counts[i] = (counts[i] as number) + 1;
    }
    const off = b * chunks;
    for (let ch = 0; ch < chunks; ch++) {
      let byte0 = 0;
      let byte1 = 0;
      const end = Math.min(n, (ch + 1) << 3);
      for (let i = ch << 3; i < end; i++) {
        const c = counts[i] as number;
        const bit = i & 7;
        byte0 |= (c & 1) << bit;
        byte1 |= ((c >>> 1) & 1) << bit;
        if (c >= 4) {
          if (hiLen === hiIndex.length) {
            const grownIndex = new Uint32Array(hiLen * 2);
            grownIndex.set(hiIndex);
            hiIndex = grownIndex;
            const grownWeight = new Uint32Array(hiLen * 2);
            grownWeight.set(hiWeight);
            hiWeight = grownWeight;
          }
          hiIndex[hiLen] = i;
          hiWeight[hiLen] = c >>> 2;
          hiLen++;
        }
      }
      plane0[off + ch] = byte0;
      plane1[off + ch] = byte1;
    }
    hiStart[b + 1] = hiLen;
  }
  return { n, count, chunks, plane0, plane1, hiStart, hiIndex: hiIndex.subarray(0, hiLen), hiWeight: hiWeight.subarray(0, hiLen) };
}

/** Group vector indices by length, preserving order, so each length draws once. */
export function groupByLength(vectors: readonly ArrayLike<number>[]): Map<number, number[]> {
  const groups = new Map<number, number[]>();
  vectors.forEach((v, i) => {
    const g = groups.get(v.length);
    if (g === undefined) groups.set(v.length, [i]);
    else g.push(i);
  });
  return groups;
}

/** Where the resample data lives in a kernel's memory, for {@link SharedDrawSums.resampleSums}. */
interface ResampleRegions {
  readonly hiStart: number;
  readonly hiIndex: number;
  readonly hiWeight: number;
  readonly lanes: readonly Float64Array[];
}

/**
 * Sums of chunk-table look-ups over shared draws for {@link LANES} comparisons at a time, on the kernels
 * of draw-kernels.ts: the draws of each set are copied once, chunk-major, into the kernels' own memory; then, for
 * each block of up to four vectors of length n, {@link setVectors} builds their tables in place and
 * {@link sums} returns Σ_c T_v[c, byte of draw b in chunk c] for every draw b and lane v, the sum that
 * {@link buildChunkTable} and a left-to-right pass over the chunks give, bit for bit; for resamples,
 * {@link resampleSums} returns Σ_i c_{b,i} d_i as {@link ResampleDraws} defines it.
 */
export class SharedDrawSums {
  private readonly kernels: DrawKernels;
  private readonly n: number;
  private readonly chunks: number;
  private readonly paddedChunks: number;
  private readonly count: number;
  /** The current vectors interleaved, [i·LANES + v] = vector v's value at position i; zero past n. */
  private readonly vectors: Float64Array;
  private readonly setOffsets: number[] = [];
  private readonly accs: Float64Array[] = [];
  private readonly resamples: ResampleRegions | undefined;

  /** The kernel for bootstrap resamples: sets plane0 and plane1, plus the sparse multiplicities of 4 or more. */
  static ofResamples(draws: ResampleDraws): SharedDrawSums {
    return new SharedDrawSums(draws.n, draws.count, [draws.plane0, draws.plane1], draws);
  }

  /** @param sets byte-encoded draws of n positions, `count` of them each, draw-major (as drawn). */
  constructor(n: number, count: number, sets: readonly Uint8Array[], resamples?: ResampleDraws) {
    this.n = n;
    this.count = count;
    this.chunks = chunkCount(n);
    this.paddedChunks = Math.ceil(this.chunks / BLOCK_CHUNKS) * BLOCK_CHUNKS;
    const align = (x: number): number => Math.ceil(x / 16) * 16;
    const tableBytes = this.paddedChunks * SLICE_BYTES;
    const vectorBytes = this.paddedChunks * 8 * ENTRY_BYTES;
    const setBytes = align(this.paddedChunks * count);
    const accBytes = count * ENTRY_BYTES;
    const hiLength = resamples?.hiIndex.length ?? 0;
    const resampleBytes = resamples === undefined ? 0 : align((count + 1) * 4) + align(hiLength * 4) + hiLength * 8 + count * ENTRY_BYTES;
    const total = tableBytes + vectorBytes + sets.length * (setBytes + accBytes) + resampleBytes;
    if (total > MAX_MEMORY_BYTES) {
      throw new HarnessError(
        `${count} draws of ${n} positions need ${Math.ceil(total / 2 ** 20)} MB of kernel memory (at most ${MAX_MEMORY_BYTES / 2 ** 20} MB)`,
        {
          exitCode: 2,
          hint: 'use fewer permutations or resamples',
        },
      );
    }
    const { kernels, memory: buffer } = instantiateKernels(DRAW_KERNELS, total);
    this.kernels = kernels;
    this.vectors = new Float64Array(buffer, tableBytes, vectorBytes / 8);
    let offset = tableBytes + vectorBytes;
    for (const draws of sets) {
      const chunkMajor = new Uint8Array(buffer, offset, this.paddedChunks * count);
      for (let b = 0; b < count; b++) for (let c = 0; c < this.chunks; c++) chunkMajor[c * count + b] = draws[b * this.chunks + c] as number;
      this.setOffsets.push(offset);
      offset += setBytes;
      this.accs.push(new Float64Array(buffer, offset, count * LANES));
      offset += accBytes;
    }
    if (resamples === undefined) return;
    const hiStart = offset;
    new Uint32Array(buffer, hiStart, count + 1).set(resamples.hiStart);
    offset += align((count + 1) * 4);
    const hiIndex = offset;
    new Uint32Array(buffer, hiIndex, hiLength).set(resamples.hiIndex);
    offset += align(hiLength * 4);
    const hiWeight = offset;
    new Float64Array(buffer, hiWeight, hiLength).set(resamples.hiWeight);
    offset += hiLength * 8;
    const lanes = Array.from({ length: LANES }, (_, v) => new Float64Array(buffer, offset + v * count * 8, count));
    this.resamples = { hiStart, hiIndex, hiWeight, lanes };
  }

  /**
   * Builds the chunk tables of `block` (at most {@link LANES} vectors of length n) into lanes 0, 1, ...;
   * lanes past block.length keep older tables and their sums must be ignored. Lane v's entries are those of
   * {@link buildChunkTable}, computed by the same additions.
   */
  setVectors(block: readonly Float64Array[]): void {
    const { vectors, n } = this;
    block.forEach((d, v) => {
      for (let i = 0; i < n; i++) vectors[i * LANES + v] = d[i] as number;
    });
    this.kernels.tables(0, vectors.byteOffset, this.chunks);
  }

  /** The sums of draw set `set` for the current vectors, lane v of draw b at [b·LANES + v]; overwritten by the next call for that set. */
  sums(set: number): Float64Array {
    const acc = this.accs[set] as Float64Array;
    acc.fill(0);
    this.kernels.sums(0, this.setOffsets[set] as number, this.count, this.paddedChunks, acc.byteOffset);
    return acc;
  }

  /**
   * Σ_i c_{b,i} d_i for every resample b and lane v (built by {@link ofResamples}): lane v's sums in
   * [v][b], S0 + 2·S1 + 4·Σ_k w_k d[x_k] with S0, S1 the look-up sums of the two bit planes. Overwritten by
   * the next call.
   */
  resampleSums(): readonly Float64Array[] {
    const r = this.resamples;
    if (r === undefined) throw new HarnessError('SharedDrawSums.resampleSums: built without resamples (use SharedDrawSums.ofResamples)');
    const s0 = this.sums(0);
    const s1 = this.sums(1);
    this.kernels.combine(
      this.vectors.byteOffset,
      r.hiStart,
      r.hiIndex,
      r.hiWeight,
      this.count,
      s0.byteOffset,
      s1.byteOffset,
      (r.lanes[0] as Float64Array).byteOffset,
    );
    return r.lanes;
  }
}
