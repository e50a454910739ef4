/**
 * Personalized PageRank kernels over sparse matrices in typed arrays: pure functions, no allocation inside the
 * iteration. The graph arms (arms/graph) and the `graph-ppr` node kind build on them; docs/adr/0019-graph-arms.md.
 *
 * Gutiérrez et al., "HippoRAG: Neurobiologically Inspired Long-Term Memory for Large Language Models" (NeurIPS
 * 2024) and "From RAG to Memory: Non-Parametric Continual Learning for Large Language Models" (HippoRAG 2, ICML
 * 2025) rank passages by the PPR mass of a phrase/passage graph seeded by the query's concepts, damping 0.5.
 */
import { HarnessError } from '../errors.js';
import { instantiateKernels, MAX_MEMORY_BYTES } from '../util/kernel-set.js';
import { LANES, PPR_KERNELS, type StepKernel } from './ppr-kernels.js';

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
 * - The full step runs in a kernel of ppr-kernels.ts, by default WebAssembly with 128-bit SIMD: a slice's eight
 *   sums are four f64x2 vectors, each lane rounded as the scalar operation, so the sums stay the scalar ones bit
 *   for bit.
 * - While no mass is spread over every node (policy `seeds`, or `uniform` before any mass reaches a dangling
 *   node), a node is nonzero only if a seed reaches it, so the first steps compute only the rows of nodes
 *   within reach (the seeds' out-neighbourhoods, grown by one hop per step) until those rows hold a twelfth of the
 *   nonzeros; the other rows are exactly 0 in the full step too.
 * The layout is built on the first query of a transition and kept beside it (the transition must not change
 * afterwards); it holds this function's scratch vectors, so calls on one transition must not interleave (they
 * are synchronous; a worker thread has its own transitions), and so is its kernel set (`HARNESS_KERNELS` at that
 * first query). Its arrays live in the kernel's memory (about 12 bytes per nonzero plus 32 per node: 150 MB at
 * 10M nonzeros); a graph that would need more than 2 GB is refused with a HarnessError (exit 2).
 *
 * `seed` must be non-negative with a positive sum (a caller with no seeds has nothing to rank; it must not
 * call this). The result owns a fresh array.
 */
export function personalizedPageRank(t: Transition, seed: Float64Array, opts: PprOptions): PprResult {
  const n = t.n;
  const d = opts.damping;
  const total = checkedSeedTotal(n, seed, d);
  const layout = layoutOf(t);
  const { perm, dangling } = layout;
  let x = layout.x;
  let next = layout.next;
  const s = layout.s;
  // The rows computed while only the seeds' neighbourhoods are nonzero: `frontier[0 .. rows)`, of which the
  // first `expanded` have their out-neighbours in it too. Step k computes the rows within k hops of a seed.
  let expanded = startFrontier(layout, seed, total);
  let rows = expand(layout, 0, expanded, expanded);
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
    } else delta = fullStep(layout, x, next, spread, toSeeds, toAll, d);
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

/**
 * The sum of the seed weights. Refuses a seed vector of the wrong length, a damping outside [0, 1), a negative
 * or non-finite seed weight, and an all-zero seed vector, in that order.
 */
function checkedSeedTotal(n: number, seed: Float64Array, d: number): number {
  if (seed.length !== n) throw new RangeError(`personalizedPageRank: seed has ${seed.length} entries for ${n} nodes`);
  if (!(d >= 0 && d < 1)) throw new RangeError(`personalizedPageRank: damping ${d} outside [0, 1)`);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const v = seed[i] as number;
    if (!(v >= 0 && Number.isFinite(v))) throw new RangeError(`personalizedPageRank: seed[${i}] = ${v}; seeds must be finite and >= 0`);
    total += v;
  }
  if (!(total > 0)) throw new RangeError('personalizedPageRank: the seed vector is all zero');
  return total;
}

/**
 * Writes the seed vector, divided by `total`, into `layout.s` (relabelled; 0 elsewhere), clears `next` and the
 * frontier, and starts the frontier with the seeds' rows; returns their number.
 */
function startFrontier(layout: Layout, seed: Float64Array, total: number): number {
  const { n, perm, s, reached, frontier } = layout;
  // Rows outside the frontier must read 0 in both vectors; the caller copies s into x.
  layout.next.fill(0);
  s.fill(0);
  reached.fill(0);
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
  return rows;
}

/** A transition matrix relabelled and stored for the step kernel, with the scratch vectors of one query. */
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
  /** The full step, over the memory that holds every array above except perm, rowLength and the out-edges. */
  readonly step: StepKernel;
}

const layouts = new WeakMap<Transition, Layout>();

function layoutOf(t: Transition): Layout {
  const known = layouts.get(t);
  if (known !== undefined) return known;
  const built = buildLayout(t);
  layouts.set(t, built);
  return built;
}

/** Rows relabelled by length (stable counting sort), so the eight rows of a slice have about the same length. */
function relabelByLength(indptr: Int32Array, n: number): { perm: Int32Array; label: Int32Array } {
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
  return { perm, label };
}

