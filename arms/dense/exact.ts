/**
 * Exact top-k by cosine over one Float32Array: no per-document objects, one bounded heap per query.
 *
 * With rows and queries L2-normalised (see {@link normalizeRows}), cosine(q, d) = q · d = Σ_j q_j d_j, in
 * [-1, 1]. The matrix is scanned in blocks of rows small enough to stay in cache while every query of the
 * batch is scored against them, so a batch of queries reads the matrix from memory once (blocked
 * matrix-vector products, as in FAISS's `IndexFlatIP` brute-force search; Johnson, Douze and Jégou 2019,
 * doi:10.1109/TBDATA.2019.2921572).
 */

/** Bytes of matrix per block: fits a core's L2 cache with room for the queries. */
const BLOCK_BYTES = 128 * 1024;

/**
 * L2-normalises each `dims`-wide row of `v` in place (v_i / ||v||_2) and returns it. A zero row stays zero:
 * its cosine with anything is then 0, not NaN (a text with no known word under GloVe).
 */
export function normalizeRows(v: Float32Array, dims: number): Float32Array {
  for (let off = 0; off < v.length; off += dims) {
    let ss = 0;
    for (let j = 0; j < dims; j++) {
      const x = v[off + j] as number;
      ss += x * x;
    }
    if (ss === 0) continue;
    const inv = 1 / Math.sqrt(ss);
    for (let j = 0; j < dims; j++) v[off + j] = (v[off + j] as number) * inv;
  }
  return v;
}

/** Σ_j a[ao + j] b[bo + j] for j < dims; four accumulators so the adds pipeline. */
export function dot(a: Float32Array, ao: number, b: Float32Array, bo: number, dims: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let j = 0;
  const end4 = dims - (dims % 4);
  for (; j < end4; j += 4) {
    s0 += (a[ao + j] as number) * (b[bo + j] as number);
    s1 += (a[ao + j + 1] as number) * (b[bo + j + 1] as number);
    s2 += (a[ao + j + 2] as number) * (b[bo + j + 2] as number);
    s3 += (a[ao + j + 3] as number) * (b[bo + j + 3] as number);
  }
  for (; j < dims; j++) s0 += (a[ao + j] as number) * (b[bo + j] as number);
  return s0 + s1 + s2 + s3;
}

/** One query's best rows: `rows[i]` scored `scores[i]`, best first; at most topK entries. */
export interface TopK {
  readonly rows: Int32Array;
  readonly scores: Float64Array;
}

/**
 * The `topK` rows of `matrix` (`n = matrix.length / dims` rows) with the largest dot product with each of the
 * `queries.length / dims` query rows, best first; equal scores in row order. Cosine when both sides are
 * normalised. Cost O(n · dims · nq) multiply-adds, O(n · log topK) heap work per query in the worst case.
 */
export function exactTopK(matrix: Float32Array, queries: Float32Array, dims: number, topK: number): TopK[] {
  const n = Math.floor(matrix.length / dims);
  const nq = Math.floor(queries.length / dims);
  const k = Math.max(0, Math.min(topK, n));
  const heapRows = Array.from({ length: nq }, () => new Int32Array(k));
  const heapScores = Array.from({ length: nq }, () => new Float64Array(k));
  const sizes = new Int32Array(nq);
  if (k > 0) {
    const block = Math.max(1, Math.floor(BLOCK_BYTES / (dims * 4)));
    for (let b0 = 0; b0 < n; b0 += block) {
      const b1 = Math.min(n, b0 + block);
      for (let q = 0; q < nq; q++) {
        const hr = heapRows[q] as Int32Array;
        const hs = heapScores[q] as Float64Array;
        let size = sizes[q] as number;
        const qo = q * dims;
        for (let r = b0; r < b1; r++) {
          const s = dot(matrix, r * dims, queries, qo, dims);
          if (size < k) {
            siftUp(hr, hs, size, r, s);
            size++;
          } else if (s > (hs[0] as number)) {
            siftDown(hr, hs, k, r, s);
          }
        }
        sizes[q] = size;
      }
    }
  }
  return heapRows.map((hr, q) => drain(hr, heapScores[q] as Float64Array, sizes[q] as number));
}

/** A min-heap on (score, then larger row first), so the weakest entry (lowest score, latest row) is at the root. */
function weaker(sa: number, ra: number, sb: number, rb: number): boolean {
  return sa < sb || (sa === sb && ra > rb);
}

function siftUp(hr: Int32Array, hs: Float64Array, at: number, row: number, score: number): void {
  let i = at;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!weaker(score, row, hs[p] as number, hr[p] as number)) break;
    hr[i] = hr[p] as number;
    hs[i] = hs[p] as number;
    i = p;
  }
  hr[i] = row;
  hs[i] = score;
}

/** Replaces the root with (row, score) and restores the heap. */
function siftDown(hr: Int32Array, hs: Float64Array, size: number, row: number, score: number): void {
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= size) break;
    const r = l + 1;
    const c = r < size && weaker(hs[r] as number, hr[r] as number, hs[l] as number, hr[l] as number) ? r : l;
    if (!weaker(hs[c] as number, hr[c] as number, score, row)) break;
    hr[i] = hr[c] as number;
    hs[i] = hs[c] as number;
    i = c;
  }
  hr[i] = row;
  hs[i] = score;
}

/** The heap's entries best first (score descending, then row ascending). */
function drain(hr: Int32Array, hs: Float64Array, size: number): TopK {
  const order = Array.from({ length: size }, (_, i) => i);
  order.sort((a, b) => (hs[b] as number) - (hs[a] as number) || (hr[a] as number) - (hr[b] as number));
  return { rows: Int32Array.from(order, (i) => hr[i] as number), scores: Float64Array.from(order, (i) => hs[i] as number) };
}
