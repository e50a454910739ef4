/**
 * Personalized PageRank kernels over sparse matrices in typed arrays: pure functions, no allocation inside the
 * iteration. The graph arms (arms/graph) and the `graph-ppr` node kind build on them; docs/adr/0019-graph-arms.md.
 *
 * Gutiérrez et al., "HippoRAG: Neurobiologically Inspired Long-Term Memory for Large Language Models" (NeurIPS
 * 2024) and "From RAG to Memory: Non-Parametric Continual Learning for Large Language Models" (HippoRAG 2, ICML
 * 2025) rank passages by the PPR mass of a phrase/passage graph seeded by the query's concepts, damping 0.5.
 */
import { HarnessError } from '../errors.js';
import {
  ADD,
  BLOCK,
  BREAK_IF,
  CONTINUE,
  END,
  F64,
  F64_ADD,
  F64X2_ABS,
  F64X2_ADD,
  F64X2_MUL,
  F64X2_SPLAT,
  F64X2_SUB,
  f64,
  f64x2Extract,
  GE_U,
  get,
  I32,
  i32,
  Kernel,
  LOOP,
  loadI32,
  MAX_MEMORY_BYTES,
  SHL,
  set,
  tee,
  V128,
  type ValType,
  VZERO,
  vload,
  vload64Lane,
  vload64Zero,
  vstore,
} from '../wasm/assemble.js';

/** A sparse matrix in compressed sparse row form: row r's entries are `indices/values[indptr[r] .. indptr[r+1])`. */
export interface Csr {
  readonly rows: number;
  readonly cols: number;
  readonly indptr: Int32Array;
  readonly indices: Int32Array;
  readonly values: Float64Array;
}

/**
 * A weighted directed edge list as a CSR adjacency matrix `A[src][dst] = weight`, rows sorted by column, duplicate
 * edges summed. A counting sort by row then by column: O(n + m). Weights must be finite and > 0 (a 0 weight is
 * no edge and would make an out-degree 0 while the row looks non-empty).
 */
export function buildCsr(n: number, src: Int32Array, dst: Int32Array, weight: Float64Array): Csr {
  const m = src.length;
  if (dst.length !== m || weight.length !== m) throw new RangeError('buildCsr: src, dst and weight differ in length');
  for (let e = 0; e < m; e++) {
    const s = src[e] as number;
    const d = dst[e] as number;
    const w = weight[e] as number;
    if (!(s >= 0 && s < n && d >= 0 && d < n)) throw new RangeError(`buildCsr: edge ${e} (${s} -> ${d}) outside 0..${n - 1}`);
    if (!(w > 0 && Number.isFinite(w))) throw new RangeError(`buildCsr: edge ${e} has weight ${w}; weights must be finite and > 0`);
  }
  // Sort by column first (stable counting sort), then by row: rows come out with columns ascending.
  const byCol = countingOrder(n, dst, null);
  const order = countingOrder(n, src, byCol);
  const indptr = new Int32Array(n + 1);
  for (let e = 0; e < m; e++) {
    const r = (src[e] as number) + 1;
    indptr[r] = (indptr[r] as number) + 1;
  }
  for (let r = 0; r < n; r++) indptr[r + 1] = (indptr[r + 1] as number) + (indptr[r] as number);
  // Merge duplicates while copying.
  const indices = new Int32Array(m);
  const values = new Float64Array(m);
  const outPtr = new Int32Array(n + 1);
  let k = 0;
  for (let r = 0; r < n; r++) {
    outPtr[r] = k;
    let last = -1;
    for (let i = indptr[r] as number; i < (indptr[r + 1] as number); i++) {
      const e = order[i] as number;
      const c = dst[e] as number;
      if (c === last) values[k - 1] = (values[k - 1] as number) + (weight[e] as number);
      else {
        indices[k] = c;
        values[k] = weight[e] as number;
        k++;
        last = c;
      }
    }
  }
  outPtr[n] = k;
  return { rows: n, cols: n, indptr: outPtr, indices: indices.slice(0, k), values: values.slice(0, k) };
}

