/**
 * The shared-draw kernels ({@link SharedDrawSums} in draws.ts) as a kernel module: the AssemblyScript source
 * draw-kernels.as.ts, with 128-bit SIMD, and the same three functions in TypeScript below, which add the same
 * terms in the same order and so give the same bits (harness/util/kernel-set.ts picks one).
 */
import type { KernelModule } from '../util/kernel-set.js';

/**
 * Comparisons the kernels handle in one pass over the draws. Their chunk tables are interleaved, so entry
 * (c, m) holds the four subset sums side by side (32 bytes, two 128-bit vectors): one draw byte is read and
 * one index computed for four comparisons, and the four lanes are added by two SIMD additions.
 */
export const LANES = 4;
export const ENTRY_BYTES = LANES * 8;
/** One chunk's 256 interleaved entries. */
export const SLICE_BYTES = 256 * ENTRY_BYTES;
/** The SIMD sums read the tables four chunks at a time: tables are padded with zero chunks to a multiple. */
export const BLOCK_CHUNKS = 4;

/** tables(table, vectors, chunks): the interleaved chunk tables of four vectors (32 bytes per position, zero past n). */
export type TablesKernel = (table: number, vectors: number, chunks: number) => void;
/** sums(table, bytes, count, chunks, acc): acc[b] += Σ_c T[c, bytes[c·count + b]], four lanes per draw b. */
export type SumsKernel = (table: number, bytes: number, count: number, chunks: number, acc: number) => void;
/** combine(d, hiStart, hiIndex, hiWeight, count, s0, s1, out): resample sums s0 + 2·s1 + 4·Σ_hi, one array per lane. */
export type CombineKernel = (d: number, hiStart: number, hiIndex: number, hiWeight: number, count: number, s0: number, s1: number, out: number) => void;

export interface DrawKernels {
  readonly tables: TablesKernel;
  readonly sums: SumsKernel;
  readonly combine: CombineKernel;
}

/** The kernels in TypeScript over `memory`; every address is a byte offset, each f64 array 8-byte aligned. */
function jsDrawKernels(memory: ArrayBuffer): DrawKernels {
  const f64 = new Float64Array(memory);
  const u8 = new Uint8Array(memory);
  const u32 = new Uint32Array(memory);
  const h = new Float64Array(LANES);

  /** T[c, 0] = 0, T[c, m] = T[c, m without its lowest set bit k] + d[8c + k], grouped by k from the highest down. */
  const tables: TablesKernel = (table, vectors, chunks) => {
    for (let c = 0; c < chunks; c++) {
      const base = (table >>> 3) + c * 256 * LANES;
      const vp = (vectors >>> 3) + c * 8 * LANES;
      for (let v = 0; v < LANES; v++) f64[base + v] = 0;
      for (let k = 7; k >= 0; k--) {
        const step = LANES << k;
        for (let q = base; q < base + 256 * LANES; q += 2 * step)
          for (let v = 0; v < LANES; v++) f64[q + step + v] = (f64[q + v] as number) + (f64[vp + k * LANES + v] as number);
      }
    }
  };

  /** Each lane adds its chunks' entries in chunk order, as the SIMD kernel's blocked loop nest does. */
  const sums: SumsKernel = (table, bytes, count, chunks, acc) => {
    const t = table >>> 3;
    for (let b = 0; b < count; b++) {
      const a = (acc >>> 3) + b * LANES;
      let s0 = f64[a] as number;
      let s1 = f64[a + 1] as number;
      let s2 = f64[a + 2] as number;
      let s3 = f64[a + 3] as number;
      for (let c = 0; c < chunks; c++) {
        const e = t + (((c << 8) | (u8[bytes + c * count + b] as number)) << 2);
        s0 += f64[e] as number;
        s1 += f64[e + 1] as number;
        s2 += f64[e + 2] as number;
        s3 += f64[e + 3] as number;
      }
      f64[a] = s0;
      f64[a + 1] = s1;
      f64[a + 2] = s2;
      f64[a + 3] = s3;
    }
  };

  /** r = (s0 + 2·s1) + 4·h with h = Σ_k w_k·d[x_k] from +0, lane v of resample b at out + v·count·8 + b·8. */
  const combine: CombineKernel = (d, hiStart, hiIndex, hiWeight, count, s0, s1, out) => {
    for (let b = 0; b < count; b++) {
      h.fill(0);
      for (let k = u32[(hiStart >>> 2) + b] as number; k < (u32[(hiStart >>> 2) + b + 1] as number); k++) {
        const w = f64[(hiWeight >>> 3) + k] as number;
        const p = (d >>> 3) + (u32[(hiIndex >>> 2) + k] as number) * LANES;
        for (let v = 0; v < LANES; v++) h[v] = (h[v] as number) + w * (f64[p + v] as number);
      }
      for (let v = 0; v < LANES; v++) {
        const q = b * LANES + v;
        const r = (f64[(s0 >>> 3) + q] as number) + 2 * (f64[(s1 >>> 3) + q] as number) + 4 * (h[v] as number);
        f64[(out >>> 3) + v * count + b] = r;
      }
    }
  };
  return { tables, sums, combine };
}

export const DRAW_KERNELS: KernelModule<DrawKernels> = { source: 'harness/stats/draw-kernels.as.ts', js: jsDrawKernels };
