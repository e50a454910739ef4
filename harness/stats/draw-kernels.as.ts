/**
 * The shared-draw kernels in AssemblyScript, compiled by `npm run build` to dist/harness/stats/draw-kernels.wasm
 * (asconfig.json: 128-bit SIMD, memory imported from `env.memory`); draw-kernels.ts holds the same three
 * functions in TypeScript and loads this module. Every address is a byte offset into that memory.
 *
 * Bit for bit the scalar definitions (draws.ts, ADR 0004): each f64x2 lane is one IEEE addition or
 * multiplication, rounded as the scalar operation (WebAssembly has no fused multiply-add and never
 * reassociates), and each lane receives its terms in the order of the scalar sums.
 */

// The layout constants are draw-kernels.ts's too (the AssemblyScript build reads this file alone); the
// tests that compare the two kernel sets fail on any difference.

/** An interleaved table entry: the subset sums of the four comparisons of a pass, two f64x2 vectors. */
const ENTRY_BYTES: usize = 32;
/** One chunk's 256 interleaved entries. */
const SLICE_BYTES: usize = 256 * ENTRY_BYTES;
/** Chunks read together: 4 × 8 KB of table stays in a 32 KB L1 cache while a block of draws streams past. */
const BLOCK_CHUNKS: u32 = 4;
/** Draws per block: their running sums (2,048 × 32 bytes) stay in L2 while every chunk block adds to them. */
const BLOCK_DRAWS: u32 = 2048;

/**
 * The chunk tables of four interleaved vectors (32 bytes per position, zero past n): T[c, 0] = 0 and
 * T[c, m] = T[c, m without its lowest set bit k] + d[8c + k], as buildChunkTable computes them. Grouped by k
 * from the highest down, so each right-hand entry (lowest set bit above k, or 0) is already written.
 */
export function tables(table: usize, vectors: usize, chunks: u32): void {
  const zero = f64x2.splat(0);
  let base = table;
  let vp = vectors;
  for (let c: u32 = 0; c < chunks; c++) {
    v128.store(base, zero);
    v128.store(base, zero, 16);
    const end = base + SLICE_BYTES;
    for (let k: i32 = 7; k >= 0; k--) {
      const step = ENTRY_BYTES << (<usize>k);
      const dk = vp + <usize>k * ENTRY_BYTES;
      const d0 = v128.load(dk);
      const d1 = v128.load(dk, 16);
      // q runs over the entries with bits 0..k clear; entry q + step has lowest set bit k.
      for (let q = base; q < end; q += 2 * step) {
        v128.store(q + step, f64x2.add(v128.load(q), d0));
        v128.store(q + step, f64x2.add(v128.load(q, 16), d1), 16);
      }
    }
    base += SLICE_BYTES;
    vp += 8 * ENTRY_BYTES;
  }
}

/**
 * acc[b] += Σ_c T[c, bytes[c·count + b]] for every draw b < count, with T the interleaved tables (chunk c's
 * entries at table + c·SLICE_BYTES), the draw bytes chunk-major, acc[b] draw b's four lanes (32 bytes) and
 * `chunks` a multiple of BLOCK_CHUNKS. The loop nest is draw blocks × chunk blocks × draws, so the four table
 * slices of a chunk block are read from L1; each lane still adds its chunks in order.
 */