/** Edge order sorted by `key` (stable), starting from `within` (or identity). */
function countingOrder(n: number, key: Int32Array, within: Int32Array | null): Int32Array {
  const m = key.length;
  const start = new Int32Array(n + 1);
  for (let e = 0; e < m; e++) {
    const r = (key[e] as number) + 1;
    start[r] = (start[r] as number) + 1;
  }
  for (let r = 0; r < n; r++) start[r + 1] = (start[r + 1] as number) + (start[r] as number);
  const out = new Int32Array(m);
  for (let i = 0; i < m; i++) {
    const e = within === null ? i : (within[i] as number);
    const k = key[e] as number;
    const pos = start[k] as number;
    start[k] = pos + 1;
    out[pos] = e;
  }
  return out;
}

/**
 * The column-stochastic transition matrix of a weighted adjacency `A` (rows = sources), stored in CSR by
 * destination so that one PPR step is a gather: `P[j][i] = A[i][j] / out(i)` with `out(i) = Σ_j A[i][j]`. Each
 * column of a node with out-edges sums to 1. A **dangling** node (no out-edges) has an all-zero column; it is
 * listed in `dangling` and the iteration hands its mass on explicitly ({@link personalizedPageRank}).
 */
export interface Transition {
  readonly n: number;
  /** P in CSR by destination row: `P[j][i]` for each in-edge i -> j. */
  readonly matrix: Csr;
  /** Nodes with no out-edges, ascending. */
  readonly dangling: Int32Array;
}

export function transitionMatrix(adjacency: Csr): Transition {
  const n = adjacency.rows;
  const out = new Float64Array(n);
  for (let r = 0; r < n; r++) {
    let s = 0;
    for (let i = adjacency.indptr[r] as number; i < (adjacency.indptr[r + 1] as number); i++) s += adjacency.values[i] as number;
    out[r] = s;
  }
  // Transpose A while dividing by the source's out-weight: a counting sort by destination.
  const nnz = adjacency.indptr[n] as number;
  const indptr = new Int32Array(n + 1);
  for (let i = 0; i < nnz; i++) {
    const r = (adjacency.indices[i] as number) + 1;
    indptr[r] = (indptr[r] as number) + 1;
  }
  for (let r = 0; r < n; r++) indptr[r + 1] = (indptr[r + 1] as number) + (indptr[r] as number);
  const fill = indptr.slice(0, n);
  const indices = new Int32Array(nnz);
  const values = new Float64Array(nnz);
  for (let src = 0; src < n; src++) {
    for (let i = adjacency.indptr[src] as number; i < (adjacency.indptr[src + 1] as number); i++) {
      const dst = adjacency.indices[i] as number;
      const pos = fill[dst] as number;
      fill[dst] = pos + 1;
      indices[pos] = src;
      values[pos] = (adjacency.values[i] as number) / (out[src] as number);
    }
  }
  let nd = 0;
  for (let r = 0; r < n; r++) if (out[r] === 0) nd++;
  const dangling = new Int32Array(nd);
  nd = 0;
  for (let r = 0; r < n; r++) if (out[r] === 0) dangling[nd++] = r;
  return { n, matrix: { rows: n, cols: n, indptr, indices, values }, dangling };
}

/** Where the mass of dangling nodes goes at each step. */
export type DanglingPolicy = 'seeds' | 'uniform';

export interface PprOptions {
  /** Probability of following an edge (HippoRAG: 0.5); 1 - damping restarts at the seeds. In [0, 1). */
  readonly damping: number;
  /**
   * Stop when the L1 change of the vector in one step falls below this. The result is then within
   * `d / (1 - d) * tolerance` of the exact vector in L1 (the tolerance itself at d = 0.5).
   */
  readonly tolerance: number;
  readonly maxIterations: number;
  /**
   * `seeds` (default; igraph/PRPACK's personalized PageRank, "strongly preferential"): a dangling node's mass
   * restarts at the seeds. `uniform`: it spreads over every node ("weakly preferential").
   */
  readonly dangling?: DanglingPolicy;
}

export interface PprResult {
  /** Sums to 1. */
  readonly scores: Float64Array;
  readonly iterations: number;
  /** L1 change of the last step; `d / (1 - d) * delta` bounds the L1 distance of `scores` to the exact vector. */
  readonly delta: number;
  readonly converged: boolean;
}

