/**
 * Shared random draws and the chunk-table trick that makes 1,200 tests × 10,000 draws cheap.
 *
 * Both resampling tests reduce to sums of a subset (or multiset) of one difference vector d. Split the n
 * positions into chunks of 8; for each chunk precompute the 256 partial sums of d over every subset of its
 * positions. A draw encoded as one byte per chunk then costs ⌈n/8⌉ table look-ups instead of n
 * multiply-adds, and the byte-encoded draws are generated once and shared by every vector of the same n.
 * Draws depend only on (seed, n, count), so a vector gets the same result alone or in a batch. The look-ups
 * run four vectors at a time in a small WebAssembly SIMD module assembled below ({@link SharedDrawSums}), which
 * adds every term in the order of the scalar definitions, so its sums are bit for bit theirs (ADR 0004).
 */
import { HarnessError } from '../errors.js';
import {
  ADD,
  BLOCK,
  BREAK_IF,
  CONTINUE,
  END,
  F64X2_ADD,
  F64X2_MUL,
  F64X2_SPLAT,
  f64,
  f64x2Extract,
  GE_U,
  get,
  I32,
  i32,
  Kernel,
  LOOP,
  LT_U,
  loadF64,
  loadI32,
  loadU8,
  MAX_MEMORY_BYTES,
  MUL,
  SELECT,
  SHL,
  set,
  storeF64,
  V128,
  type ValType,
  VZERO,
  vload,
  vstore,
  type WasmFunction,
} from '../wasm/assemble.js';
import { Rng } from './rng.js';

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

/**
 * Comparisons the kernel handles in one pass over the draws. Their chunk tables are interleaved, so entry
 * (c, m) holds the four subset sums side by side (32 bytes, two 128-bit vectors): one draw byte is read and
 * one index computed for four comparisons, and the four lanes are added by two SIMD additions.
 */
export const LANES = 4;

/**
 * Chunks whose tables a pass over a block of draws reads together: 4 × 8 KB of interleaved table, which stays
 * in a 32 KB L1 cache while the block's draws stream past. Tables are padded with zero chunks to a multiple.
 */
const BLOCK_CHUNKS = 4;
/** Draws per block: their running sums (2,048 × 32 bytes) stay in L2 while every chunk block adds to them. */
const BLOCK_DRAWS = 2048;
const ENTRY_BYTES = LANES * 8;
const SLICE_BYTES = 256 * ENTRY_BYTES;
type SumsExport = (table: number, bytes: number, count: number, chunks: number, acc: number) => void;
type TablesExport = (table: number, vectors: number, chunks: number) => void;
type CombineExport = (d: number, hiStart: number, hiIndex: number, hiWeight: number, count: number, s0: number, s1: number, out: number) => void;

/** `count` i32 values: the kernels' parameters are all addresses and counts, as are most of their locals. */
const i32s = (count: number): ValType[] => new Array<ValType>(count).fill(I32);

/**
 * sums(table, bytes, count, chunks, acc):  acc[b] += Σ_c T[c, bytes[c·count + b]]  for b < count,
 * with T the interleaved table (chunk c's 256 entries of 32 bytes at table + c·8192), the draw bytes stored
 * chunk-major, acc[b] the four lanes of draw b (32 bytes). The loop nest is draw blocks × chunk blocks ×
 * draws, so the four table slices of a chunk block are read from L1.
 */