/** Each row's length and each slice's first entry: a slice holds LANES × its longest row's length entries. */
function sliceBounds(indptr: Int32Array, perm: Int32Array, slices: number): { rowLength: Int32Array; slicePtr: Int32Array } {
  const n = perm.length;
  const rowLength = new Int32Array(slices * LANES);
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
  return { rowLength, slicePtr };
}

/** Byte offsets of the step's arrays in its memory, each at a 16-byte boundary, and the memory's size. */
interface Placement {
  readonly cols: number;
  readonly vals: number;
  /** x, next, s and real, `vectorBytes` each; the slice pointers are at 0. */
  readonly vectors: number;
  readonly vectorBytes: number;
  readonly total: number;
}

/** Where the step's arrays go; refuses (exit 2) a graph whose arrays would pass the kernels' 2 GB of memory. */
function place(n: number, nonzeros: number, slices: number, entries: number): Placement {
  const align = (bytes: number): number => Math.ceil(bytes / 16) * 16;
  const cols = align((slices + 1) * 4);
  const vals = cols + align(entries * 4);
  const vectors = vals + entries * 8;
  const vectorBytes = slices * LANES * 8;
  const total = vectors + 4 * vectorBytes;
  if (total > MAX_MEMORY_BYTES) {
    throw new HarnessError(
      `personalizedPageRank: a graph of ${n} nodes and ${nonzeros} edges needs ${Math.ceil(total / 2 ** 20)} MB of kernel memory (at most ${MAX_MEMORY_BYTES / 2 ** 20} MB)`,
      { exitCode: 2, hint: 'split the graph, or drop its weakest edges' },
    );
  }
  return { cols, vals, vectors, vectorBytes, total };
}

/**
 * Writes each row's entries into its slice (`cols` as byte offsets; padding entries keep column 0 and weight 0,
 * so they add `0 * x_0 = +0`) and returns the transposed pattern: the rows that read each row.
 */
function fillSlices(
  t: Transition,
  relabelled: { perm: Int32Array; label: Int32Array },
  slicePtr: Int32Array,
  cols: Int32Array,
  vals: Float64Array,
): { outPtr: Int32Array; outIdx: Int32Array } {
  const { n } = t;
  const { indptr, indices, values } = t.matrix;
  const { perm, label } = relabelled;
  const padded = (slicePtr.length - 1) * LANES;
  const nonzeros = indptr[n] as number;
  const outPtr = new Int32Array(padded + 1);
  for (let i = 0; i < nonzeros; i++) {
    const q = (label[indices[i] as number] as number) + 1;
    outPtr[q] = (outPtr[q] as number) + 1;
  }
  for (let p = 0; p < padded; p++) outPtr[p + 1] = (outPtr[p + 1] as number) + (outPtr[p] as number);
  const fill = outPtr.slice(0, padded);
  const outIdx = new Int32Array(nonzeros);
  for (let p = 0; p < n; p++) {
    const j = perm[p] as number;
    let k = (slicePtr[Math.floor(p / LANES)] as number) + (p % LANES);
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
  return { outPtr, outIdx };
}

function buildLayout(t: Transition): Layout {
  const n = t.n;
  const nonzeros = t.matrix.indptr[n] as number;
  const relabelled = relabelByLength(t.matrix.indptr, n);
  const slices = Math.ceil(n / LANES);
  const { rowLength, slicePtr } = sliceBounds(t.matrix.indptr, relabelled.perm, slices);
  const entries = slicePtr[slices] as number;
  const at = place(n, nonzeros, slices, entries);
  const { kernels, memory } = instantiateKernels(PPR_KERNELS, at.total);
  const memorySlicePtr = new Int32Array(memory, 0, slices + 1);
  memorySlicePtr.set(slicePtr);
  const cols = new Int32Array(memory, at.cols, entries);
  const vals = new Float64Array(memory, at.vals, entries);
  const { outPtr, outIdx } = fillSlices(t, relabelled, slicePtr, cols, vals);
  const vector = (k: number): Float64Array => new Float64Array(memory, at.vectors + k * at.vectorBytes, slices * LANES);
  const dangling = t.dangling.map((node) => relabelled.label[node] as number);
  const real = vector(3);
  real.fill(1, 0, n);
  return {
    n,
    nonzeros,
    slices,
    perm: relabelled.perm,
    slicePtr: memorySlicePtr,
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
    step: kernels.step,
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

/** The full step: every row of `out` from `x` through the layout's step kernel; returns the L1 change. */
function fullStep(layout: Layout, x: Float64Array, out: Float64Array, spread: Float64Array, toSeeds: number, toAll: number, d: number): number {
  const { slices, slicePtr, cols, vals, s } = layout;
  return layout.step(
    slices,
    slicePtr.byteOffset,
    cols.byteOffset,
    vals.byteOffset,
    x.byteOffset,
    out.byteOffset,
    s.byteOffset,
    spread.byteOffset,
    toSeeds,
    toAll,
    d,
  );
}

/** The full step on the frontier's rows only (no mass spread over every node); every other row stays 0. */
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