/**
 * Personalized PageRank by power iteration: the fixed point of
 *
 *   x = d (P x + (Σ_{k dangling} x_k) u) + (1 - d) s
 *
 * with `P` column-stochastic ({@link transitionMatrix}), `s` the seed (personalization) vector normalised to sum
 * 1, `u = s` (policy `seeds`) or `1/n` (`uniform`), damping `d`. Starts from `x = s`; each step costs one gather
 * over P's nonzeros; the error shrinks by a factor `d` per step, so about log(tol) / log(d) steps
 * (20 at d = 0.5, tol = 1e-6). `x` is a probability vector throughout (no renormalisation needed). With
 * `M = P + u 1_dangling^T`, `x* - x_{k+1} = d M (x* - x_k)` and `||M||_1 = 1` give the stopping rule's bound
 * `||x* - x_{k+1}||_1 <= d / (1 - d) ||x_{k+1} - x_k||_1`.
 *
 * The arithmetic is exactly the plain loop's (each row summed in CSR order, the same update), so the result is
 * bit-identical to it; node-order-dependent methods (Gauss-Seidel, push) converge in fewer sweeps but break the
 * exact ties of symmetric nodes, which decide rankings (docs/adr/0019-graph-arms.md, "PPR at 1 ms"). The speed
 * comes from the layout and from skipping zeros:
 * - Rows are relabelled by their number of nonzeros and stored eight at a time, column-interleaved and padded to
 *   the longest of the eight (sliced ELLPACK, "SELL-8"; Kreutzer et al., "A unified sparse matrix data format for
 *   efficient general sparse matrix-vector multiplication on modern processors with wide SIMD units", SIAM J.
 *   Sci. Comput. 36(5), 2014): one loop exit per eight rows instead of one per row, eight independent sums. A
 *   padding entry adds `0 * x_0 = +0`, which leaves a sum unchanged.
 * - The full step runs in WebAssembly with 128-bit SIMD ({@link stepBody}): a slice's eight sums are four f64x2
 *   vectors, each lane rounded as the scalar operation, so the sums stay the scalar ones bit for bit.
 * - While no mass is spread over every node (policy `seeds`, or `uniform` before any mass reaches a dangling
 *   node), a node is nonzero only if a seed reaches it, so the first steps compute only the rows of nodes
 *   within reach (the seeds' out-neighbourhoods, grown by one hop per step) until those rows hold a twelfth of the
 *   nonzeros; the other rows are exactly 0 in the full step too.
 * The layout is built on the first query of a transition and kept beside it (the transition must not change
 * afterwards); it holds this function's scratch vectors, so calls on one transition must not interleave (they
 * are synchronous; a worker thread has its own transitions). Its arrays live in the kernel's WebAssembly memory
 * (about 12 bytes per nonzero plus 32 per node: 150 MB at 10M nonzeros); a graph that would need more than 2 GB
 * is refused with a HarnessError (exit 2) rather than run on a slower path.
 *
 * `seed` must be non-negative with a positive sum (a caller with no seeds has nothing to rank; it must not
 * call this). The result owns a fresh array.
 */
