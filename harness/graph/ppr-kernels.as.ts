/**
 * The PPR power step in AssemblyScript, compiled by `npm run build` to dist/harness/graph/ppr-kernels.wasm
 * (asconfig.json: 128-bit SIMD, memory imported from `env.memory`); ppr-kernels.ts holds the same function in
 * TypeScript and loads this module. Every address is a byte offset into that memory.
 */

/** Rows per slice of the SELL-8 layout (ppr.ts): four f64x2 accumulators of two rows each. */
const LANES: usize = 8;

/**
 * One power step over every row, `out_j = d (P x)_j + toSeeds s_j + toAll spread_j` (`spread` is 1 on real
 * rows for policy `uniform`; with `toAll = 0` any vector will do), returning the L1 change `Σ_j |out_j - x_j|`.
 * Slice c's entries are `cols/vals[slicePtr[c] .. slicePtr[c + 1])`, lane l at offsets ≡ l (mod 8), `cols`
 * holding byte offsets into x.
 *
 * Bit for bit the scalar loop: each lane is one IEEE multiply then one add, row entries in CSR order from +0,
 * then `((d a) + (toSeeds s)) + (toAll spread)` (WebAssembly has no fused multiply-add and does not
 * reassociate). The slice's L1 change is summed over its rows in order, then added to the total: the
 * association of the scalar `delta += |v_0 - x_0| + … + |v_7 - x_7|`, so the iteration stops at the same step.
 */
export function step(
  slices: u32,
  slicePtr: usize,
  cols: usize,
  vals: usize,
  x: usize,
  out: usize,
  s: usize,
  spread: usize,
  toSeeds: f64,
  toAll: f64,
  d: f64,
): f64 {
  const vd = f64x2.splat(d);
  const vts = f64x2.splat(toSeeds);
  const vta = f64x2.splat(toAll);
  let kc = cols;
  let kv = vals;
  let r: usize = 0;
  let delta: f64 = 0;
  for (let c: u32 = 0; c < slices; c++) {
    const endC = cols + ((<usize>load<i32>(slicePtr + 4 * <usize>c, 4)) << 2);
    let a0 = f64x2.splat(0);
    let a1 = f64x2.splat(0);
    let a2 = f64x2.splat(0);
    let a3 = f64x2.splat(0);
    // Per column position: the eight weights are four loads; the eight x values are gathered two per vector,
    // lane 0 by v128.load64_zero, lane 1 by v128.load64_lane (`cols` holds byte offsets into x).
    for (; kc < endC; kc += 4 * LANES, kv += 8 * LANES) {
      a0 = f64x2.add(a0, f64x2.mul(v128.load(kv), v128.load64_lane(x + load<i32>(kc, 4), v128.load64_zero(x + load<i32>(kc)), 1)));
      a1 = f64x2.add(a1, f64x2.mul(v128.load(kv, 16), v128.load64_lane(x + load<i32>(kc, 12), v128.load64_zero(x + load<i32>(kc, 8)), 1)));
      a2 = f64x2.add(a2, f64x2.mul(v128.load(kv, 32), v128.load64_lane(x + load<i32>(kc, 20), v128.load64_zero(x + load<i32>(kc, 16)), 1)));
      a3 = f64x2.add(a3, f64x2.mul(v128.load(kv, 48), v128.load64_lane(x + load<i32>(kc, 28), v128.load64_zero(x + load<i32>(kc, 24)), 1)));
    }
    const e0 = row(a0, vd, vts, vta, x + r, out + r, s + r, spread + r);
    const e1 = row(a1, vd, vts, vta, x + r + 16, out + r + 16, s + r + 16, spread + r + 16);
    const e2 = row(a2, vd, vts, vta, x + r + 32, out + r + 32, s + r + 32, spread + r + 32);
    const e3 = row(a3, vd, vts, vta, x + r + 48, out + r + 48, s + r + 48, spread + r + 48);
    const slice =
      f64x2.extract_lane(e0, 0) +
      f64x2.extract_lane(e0, 1) +
      f64x2.extract_lane(e1, 0) +
      f64x2.extract_lane(e1, 1) +
      f64x2.extract_lane(e2, 0) +
      f64x2.extract_lane(e2, 1) +
      f64x2.extract_lane(e3, 0) +
      f64x2.extract_lane(e3, 1);
    delta = delta + slice;
    r += 8 * LANES;
  }
  return delta;
}

/** Two rows' new values `v = ((d a) + (toSeeds s)) + (toAll spread)`, stored at `out`; returns |v - x|. */
function row(a: v128, vd: v128, vts: v128, vta: v128, x: usize, out: usize, s: usize, spread: usize): v128 {
  const v = f64x2.add(f64x2.add(f64x2.mul(vd, a), f64x2.mul(vts, v128.load(s))), f64x2.mul(vta, v128.load(spread)));
  v128.store(out, v);
  return f64x2.abs(f64x2.sub(v, v128.load(x)));
}