function sumsFunction(): WasmFunction {
  const [TABLE, BYTES, COUNT, CHUNKS, ACC] = [0, 1, 2, 3, 4];
  const [B0, B_END, CB, TP, CP, B, BP, AP, IDX, S2, S3, V0, V1] = [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17];
  // Offsets of the BLOCK_CHUNKS (= 4) chunk rows of a draw byte: 0, count, 2·count, 3·count; 5 = log2 ENTRY_BYTES.
  const rowOf = [[], get(COUNT), get(S2), get(S3)];
  const body = [
    ...[...get(COUNT), ...get(COUNT), ...ADD, ...set(S2), ...get(S2), ...get(COUNT), ...ADD, ...set(S3)],
    ...[...i32(0), ...set(B0), ...BLOCK, ...LOOP, ...get(B0), ...get(COUNT), ...GE_U, ...BREAK_IF],
    // b_end = min(b0 + BLOCK_DRAWS, count)
    ...[...get(B0), ...i32(BLOCK_DRAWS), ...ADD, ...get(COUNT), ...get(B0), ...i32(BLOCK_DRAWS), ...ADD, ...get(COUNT), ...LT_U, ...SELECT, ...set(B_END)],
    ...[...i32(0), ...set(CB), ...get(TABLE), ...set(TP), ...get(BYTES), ...get(B0), ...ADD, ...set(CP)],
    ...[...BLOCK, ...LOOP, ...get(CB), ...get(CHUNKS), ...GE_U, ...BREAK_IF],
    ...[...get(B0), ...set(B), ...get(CP), ...set(BP), ...get(ACC), ...get(B0), ...i32(5), ...SHL, ...ADD, ...set(AP)],
    ...[...BLOCK, ...LOOP, ...get(B), ...get(B_END), ...GE_U, ...BREAK_IF],
    ...[...get(AP), ...vload(0), ...set(V0), ...get(AP), ...vload(16), ...set(V1)],
    ...Array.from({ length: BLOCK_CHUNKS }, (_, k) => [
      // idx = tp + (bytes[bp + k·count] << 5); entry (k, byte) sits at idx + k·SLICE_BYTES
      ...[...get(TP), ...get(BP), ...(rowOf[k] as number[]), ...(k === 0 ? [] : ADD), ...loadU8(), ...i32(5), ...SHL, ...ADD, ...set(IDX)],
      ...[...get(V0), ...get(IDX), ...vload(k * SLICE_BYTES), ...F64X2_ADD, ...set(V0)],
      ...[...get(V1), ...get(IDX), ...vload(k * SLICE_BYTES + 16), ...F64X2_ADD, ...set(V1)],
    ]).flat(),
    ...[...get(AP), ...get(V0), ...vstore(0), ...get(AP), ...get(V1), ...vstore(16)],
    ...[...get(B), ...i32(1), ...ADD, ...set(B), ...get(BP), ...i32(1), ...ADD, ...set(BP), ...get(AP), ...i32(ENTRY_BYTES), ...ADD, ...set(AP)],
    ...[...CONTINUE, ...END, ...END],
    ...[...get(CB), ...i32(BLOCK_CHUNKS), ...ADD, ...set(CB), ...get(TP), ...i32(BLOCK_CHUNKS * SLICE_BYTES), ...ADD, ...set(TP)],
    ...[...get(CP), ...get(COUNT), ...i32(BLOCK_CHUNKS), ...MUL, ...ADD, ...set(CP), ...CONTINUE, ...END, ...END],
    ...[...get(B0), ...i32(BLOCK_DRAWS), ...ADD, ...set(B0), ...CONTINUE, ...END, ...END],
  ];
  return { name: 'sums', params: i32s(ACC + 1), results: [], locals: [...i32s(V0 - B0), V128, V128], body };
}

/**
 * combine(d, hiStart, hiIndex, hiWeight, count, s0, s1, out): for each resample b,
 *   r = s0[b] + 2·s1[b] + 4·Σ_{k ∈ [hiStart[b], hiStart[b+1])} hiWeight[k]·d[hiIndex[k]]
 * on four lanes (d interleaved, 32 bytes per position; hiWeight as f64), lane v of r stored at
 * out + v·count·8 + b·8, so each lane's resample sums are one contiguous array.
 */