export function personalizedPageRank(t: Transition, seed: Float64Array, opts: PprOptions): PprResult {
  const n = t.n;
  if (seed.length !== n) throw new RangeError(`personalizedPageRank: seed has ${seed.length} entries for ${n} nodes`);
  const d = opts.damping;
  if (!(d >= 0 && d < 1)) throw new RangeError(`personalizedPageRank: damping ${d} outside [0, 1)`);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const v = seed[i] as number;
    if (!(v >= 0 && Number.isFinite(v))) throw new RangeError(`personalizedPageRank: seed[${i}] = ${v}; seeds must be finite and >= 0`);
    total += v;
  }
  if (!(total > 0)) throw new RangeError('personalizedPageRank: the seed vector is all zero');
  const layout = layoutOf(t);
  const { perm, dangling, reached, frontier } = layout;
  let x = layout.x;
  let next = layout.next;
  const s = layout.s;
  // Rows outside the frontier must read 0 in both vectors; x gets s below.
  next.fill(0);
  s.fill(0);
  reached.fill(0);
  // The rows computed while only the seeds' neighbourhoods are nonzero: `frontier[0 .. rows)`, of which the
  // first `expanded` have their out-neighbours in it too. Step k computes the rows within k hops of a seed.
  let rows = 0;
  for (let p = 0; p < n; p++) {
    const v = seed[perm[p] as number] as number;
    if (v > 0) {
      s[p] = v / total;
      reached[p] = 1;
      frontier[rows++] = p;
    }
  }
  let seedNonzeros = 0;
  for (let k = 0; k < rows; k++) seedNonzeros += layout.rowLength[frontier[k] as number] as number;
  layout.frontierNonzeros[0] = seedNonzeros;
  let expanded = rows;
  rows = expand(layout, 0, expanded, rows);
  x.set(s);
  const uniform = opts.dangling === 'uniform';
  const spread = uniform ? layout.real : s;
  const restart = 1 - d;
  let iterations = 0;
  let delta = Number.POSITIVE_INFINITY;
  while (iterations < opts.maxIterations) {
    let lost = 0;
    for (let k = 0; k < dangling.length; k++) lost += x[dangling[k] as number] as number;
    // Restart mass plus the damped dangling mass, on the seeds (or on every node).
    const toSeeds = uniform ? restart : restart + d * lost;
    const toAll = uniform ? (d * lost) / n : 0;
    // Once mass is spread over every node, or the frontier is too big to pay off, every step is full.
    if (toAll !== 0) rows = -1;
    if (rows >= 0) {
      delta = sparseStep(layout, x, next, s, rows, toSeeds, d);
      // The rows just computed for the first time are nonzero now: the rows reading them join.
      const before = rows;
      rows = expand(layout, expanded, before, rows);
      expanded = before;
    } else
      delta = layout.step(
        layout.slices,
        layout.slicePtr.byteOffset,
        layout.cols.byteOffset,
        layout.vals.byteOffset,
        x.byteOffset,
        next.byteOffset,
        s.byteOffset,
        spread.byteOffset,
        toSeeds,
        toAll,
        d,
      );
    const tmp = x;
    x = next;
    next = tmp;
    iterations++;
    if (delta < opts.tolerance) break;
  }
  const scores = new Float64Array(n);
  for (let p = 0; p < n; p++) scores[perm[p] as number] = x[p] as number;
  return { scores, iterations, delta, converged: delta < opts.tolerance };
}

/** Rows per slice of the sliced-ELLPACK layout; {@link stepBody} is unrolled for exactly this many. */
const LANES = 8;

