/**
 * The PPR power step (personalizedPageRank in ppr.ts) as a kernel module: the AssemblyScript source
 * ppr-kernels.as.ts, with 128-bit SIMD, and the same function in TypeScript below, which does the same
 * operations in the same order and so gives the same bits (harness/util/kernel-set.ts picks one).
 */
import type { KernelModule } from '../util/kernel-set.js';

/** Rows per slice of the SELL-8 layout; the SIMD step holds a slice's rows in four f64x2 accumulators. */
export const LANES = 8;

/**
 * step(slices, slicePtr, cols, vals, x, out, s, spread, toSeeds, toAll, d): one power step over every row,
 * `out_j = d (P x)_j + toSeeds s_j + toAll spread_j` (`spread` is 1 on real rows for policy `uniform`; with
 * `toAll = 0` any vector will do), returning the L1 change `Σ_j |out_j - x_j|`. Addresses are byte offsets;
 * slice c's entries are `cols/vals[slicePtr[c] .. slicePtr[c + 1])`, lane l at offsets ≡ l (mod LANES), `cols`
 * holding byte offsets into x.
 */
export type StepKernel = (
  slices: number,
  slicePtr: number,
  cols: number,
  vals: number,
  x: number,
  out: number,
  s: number,
  spread: number,
  toSeeds: number,
  toAll: number,
  d: number,
) => number;

export interface PprKernels {
  readonly step: StepKernel;
}

/**
 * The step in TypeScript over `memory`: a slice's eight row sums in eight variables, each row's entries
 * multiplied and added in CSR order from +0, then `((d a) + (toSeeds s)) + (toAll spread)`; the slice's
 * |change| summed over its rows in order, then added to the total, as the SIMD step associates them.
 */
function jsPprKernels(memory: ArrayBuffer): PprKernels {
  const step: StepKernel = (slices, slicePtr, cols, vals, x, out, s, spread, toSeeds, toAll, d) => {
    const ptr = new Int32Array(memory, slicePtr, slices + 1);
    const entries = ptr[slices] as number;
    const [col, val] = [new Int32Array(memory, cols, entries), new Float64Array(memory, vals, entries)];
    const vector = (at: number): Float64Array => new Float64Array(memory, at, slices * LANES);
    const [xv, ov, sv, pv] = [vector(x), vector(out), vector(s), vector(spread)];
    const term = (k: number): number => (val[k] as number) * (xv[(col[k] as number) >> 3] as number);
    /** Row r's new value, stored; returns its |change|. */
    const row = (r: number, a: number): number => {
      const v = d * a + toSeeds * (sv[r] as number) + toAll * (pv[r] as number);
      ov[r] = v;
      return Math.abs(v - (xv[r] as number));
    };
    let delta = 0;
    for (let c = 0; c < slices; c++) {
      let a0 = 0;
      let a1 = 0;
      let a2 = 0;
      let a3 = 0;
      let a4 = 0;
      let a5 = 0;
      let a6 = 0;
      let a7 = 0;
      for (let k = ptr[c] as number; k < (ptr[c + 1] as number); k += LANES) {
        a0 += term(k);
        a1 += term(k + 1);
        a2 += term(k + 2);
        a3 += term(k + 3);
        a4 += term(k + 4);
        a5 += term(k + 5);
        a6 += term(k + 6);
        a7 += term(k + 7);
      }
      const r = c * LANES;
      delta += row(r, a0) + row(r + 1, a1) + row(r + 2, a2) + row(r + 3, a3) + row(r + 4, a4) + row(r + 5, a5) + row(r + 6, a6) + row(r + 7, a7);
    }
    return delta;
  };
  return { step };
}

export const PPR_KERNELS: KernelModule<PprKernels> = { source: 'harness/graph/ppr-kernels.as.ts', js: jsPprKernels };