function combineFunction(): WasmFunction {
  const [D, HI_START, HI_INDEX, HI_WEIGHT, COUNT, S0, S1, OUT] = [0, 1, 2, 3, 4, 5, 6, 7];
  const [B, K, K_END, P, Q, LANE_BYTES, OB, H0, H1, W, R0, R1] = [8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19];
  const weighted = (h: number, offset: number): number[] => [...get(h), ...get(W), ...get(P), ...vload(offset), ...F64X2_MUL, ...F64X2_ADD, ...set(h)];
  // r = (s0 + 2·s1) + 4·h, the association of the scalar expression s0 + 2 * s1 + 4 * h.
  const result = (h: number, r: number, offset: number): number[] => [
    ...[...get(S0), ...get(Q), ...ADD, ...vload(offset)],
    ...[...f64(2), ...F64X2_SPLAT, ...get(S1), ...get(Q), ...ADD, ...vload(offset), ...F64X2_MUL, ...F64X2_ADD],
    ...[...f64(4), ...F64X2_SPLAT, ...get(h), ...F64X2_MUL, ...F64X2_ADD, ...set(r)],
  ];
  const store = (r: number, l: number, laneIndex: number): number[] => [
    ...get(OB),
    ...(laneIndex === 0 ? [] : [...get(LANE_BYTES), ...i32(laneIndex), ...MUL, ...ADD]),
    ...get(r),
    ...f64x2Extract(l),
    ...storeF64(0),
  ];
  const body = [
    ...[...get(COUNT), ...i32(3), ...SHL, ...set(LANE_BYTES), ...i32(0), ...set(B)],
    ...[...BLOCK, ...LOOP, ...get(B), ...get(COUNT), ...GE_U, ...BREAK_IF],
    ...[...VZERO, ...set(H0), ...VZERO, ...set(H1)],
    ...[...get(HI_START), ...get(B), ...i32(2), ...SHL, ...ADD, ...set(P), ...get(P), ...loadI32(), ...set(K), ...get(P), ...loadI32(4), ...set(K_END)],
    ...[...BLOCK, ...LOOP, ...get(K), ...get(K_END), ...GE_U, ...BREAK_IF],
    ...[...get(HI_WEIGHT), ...get(K), ...i32(3), ...SHL, ...ADD, ...loadF64(0), ...F64X2_SPLAT, ...set(W)],
    ...[...get(D), ...get(HI_INDEX), ...get(K), ...i32(2), ...SHL, ...ADD, ...loadI32(), ...i32(5), ...SHL, ...ADD, ...set(P)],
    ...[...weighted(H0, 0), ...weighted(H1, 16)],
    ...[...get(K), ...i32(1), ...ADD, ...set(K), ...CONTINUE, ...END, ...END],
    ...[...get(B), ...i32(5), ...SHL, ...set(Q), ...result(H0, R0, 0), ...result(H1, R1, 16)],
    ...[...get(OUT), ...get(B), ...i32(3), ...SHL, ...ADD, ...set(OB)],
    ...[...store(R0, 0, 0), ...store(R0, 1, 1), ...store(R1, 0, 2), ...store(R1, 1, 3)],
    ...[...get(B), ...i32(1), ...ADD, ...set(B), ...CONTINUE, ...END, ...END],
  ];
  return { name: 'combine', params: i32s(OUT + 1), results: [], locals: [...i32s(H0 - B), ...new Array<ValType>(R1 - H0 + 1).fill(V128)], body };
}

/**
 * tables(table, vectors, chunks): the chunk tables of four interleaved vectors (32 bytes per position, zero
 * past n), T[c, 0] = 0 and T[c, m] = T[c, m without its lowest set bit k] + d[8c + k], as
 * {@link buildChunkTable} computes them, grouped by k from the highest down so each right-hand entry (lowest
 * set bit above k, or 0) is already written.
 */