/** The WebAssembly power step ({@link stepBody}): returns the L1 change; addresses are byte offsets in its memory. */
type StepExport = (
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

/** A transition matrix relabelled and stored for {@link step}, with the scratch vectors of one query. */
interface Layout {
  readonly n: number;
  readonly nonzeros: number;
  /** Slices: `ceil(n / LANES)`; vectors have `LANES * slices` entries, the padding rows always 0. */
  readonly slices: number;
  /** `perm[p]` is the node stored at row `p`. */
  readonly perm: Int32Array;
  /**
   * Slice `c`'s entries are `cols/vals[slicePtr[c] .. slicePtr[c + 1])`, lane `l` at offsets ≡ l (mod LANES);
   * `cols` holds byte offsets (8 × the row read), which the kernel adds to the vector's address unshifted.
   */
  readonly slicePtr: Int32Array;
  readonly cols: Int32Array;
  readonly vals: Float64Array;
  /** Row p's nonzeros (without padding). */
  readonly rowLength: Int32Array;
  /** Out-neighbours of row p (the rows whose sums read x_p): `outIdx[outPtr[p] .. outPtr[p + 1])`. */
  readonly outPtr: Int32Array;
  readonly outIdx: Int32Array;
  /** Dangling nodes, relabelled. */
  readonly dangling: Int32Array;
  /** 1 on real rows, 0 on padding rows: where policy `uniform` spreads the dangling mass. */
  readonly real: Float64Array;
  readonly x: Float64Array;
  readonly next: Float64Array;
  readonly s: Float64Array;
  /** Rows computed by the sparse steps so far, in the order reached; `reached[p]` marks them. */
  readonly frontier: Int32Array;
  readonly reached: Uint8Array;
  /** The frontier rows' nonzeros (one entry, scratch). */
  readonly frontierNonzeros: Float64Array;
  /**
   * A sparse step (JavaScript, one sum at a time) costs about four times the SIMD full step per nonzero: above
   * this, full steps (a twelfth measured 0.70 against 0.74 ms per query for a quarter at 5,400 nodes).
   */
  readonly sparseBudget: number;
  /** The full step, an instance over the memory that holds every array above except perm, rowLength and the out-edges. */
  readonly step: StepExport;
}

const layouts = new WeakMap<Transition, Layout>();

function layoutOf(t: Transition): Layout {
  const known = layouts.get(t);
  if (known !== undefined) return known;
  const built = buildLayout(t);
  layouts.set(t, built);
  return built;
}

function buildLayout(t: Transition): Layout {
  const n = t.n;
  const { indptr, indices, values } = t.matrix;
  const nonzeros = indptr[n] as number;
  // Relabel rows by length (stable counting sort), so the eight rows of a slice have about the same length.
  let longest = 0;
  for (let j = 0; j < n; j++) longest = Math.max(longest, (indptr[j + 1] as number) - (indptr[j] as number));
  const start = new Int32Array(longest + 2);
  for (let j = 0; j < n; j++) {
    const len = (indptr[j + 1] as number) - (indptr[j] as number);
    start[len + 1] = (start[len + 1] as number) + 1;
  }
  for (let k = 0; k <= longest; k++) start[k + 1] = (start[k + 1] as number) + (start[k] as number);
  const perm = new Int32Array(n);
  for (let j = 0; j < n; j++) {
    const len = (indptr[j + 1] as number) - (indptr[j] as number);
    const pos = start[len] as number;
    start[len] = pos + 1;
    perm[pos] = j;
  }
  const label = new Int32Array(n);
  for (let p = 0; p < n; p++) label[perm[p] as number] = p;
  const slices = Math.ceil(n / LANES);
  const padded = slices * LANES;
  const rowLength = new Int32Array(padded);
  const slicePtr = new Int32Array(slices + 1);
  for (let c = 0; c < slices; c++) {
    let width = 0;
    for (let p = c * LANES; p < Math.min(n, (c + 1) * LANES); p++) {
      const j = perm[p] as number;
      rowLength[p] = (indptr[j + 1] as number) - (indptr[j] as number);
      width = Math.max(width, rowLength[p] as number);
    }
    slicePtr[c + 1] = (slicePtr[c] as number) + LANES * width;
  }
  // The step's arrays live in its WebAssembly memory, each at a 16-byte boundary; padding entries read x_0
  // with weight 0.
  const entries = slicePtr[slices] as number;
  const align = (bytes: number): number => Math.ceil(bytes / 16) * 16;
  const at = {
    slicePtr: 0,
    cols: align((slices + 1) * 4),
    vals: 0,
    vectors: 0,
  };
  at.vals = at.cols + align(entries * 4);
  at.vectors = at.vals + entries * 8;
  const vectorBytes = padded * 8;
  const total = at.vectors + 4 * vectorBytes;
  if (total > MAX_MEMORY_BYTES) {
    throw new HarnessError(
      `personalizedPageRank: a graph of ${n} nodes and ${nonzeros} edges needs ${Math.ceil(total / 2 ** 20)} MB of kernel memory (at most ${MAX_MEMORY_BYTES / 2 ** 20} MB)`,
      { exitCode: 2, hint: 'split the graph, or drop its weakest edges' },
    );
  }
  kernel ??= new Kernel([{ name: 'step', params: STEP_PARAMS, results: [F64], locals: STEP_LOCALS, body: stepBody() }]);
  const { exports, buffer } = kernel.instantiate(total);
  new Int32Array(buffer, at.slicePtr, slices + 1).set(slicePtr);
  const cols = new Int32Array(buffer, at.cols, entries);
  const vals = new Float64Array(buffer, at.vals, entries);
  const vector = (k: number): Float64Array => new Float64Array(buffer, at.vectors + k * vectorBytes, padded);
  const outPtr = new Int32Array(padded + 1);
  for (let i = 0; i < nonzeros; i++) {
    const q = (label[indices[i] as number] as number) + 1;
    outPtr[q] = (outPtr[q] as number) + 1;
  }
  for (let p = 0; p < padded; p++) outPtr[p + 1] = (outPtr[p + 1] as number) + (outPtr[p] as number);
  const fill = outPtr.slice(0, padded);
  const outIdx = new Int32Array(nonzeros);
  for (let c = 0; c < slices; c++) {
    for (let lane = 0; lane < LANES; lane++) {
      const p = c * LANES + lane;
      if (p >= n) break;
      const j = perm[p] as number;
      let k = (slicePtr[c] as number) + lane;
      for (let i = indptr[j] as number; i < (indptr[j + 1] as number); i++) {
        const q = label[indices[i] as number] as number;
        cols[k] = q << 3;
        vals[k] = values[i] as number;
        k += LANES;
        const o = fill[q] as number;
        fill[q] = o + 1;
        outIdx[o] = p;
      }
    }
  }
  const dangling = new Int32Array(t.dangling.length);
  for (let k = 0; k < dangling.length; k++) dangling[k] = label[t.dangling[k] as number] as number;
  const real = vector(3);
  real.fill(1, 0, n);
  return {
    n,
    nonzeros,
    slices,
    perm,
    slicePtr: new Int32Array(buffer, at.slicePtr, slices + 1),
    cols,
    vals,
    rowLength,
    outPtr,
    outIdx,
    dangling,
    real,
    x: vector(0),
    next: vector(1),
    s: vector(2),
    frontier: new Int32Array(n),
    reached: new Uint8Array(n),
    frontierNonzeros: new Float64Array(1),
    sparseBudget: nonzeros / 12,
    step: exports.step as StepExport,
  };
}

/**
 * Appends to the frontier (once each) the rows reading `frontier[from .. to)`; returns the new frontier length, or
 * -1 once the frontier's rows hold more than `sparseBudget` nonzeros (a sparse step would no longer pay off).
 */
function expand(layout: Layout, from: number, to: number, rows: number): number {
  const { frontier, reached, outPtr, outIdx, rowLength, frontierNonzeros } = layout;
  const budget = layout.sparseBudget;
  let count = rows;
  let nonzeros = frontierNonzeros[0] as number;
  for (let f = from; f < to; f++) {
    const p = frontier[f] as number;
    for (let k = outPtr[p] as number; k < (outPtr[p + 1] as number); k++) {
      const q = outIdx[k] as number;
      if (reached[q] === 0) {
        reached[q] = 1;
        frontier[count++] = q;
        nonzeros += rowLength[q] as number;
        if (nonzeros > budget) return -1;
      }
    }
  }
  frontierNonzeros[0] = nonzeros;
  return count;
}

let kernel: Kernel | undefined;

const STEP_PARAMS = [I32, I32, I32, I32, I32, I32, I32, I32, F64, F64, F64] as const;
const [SLICES, SLICE_PTR, COLS, VALS, X, OUT, S, SPREAD, TO_SEEDS, TO_ALL, D] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
const [C, SP, KC, KV, END_C, R] = [11, 12, 13, 14, 15, 16];
const [DELTA] = [17];
/** Four accumulators of two rows each, then the splatted d, toSeeds, toAll, then one result and one |change| vector. */
const [A0, VD, VTS, VTA, V, E] = [18, 22, 23, 24, 25, 26];
const STEP_LOCALS: readonly ValType[] = [I32, I32, I32, I32, I32, I32, F64, ...new Array<ValType>(9).fill(V128)];

/**
 * step(slices, slicePtr, cols, vals, x, out, s, spread, toSeeds, toAll, d): one power step over every row,
 * `out_j = d (P x)_j + toSeeds s_j + toAll spread_j` (`spread` is 1 on real rows for policy `uniform`; with
 * `toAll = 0` any vector will do), returning the L1 change `Σ_j |out_j - x_j|`; the whole cost of a query.
 *
 * The eight rows of a slice are four f64x2 accumulators. Per padded column position the eight weights are two
 * contiguous 32-byte loads and the eight x values are gathered two per vector (`v128.load64_zero`, then
 * `v128.load64_lane`). Each lane is one IEEE multiply then one add, row entries in CSR order from +0, and
 * `((d a) + (toSeeds s)) + (toAll spread)`, so every row's value is the scalar loop's bit for bit (WebAssembly
 * has no fused multiply-add and does not reassociate). The slice's L1 change is summed over its rows in order,
 * then added to the total, the association of the scalar `delta += |v_0 - x_0| + … + |v_7 - x_7|`, so the
 * iteration stops at the same step.
 */
function stepBody(): number[] {
  const acc = (j: number): number => A0 + j;
  const entries = [0, 1, 2, 3].flatMap((j) => [
    ...[...get(acc(j)), ...get(KV), ...vload(16 * j)],
    // The address of lane 1's x first: v128.load64_lane takes [address, vector].
    ...[...get(X), ...get(KC), ...loadI32(8 * j + 4), ...ADD],
    ...[...get(X), ...get(KC), ...loadI32(8 * j), ...ADD, ...vload64Zero(), ...vload64Lane(1)],
    ...[...F64X2_MUL, ...F64X2_ADD, ...set(acc(j))],
  ]);
  const rows = [0, 1, 2, 3].flatMap((j) => [
    ...[...get(OUT), ...get(R), ...ADD, ...get(VD), ...get(acc(j)), ...F64X2_MUL],
    ...[...get(VTS), ...get(S), ...get(R), ...ADD, ...vload(16 * j), ...F64X2_MUL, ...F64X2_ADD],
    ...[...get(VTA), ...get(SPREAD), ...get(R), ...ADD, ...vload(16 * j), ...F64X2_MUL, ...F64X2_ADD],
    ...[...tee(V), ...vstore(16 * j)],
    ...[...get(V), ...get(X), ...get(R), ...ADD, ...vload(16 * j), ...F64X2_SUB, ...F64X2_ABS, ...set(E)],
    // The running slice sum stays on the stack: |v_0 - x_0| + |v_1 - x_1| + … in row order.
    ...(j === 0 ? [...get(E), ...f64x2Extract(0)] : [...get(E), ...f64x2Extract(0), ...F64_ADD]),
    ...[...get(E), ...f64x2Extract(1), ...F64_ADD],
  ]);
  return [
    ...[...get(D), ...F64X2_SPLAT, ...set(VD), ...get(TO_SEEDS), ...F64X2_SPLAT, ...set(VTS), ...get(TO_ALL), ...F64X2_SPLAT, ...set(VTA)],
    ...[...i32(0), ...set(C), ...get(SLICE_PTR), ...set(SP), ...get(COLS), ...set(KC), ...get(VALS), ...set(KV), ...i32(0), ...set(R)],
    ...[...f64(0), ...set(DELTA)],
    ...[...BLOCK, ...LOOP, ...get(C), ...get(SLICES), ...GE_U, ...BREAK_IF],
    ...[...get(COLS), ...get(SP), ...loadI32(4), ...i32(2), ...SHL, ...ADD, ...set(END_C)],
    ...[0, 1, 2, 3].flatMap((j) => [...VZERO, ...set(acc(j))]),
    ...[...BLOCK, ...LOOP, ...get(KC), ...get(END_C), ...GE_U, ...BREAK_IF],
    ...entries,
    ...[...get(KC), ...i32(4 * LANES), ...ADD, ...set(KC), ...get(KV), ...i32(8 * LANES), ...ADD, ...set(KV)],
    ...[...CONTINUE, ...END, ...END],
    ...[...get(DELTA), ...rows, ...F64_ADD, ...set(DELTA)],
    ...[...get(C), ...i32(1), ...ADD, ...set(C), ...get(SP), ...i32(4), ...ADD, ...set(SP), ...get(R), ...i32(8 * LANES), ...ADD, ...set(R)],
    ...[...CONTINUE, ...END, ...END],
    ...get(DELTA),
  ];
}

/** {@link stepBody}'s step on the frontier's rows only (no mass spread over every node); every other row stays 0. */
function sparseStep(layout: Layout, x: Float64Array, out: Float64Array, s: Float64Array, rows: number, toSeeds: number, d: number): number {
  const { slicePtr, cols, vals, frontier } = layout;
  let delta = 0;
  for (let f = 0; f < rows; f++) {
    const r = frontier[f] as number;
    const c = r >> 3;
    const end = slicePtr[c + 1] as number;
    let acc = 0;
    for (let k = (slicePtr[c] as number) + (r & 7); k < end; k += 8) acc += (vals[k] as number) * (x[(cols[k] as number) >> 3] as number);
    const v = d * acc + toSeeds * (s[r] as number);
    delta += Math.abs(v - (x[r] as number));
    out[r] = v;
  }
  return delta;
}
