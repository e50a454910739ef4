/**
 * Shared random draws and the chunk-table trick that makes 1,200 tests × 10,000 draws cheap.
 *
 * Both resampling tests reduce to sums of a subset (or multiset) of one difference vector d. Split the n
 * positions into chunks of 8; for each chunk precompute the 256 partial sums of d over every subset of its
 * positions. A draw encoded as one byte per chunk then costs ⌈n/8⌉ table look-ups instead of n
 * multiply-adds, and the byte-encoded draws are generated once and shared by every vector of the same n.
 * Draws depend only on (seed, n, count), so a vector gets the same result alone or in a batch.
 */
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

/** Σ_c T[(c << 8) | bytes[offset + c]]: the subset sum a byte-encoded draw selects. */
export function lookupSum(table: Float64Array, bytes: Uint8Array, offset: number, chunks: number): number {
  let s = 0;
  for (let c = 0; c < chunks; c++) s += table[(c << 8) | (bytes[offset + c] as number)] as number;
  return s;
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

/** Σ_i c_{b,i} d_i for every resample b, written into `out` (length draws.count). */
export function resampleSums(draws: ResampleDraws, d: Float64Array, table: Float64Array, out: Float64Array): void {
  const { count, chunks, plane0, plane1, hiStart, hiIndex, hiWeight } = draws;
  for (let b = 0; b < count; b++) {
    const off = b * chunks;
    let s0 = 0;
    let s1 = 0;
    for (let c = 0; c < chunks; c++) {
      const base = c << 8;
      s0 += table[base | (plane0[off + c] as number)] as number;
      s1 += table[base | (plane1[off + c] as number)] as number;
    }
    let hi = 0;
    const end = hiStart[b + 1] as number;
    for (let k = hiStart[b] as number; k < end; k++) hi += (hiWeight[k] as number) * (d[hiIndex[k] as number] as number);
    out[b] = s0 + 2 * s1 + 4 * hi;
  }
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
 * Vectors the blocked kernels handle together. Their chunk tables are interleaved, so one draw byte selects
 * four adjacent entries (one or two cache lines): the draw bytes are read and the index computed once for
 * four vectors instead of once each, and the four running sums are independent chains the CPU overlaps.
 * Each lane still adds its terms in the order of {@link lookupSum} and {@link resampleSums}, so every sum is
 * bit for bit the one those compute.
 */
export const LANES = 4;

/**
 * T[(((c << 8) | m) << 2) + v] = Σ_{bit k set in m} block[v][8c + k], the chunk table of
 * {@link buildChunkTable} for each vector v of `block` (at most {@link LANES}, all of one length; missing lanes
 * are left as they are and must be ignored). `scratch` holds one plain table.
 */
export function buildChunkTables(block: readonly Float64Array[], table: Float64Array, scratch: Float64Array): void {
  const entries = chunkCount((block[0] as Float64Array).length) << 8;
  block.forEach((d, v) => {
    buildChunkTable(d, scratch);
    for (let e = 0; e < entries; e++) table[(e << 2) + v] = scratch[e] as number;
  });
}

/** out[v][b] = Σ_c T[(c, bytes[b·chunks + c]), lane v]: {@link lookupSum} of every draw b for four lanes at once. */
export function blockLookupSums(table: Float64Array, bytes: Uint8Array, count: number, chunks: number, out: readonly Float64Array[]): void {
  const [o0, o1, o2, o3] = out as [Float64Array, Float64Array, Float64Array, Float64Array];
  for (let b = 0; b < count; b++) {
    const off = b * chunks;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    for (let c = 0; c < chunks; c++) {
      const i = ((c << 8) | (bytes[off + c] as number)) << 2;
      s0 += table[i] as number;
      s1 += table[i + 1] as number;
      s2 += table[i + 2] as number;
      s3 += table[i + 3] as number;
    }
    o0[b] = s0;
    o1[b] = s1;
    o2[b] = s2;
    o3[b] = s3;
  }
}

/**
 * {@link resampleSums} for the four lanes of an interleaved table at once: out[v][b] = Σ_i c_{b,i} block[v][i].
 * Lanes beyond block.length are computed from lane 0's values and are not meaningful.
 */
export function blockResampleSums(draws: ResampleDraws, block: readonly Float64Array[], table: Float64Array, out: readonly Float64Array[]): void {
  const { count, chunks, plane0, plane1, hiStart, hiIndex, hiWeight } = draws;
  const d0 = block[0] as Float64Array;
  const [d1, d2, d3] = [block[1] ?? d0, block[2] ?? d0, block[3] ?? d0];
  const [o0, o1, o2, o3] = out as [Float64Array, Float64Array, Float64Array, Float64Array];
  for (let b = 0; b < count; b++) {
    const off = b * chunks;
    let a0 = 0;
    let a1 = 0;
    let a2 = 0;
    let a3 = 0;
    let t0 = 0;
    let t1 = 0;
    let t2 = 0;
    let t3 = 0;
    for (let c = 0; c < chunks; c++) {
      const base = c << 8;
      const i = (base | (plane0[off + c] as number)) << 2;
      const j = (base | (plane1[off + c] as number)) << 2;
      a0 += table[i] as number;
      a1 += table[i + 1] as number;
      a2 += table[i + 2] as number;
      a3 += table[i + 3] as number;
      t0 += table[j] as number;
      t1 += table[j + 1] as number;
      t2 += table[j + 2] as number;
      t3 += table[j + 3] as number;
    }
    let h0 = 0;
    let h1 = 0;
    let h2 = 0;
    let h3 = 0;
    const end = hiStart[b + 1] as number;
    for (let k = hiStart[b] as number; k < end; k++) {
      const w = hiWeight[k] as number;
      const x = hiIndex[k] as number;
      h0 += w * (d0[x] as number);
      h1 += w * (d1[x] as number);
      h2 += w * (d2[x] as number);
      h3 += w * (d3[x] as number);
    }
    o0[b] = a0 + 2 * t0 + 4 * h0;
    o1[b] = a1 + 2 * t1 + 4 * h1;
    o2[b] = a2 + 2 * t2 + 4 * h2;
    o3[b] = a3 + 2 * t3 + 4 * h3;
  }
}