function tablesFunction(): WasmFunction {
  const [TABLE, VECTORS, CHUNKS] = [0, 1, 2];
  const [C, BASE, VP, Q, END_, D0, D1] = [3, 4, 5, 6, 7, 8, 9];
  const body = [
    ...[...i32(0), ...set(C), ...get(TABLE), ...set(BASE), ...get(VECTORS), ...set(VP)],
    ...[...BLOCK, ...LOOP, ...get(C), ...get(CHUNKS), ...GE_U, ...BREAK_IF],
    ...[...get(BASE), ...VZERO, ...vstore(0), ...get(BASE), ...VZERO, ...vstore(16), ...get(BASE), ...i32(SLICE_BYTES), ...ADD, ...set(END_)],
    ...[7, 6, 5, 4, 3, 2, 1, 0].flatMap((k) => {
      const step = ENTRY_BYTES << k;
      return [
        ...[...get(VP), ...vload(k * ENTRY_BYTES), ...set(D0), ...get(VP), ...vload(k * ENTRY_BYTES + 16), ...set(D1), ...get(BASE), ...set(Q)],
        // q runs over the entries m ^ bit (bit k clear), writing entry m = q + step.
        ...[...BLOCK, ...LOOP, ...get(Q), ...get(END_), ...GE_U, ...BREAK_IF],
        ...[...get(Q), ...get(Q), ...vload(0), ...get(D0), ...F64X2_ADD, ...vstore(step)],
        ...[...get(Q), ...get(Q), ...vload(16), ...get(D1), ...F64X2_ADD, ...vstore(step + 16)],
        ...[...get(Q), ...i32(2 * step), ...ADD, ...set(Q), ...CONTINUE, ...END, ...END],
      ];
    }),
    ...[...get(C), ...i32(1), ...ADD, ...set(C), ...get(BASE), ...i32(SLICE_BYTES), ...ADD, ...set(BASE)],
    ...[...get(VP), ...i32(8 * ENTRY_BYTES), ...ADD, ...set(VP), ...CONTINUE, ...END, ...END],
  ];
  return { name: 'tables', params: i32s(CHUNKS + 1), results: [], locals: [...i32s(D0 - C), V128, V128], body };
}

/**
 * The kernels as one WebAssembly module (core spec 2.0 with 128-bit SIMD), assembled by harness/wasm/assemble
 * from their opcodes; they share the memory each {@link SharedDrawSums} instance imports.
 * Each lane of a SIMD operation is one IEEE double operation (f64x2.add and f64x2.mul round each lane as a
 * scalar + and * do; WebAssembly has no fused multiply-add), and every lane receives its terms in the order of
 * the scalar definitions: Σ_c T[c, ·] in chunk order from +0 ({@link buildChunkTable}), then
 * S0 + 2·S1 + 4·Σ_k w_k d[x_k] (see {@link ResampleDraws}). So every sum is bit for bit the scalar one. The
 * zero chunks of the padding add +0, which leaves any sum other than −0 unchanged, and a sum that starts at +0
 * is never −0.
 */
function kernelFunctions(): WasmFunction[] {
  return [tablesFunction(), sumsFunction(), combineFunction()];
}

/** Compiled at the first {@link SharedDrawSums}, then instantiated over each one's memory. */
let kernel: Kernel | undefined;

/** Where the resample data lives in a kernel's memory, for {@link SharedDrawSums.resampleSums}. */
interface ResampleRegions {
  readonly hiStart: number;
  readonly hiIndex: number;
  readonly hiWeight: number;
  readonly lanes: readonly Float64Array[];
}

/**
 * Sums of chunk-table look-ups over shared draws for {@link LANES} comparisons at a time, on the WebAssembly
 * kernels above: the draws of each set are copied once, chunk-major, into the kernels' own memory; then, for
 * each block of up to four vectors of length n, {@link setVectors} builds their tables in place and
 * {@link sums} returns Σ_c T_v[c, byte of draw b in chunk c] for every draw b and lane v, the sum that
 * {@link buildChunkTable} and a left-to-right pass over the chunks give, bit for bit; for resamples,
 * {@link resampleSums} returns Σ_i c_{b,i} d_i as {@link ResampleDraws} defines it.
 */
export class SharedDrawSums {
  private readonly tablesKernel: TablesExport;
  private readonly sumsKernel: SumsExport;
  private readonly combineKernel: CombineExport;
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
    kernel ??= new Kernel(kernelFunctions());
    const { exports, buffer } = kernel.instantiate(total);
    this.tablesKernel = exports.tables as TablesExport;
    this.sumsKernel = exports.sums as SumsExport;
    this.combineKernel = exports.combine as CombineExport;
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
    this.tablesKernel(0, vectors.byteOffset, this.chunks);
  }

  /** The sums of draw set `set` for the current vectors, lane v of draw b at [b·LANES + v]; overwritten by the next call for that set. */
  sums(set: number): Float64Array {
    const acc = this.accs[set] as Float64Array;
    acc.fill(0);
    this.sumsKernel(0, this.setOffsets[set] as number, this.count, this.paddedChunks, acc.byteOffset);
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
    this.combineKernel(
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
