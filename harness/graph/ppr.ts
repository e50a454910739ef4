/**
 * Personalized PageRank kernels over sparse matrices in typed arrays: pure functions, no allocation inside the
 * iteration. The graph arms (arms/graph) and the `graph-ppr` node kind build on them; docs/adr/0019-graph-arms.md.
 *
 * Gutiérrez et al., "HippoRAG: Neurobiologically Inspired Long-Term Memory for Large Language Models" (NeurIPS
 * 2024) and "From RAG to Memory: Non-Parametric Continual Learning for Large Language Models" (HippoRAG 2, ICML
 * 2025) rank passages by the PPR mass of a phrase/passage graph seeded by the query's concepts, damping 0.5.
 */

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
  /** Stop when the L1 change of the vector in one step falls below this. */
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
  /** L1 change of the last step. */
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
 * (20 at d = 0.5, tol = 1e-6). `x` is a probability vector throughout (no renormalisation needed).
 *
 * `seed` must be non-negative with a positive sum (a caller with no seeds has nothing to rank; it must not
 * call this). `work` (length n) may be passed to avoid an allocation per query; the result owns a fresh array.
 */
export function personalizedPageRank(t: Transition, seed: Float64Array, opts: PprOptions, work?: Float64Array): PprResult {
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
  const s = new Float64Array(n);
  for (let i = 0; i < n; i++) s[i] = (seed[i] as number) / total;
  const uniform = opts.dangling === 'uniform';
  const { indptr, indices, values } = t.matrix;
  const dangling = t.dangling;
  let x: Float64Array = s.slice();
  let next: Float64Array = work !== undefined && work.length === n ? work : new Float64Array(n);
  let iterations = 0;
  let delta = Number.POSITIVE_INFINITY;
  const restart = 1 - d;
  while (iterations < opts.maxIterations) {
    let lost = 0;
    for (let k = 0; k < dangling.length; k++) lost += x[dangling[k] as number] as number;
    // Restart mass plus the damped dangling mass, on the seeds (or on every node).
    const toSeeds = uniform ? restart : restart + d * lost;
    const toAll = uniform ? (d * lost) / n : 0;
    delta = 0;
    for (let j = 0; j < n; j++) {
      let acc = 0;
      const end = indptr[j + 1] as number;
      for (let i = indptr[j] as number; i < end; i++) acc += (values[i] as number) * (x[indices[i] as number] as number);
      const v = d * acc + toSeeds * (s[j] as number) + toAll;
      next[j] = v;
      delta += Math.abs(v - (x[j] as number));
    }
    const tmp = x;
    x = next;
    next = tmp;
    iterations++;
    if (delta < opts.tolerance) break;
  }
  // `x` may be the caller's work array after an odd number of swaps; the result must own its array.
  const scores = work !== undefined && x === work ? x.slice() : x;
  return { scores, iterations, delta, converged: delta < opts.tolerance };
}