export function sums(table: usize, bytes: usize, count: u32, chunks: u32, acc: usize): void {
  // Offsets of a draw's bytes in the four chunk rows of a block.
  const row1 = <usize>count;
  const row2 = row1 + row1;
  const row3 = row2 + row1;
  for (let b0: u32 = 0; b0 < count; b0 += BLOCK_DRAWS) {
    const bEnd = min(b0 + BLOCK_DRAWS, count);
    let tp = table;
    let cp = bytes + b0;
    for (let cb: u32 = 0; cb < chunks; cb += BLOCK_CHUNKS) {
      let bp = cp;
      let ap = acc + ((<usize>b0) << 5);
      const apEnd = acc + ((<usize>bEnd) << 5);
      // A block holds at least one draw; as a do-while over its running sums the loop costs one branch per
      // draw, which measured 8% faster than a for loop over b (one compare at the top, one jump at the end).
      do {
        let v0 = v128.load(ap);
        let v1 = v128.load(ap, 16);
        // Entry (k, byte) of the block's chunk k sits at tp + k·SLICE_BYTES + byte·ENTRY_BYTES.
        const e0 = tp + ((<usize>load<u8>(bp)) << 5);
        v0 = f64x2.add(v0, v128.load(e0));
        v1 = f64x2.add(v1, v128.load(e0, 16));
        const e1 = tp + ((<usize>load<u8>(bp + row1)) << 5);
        v0 = f64x2.add(v0, v128.load(e1, SLICE_BYTES));
        v1 = f64x2.add(v1, v128.load(e1, SLICE_BYTES + 16));
        const e2 = tp + ((<usize>load<u8>(bp + row2)) << 5);
        v0 = f64x2.add(v0, v128.load(e2, 2 * SLICE_BYTES));
        v1 = f64x2.add(v1, v128.load(e2, 2 * SLICE_BYTES + 16));
        const e3 = tp + ((<usize>load<u8>(bp + row3)) << 5);
        v0 = f64x2.add(v0, v128.load(e3, 3 * SLICE_BYTES));
        v1 = f64x2.add(v1, v128.load(e3, 3 * SLICE_BYTES + 16));
        v128.store(ap, v0);
        v128.store(ap, v1, 16);
        bp++;
        ap += ENTRY_BYTES;
      } while (ap < apEnd);
      tp += <usize>BLOCK_CHUNKS * SLICE_BYTES;
      cp += <usize>BLOCK_CHUNKS * row1;
    }
  }
}

/**
 * For each resample b, on four lanes (d interleaved, 32 bytes per position; hiWeight as f64):
 *   r = (s0[b] + 2·s1[b]) + 4·h,  h = Σ_{k ∈ [hiStart[b], hiStart[b+1])} hiWeight[k]·d[hiIndex[k]] from +0,
 * the association of the scalar s0 + 2 * s1 + 4 * h; lane v of r is stored at out + v·count·8 + b·8, so each
 * lane's resample sums are one contiguous array.
 */
export function combine(d: usize, hiStart: usize, hiIndex: usize, hiWeight: usize, count: u32, s0: usize, s1: usize, out: usize): void {
  const laneBytes = (<usize>count) << 3;
  const two = f64x2.splat(2);
  const four = f64x2.splat(4);
  for (let b: u32 = 0; b < count; b++) {
    let h0 = f64x2.splat(0);
    let h1 = f64x2.splat(0);
    const at = hiStart + ((<usize>b) << 2);
    const kEnd = load<u32>(at, 4);
    for (let k = load<u32>(at); k < kEnd; k++) {
      const w = f64x2.splat(load<f64>(hiWeight + ((<usize>k) << 3)));
      const p = d + ((<usize>load<u32>(hiIndex + ((<usize>k) << 2))) << 5);
      h0 = f64x2.add(h0, f64x2.mul(w, v128.load(p)));
      h1 = f64x2.add(h1, f64x2.mul(w, v128.load(p, 16)));
    }
    const q = (<usize>b) << 5;
    const r0 = f64x2.add(f64x2.add(v128.load(s0 + q), f64x2.mul(two, v128.load(s1 + q))), f64x2.mul(four, h0));
    const r1 = f64x2.add(f64x2.add(v128.load(s0 + q, 16), f64x2.mul(two, v128.load(s1 + q, 16))), f64x2.mul(four, h1));
    const ob = out + ((<usize>b) << 3);
    store<f64>(ob, f64x2.extract_lane(r0, 0));
    store<f64>(ob + laneBytes, f64x2.extract_lane(r0, 1));
    store<f64>(ob + 2 * laneBytes, f64x2.extract_lane(r1, 0));
    store<f64>(ob + 3 * laneBytes, f64x2.extract_lane(r1, 1));
  }
}
