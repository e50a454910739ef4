/**
 * The fusion's top-k selection over a query's accumulated sums (bestOfSums in rank-sort.ts) in
 * AssemblyScript, compiled by `npm run build` to dist/harness/fusion/select-kernels.wasm (asconfig.json:
 * memory imported from `env.memory`); select-kernels.ts holds the layout, loads this module, and runs
 * rank-sort.ts's bestOfSums as the TypeScript twin. Every address is a byte offset into that memory.
 *
 * The same passes in the same order as the twin: a threshold from a 1-in-8 sample, a branch-free pass keeping
 * the entries whose raw sum is not below the cut, a pass scoring and bucketing them, then the kept buckets
 * scattered and sorted. The scores are the twin's operations ((base + acc) / div, or base + acc when div is
 * 1), and the order is total (score descending, then local position descending), so the output is the twin's
 * bit for bit, and a decline (-1) happens on the same inputs.
 */

/** Every how many sums the threshold samples (rank-sort.ts SAMPLE_STRIDE). */
const SAMPLE_STRIDE: i32 = 8;
/** Buckets larger than this are sorted on their own before the one insertion pass (rank-sort.ts SMALL_BUCKET). */
const SMALL_BUCKET: i32 = 16;
/**
 * Buckets per entry of the fused list, plus 64 (rank-sort.ts BUCKETS_PER_K): the candidates crowd the low end
 * of [threshold, max], and 3.75 buckets an entry halve the entries that arrive out of order in their bucket,
 * which the insertion pass pays a mispredicted branch for (docs/perf/fusion.md).
 */
const BUCKETS_PER_K: f64 = 3.75;

// The scratch region of capacity C: candS f64[C], sampleS f64[S], candL i32[C], candB i32[C], counts i32[C],
// sampleCounts i32[S], with S = ceil(C / 8) + 1 and C at least 1 (select-kernels.ts lays out the same).
let candS: usize = 0;
let sampleS: usize = 0;
let candL: usize = 0;
let candB: usize = 0;
let counts: usize = 0;
let sampleCounts: usize = 0;
/** The sampled threshold and the sample's maximum, set by sampledThreshold. */
let threshold: f64 = 0;
/** The most candidates one bucket holds, set by bestOfSums: placeBuckets sorts buckets apart only past SMALL_BUCKET. */
let crowd: i32 = 0;
let sampleHi: f64 = 0;

function layOut(scratch: usize, capacity: i32): void {
  const c = <usize>max(capacity, 1);
  const s = <usize>((capacity + SAMPLE_STRIDE - 1) / SAMPLE_STRIDE + 1);
  candS = scratch;
  sampleS = candS + 8 * c;
  candL = sampleS + 8 * s;
  candB = candL + 4 * c;
  counts = candB + 4 * c;
  sampleCounts = counts + 4 * c;
}

function f64At(base: usize, i: i32): f64 {
  return load<f64>(base + ((<usize>i) << 3));
}

function i32At(base: usize, i: i32): i32 {
  return load<i32>(base + ((<usize>i) << 2));
}

function setF64(base: usize, i: i32, v: f64): void {
  store<f64>(base + ((<usize>i) << 3), v);
}

function setI32(base: usize, i: i32, v: i32): void {
  store<i32>(base + ((<usize>i) << 2), v);
}

function fillZero(base: usize, n: i32): void {
  memory.fill(base, 0, (<usize>n) << 2);
}

/**
 * Writes the best min(k, size) entries of the list scoring (base + acc[l]) / div into outL/outS best first and
 * returns their number, or -1, having written nothing a caller reads, when the scores resist it; see
 * rank-sort.ts bestOfSums, whose every step this follows.
 */
export function bestOfSums(acc: usize, base: f64, div: f64, size: i32, k: i32, scratch: usize, capacity: i32, outL: usize, outS: usize): i32 {
  if (size === 0) return 0;
  layOut(scratch, capacity);
  if (!sampledThreshold(acc, base, div, size, k)) return -1;
  const t = threshold;
  const hi = sampleHi;
  if (!(Number.isFinite(t) && Number.isFinite(hi))) return -1;
  const tt = t * div;
  const rawCut = tt - Math.abs(tt) * 1e-9 - div * 1e-290;
  const nb = min(capacity, <i32>Math.ceil(<f64>k * BUCKETS_PER_K) + 64);
  const scale = hi > t ? <f64>(nb - 1) / (hi - t) : 0;
  if (!Number.isFinite(scale)) return -1;
  const passed = compactAboveCut(acc, base, size, rawCut);
  fillZero(counts, nb);
  let n: i32 = 0;
  crowd = 0;
  const divide = div !== 1;
  const top = <f64>(nb - 1);
  for (let j: i32 = 0; j < passed; j++) {
    const l = i32At(candL, j);
    const raw = base + f64At(acc, l);
    const s = divide ? raw / div : raw;
    if (s < t) continue;
    const v = (s - t) * scale;
    if (Number.isNaN(v)) return -1;
    const b = v < top ? <i32>v : nb - 1;
    setI32(candL, n, l);
    setF64(candS, n, s);
    setI32(candB, n++, b);
    const c = i32At(counts, b) + 1;
    setI32(counts, b, c);
    crowd = max(crowd, c);
  }
  if (n < k && n < size) return -1;
  return placeBuckets(n, nb, k < n ? k : n, outL, outS);
}

/** rank-sort.ts sampledThreshold: sets threshold and sampleHi, or returns false where the twin returns undefined. */
function sampledThreshold(acc: usize, base: f64, div: f64, size: i32, k: i32): bool {
  const m = <i32>Math.ceil((<f64>k * 1.25) / <f64>SAMPLE_STRIDE) + 8;
  let n: i32 = 0;
  let lo = Infinity;
  let hi = -Infinity;
  const divide = div !== 1;
  for (let l: i32 = 0; l < size; l += SAMPLE_STRIDE) {
    const raw = base + f64At(acc, l);
    const s = divide ? raw / div : raw;
    if (Number.isNaN(s)) return false;
    setF64(sampleS, n++, s);
    hi = max(hi, s);
    lo = min(lo, s);
  }
  if (m * 2 > n || !(Number.isFinite(lo) && Number.isFinite(hi))) return false;
  sampleHi = hi;
  if (hi === lo) {
    threshold = hi;
    return true;
  }
  const top = n - 1;
  const scale = <f64>top / (hi - lo);
  if (!Number.isFinite(scale)) return false;
  fillZero(sampleCounts, n);
  for (let j: i32 = 0; j < n; j++) {
    const v = (f64At(sampleS, j) - lo) * scale;
    const b = v < <f64>top ? <i32>v : top;
    setI32(sampleCounts, b, i32At(sampleCounts, b) + 1);
  }
  let b = top;
  for (let at = i32At(sampleCounts, b); at < m; ) at += i32At(sampleCounts, --b);
  threshold = b === 0 ? lo : lo + <f64>(b - 1) / scale;
  return true;
}

/**
 * rank-sort.ts compactAboveCut: every position whose raw sum is not below rawCut (NaN included) to candL, in
 * order, branch-free (the count advances by the comparison's 0 or 1); returns their number.
 */
function compactAboveCut(acc: usize, base: f64, size: i32, rawCut: f64): i32 {
  let n: i32 = 0;
  let l: i32 = 0;
  for (; l + 4 <= size; l += 4) {
    const c0 = 1 - <i32>(base + f64At(acc, l) < rawCut);
    const c1 = 1 - <i32>(base + f64At(acc, l + 1) < rawCut);
    const c2 = 1 - <i32>(base + f64At(acc, l + 2) < rawCut);
    const c3 = 1 - <i32>(base + f64At(acc, l + 3) < rawCut);
    setI32(candL, n, l);
    n += c0;
    setI32(candL, n, l + 1);
    n += c1;
    setI32(candL, n, l + 2);
    n += c2;
    setI32(candL, n, l + 3);
    n += c3;
  }
  for (; l < size; l++) {
    setI32(candL, n, l);
    n += 1 - <i32>(base + f64At(acc, l) < rawCut);
  }
  return n;
}

/** rank-sort.ts placeBuckets: scatters the buckets down to the one holding the keep-th, then sorts them. */
function placeBuckets(n: i32, nb: i32, keep: i32, outL: usize, outS: usize): i32 {
  // Bucket counts become start offsets, best bucket first, down to `low`, where keep entries are reached.
  let at: i32 = 0;
  let low = nb - 1;
  for (; ; low--) {
    const c = i32At(counts, low);
    setI32(counts, low, at);
    at += c;
    if (at >= keep) break;
  }
  // Entries of the buckets below `low` (a random quarter or so) go to a trash bucket nb at [at, n) rather
  // than a branch that mispredicts on each; counts[nb] is sampleCounts' first slot when nb is the capacity.
  setI32(counts, nb, at);
  for (let j: i32 = 0; j < n; j++) {
    const cb = i32At(candB, j);
    const b = select<i32>(cb, nb, cb >= low);
    const i = i32At(counts, b);
    setI32(counts, b, i + 1);
    setI32(outL, i, i32At(candL, j));
    setF64(outS, i, f64At(candS, j));
  }
  // counts[b] is now bucket b's end, and the next better bucket's end its start.
  if (crowd > SMALL_BUCKET) {
    let start: i32 = 0;
    for (let b = nb - 1; b >= low; b--) {
      const end = i32At(counts, b);
      if (end - start > SMALL_BUCKET) sortRanked(outL, outS, start, end);
      start = end;
    }
  }
  insertionSort(outL, outS, 0, at - 1);
  return keep;
}

/** True when (sa, da) ranks strictly before (sb, db): score descending, then position descending. */
function before(sa: f64, da: i32, sb: f64, db: i32): bool {
  return sa > sb || (sa === sb && da > db);
}

function swap(d: usize, s: usize, i: i32, j: i32): void {
  const td = i32At(d, i);
  setI32(d, i, i32At(d, j));
  setI32(d, j, td);
  const ts = f64At(s, i);
  setF64(s, i, f64At(s, j));
  setF64(s, j, ts);
}

/** rank-sort.ts partition: Hoare around the median of three; returns p with [lo, p] <= [p + 1, hi]. */
function partition(d: usize, s: usize, lo: i32, hi: i32): i32 {
  const mid = (lo + hi) >>> 1;
  if (before(f64At(s, mid), i32At(d, mid), f64At(s, lo), i32At(d, lo))) swap(d, s, mid, lo);
  if (before(f64At(s, hi), i32At(d, hi), f64At(s, lo), i32At(d, lo))) swap(d, s, hi, lo);
  if (before(f64At(s, hi), i32At(d, hi), f64At(s, mid), i32At(d, mid))) swap(d, s, hi, mid);
  const ps = f64At(s, mid);
  const pd = i32At(d, mid);
  let i = lo - 1;
  let j = hi + 1;
  for (;;) {
    do i++;
    while (before(f64At(s, i), i32At(d, i), ps, pd));
    do j--;
    while (before(ps, pd, f64At(s, j), i32At(d, j)));
    if (i >= j) break;
    swap(d, s, i, j);
  }
  return j;
}

function insertionSort(d: usize, s: usize, lo: i32, hi: i32): void {
  for (let i = lo + 1; i <= hi; i++) {
    const xd = i32At(d, i);
    const xs = f64At(s, i);
    let j = i - 1;
    while (j >= lo && before(xs, xd, f64At(s, j), i32At(d, j))) {
      setI32(d, j + 1, i32At(d, j));
      setF64(s, j + 1, f64At(s, j));
      j--;
    }
    setI32(d, j + 1, xd);
    setF64(s, j + 1, xs);
  }
}

/** rank-sort.ts sortRanked: sorts entries [from, to) best first. */
function sortRanked(d: usize, s: usize, from: i32, to: i32): void {
  let lo = from;
  let hi = to - 1;
  while (hi - lo > 16) {
    const p = partition(d, s, lo, hi);
    if (p - lo < hi - p) {
      sortRanked(d, s, lo, p + 1);
      lo = p + 1;
    } else {
      sortRanked(d, s, p + 1, hi + 1);
      hi = p;
    }
  }
  insertionSort(d, s, lo, hi);
}

/**
 * Replaces each of the `keep` local positions at outL by the document index `ids` holds for it (the query's
 * union slice, int32), so that the selection leaves document indices ready to copy out.
 */
export function gatherIds(outL: usize, ids: usize, keep: i32): void {
  for (let j: i32 = 0; j < keep; j++) setI32(outL, j, i32At(ids, i32At(outL, j)));
}

// The accumulation (accumulate.ts QueryAccumulator): every entry e in [from, to) of one input adds its gain to
// the accumulator slot of its local position li[e]. Four entries an iteration, positions loaded first, so the
// four read-modify-writes overlap; entries of one input are distinct documents, so the slots never alias.
// Local positions are u16 when every union of the index fits (P = u16, half the bytes an rrf fusion reads:
// 0.70x to 0.51x the bench's floor for its accumulation), i32 otherwise; each kernel exists for both.

/** The byte address of li[e] for positions of type P (inlined by the optimizer, as the other accessors). */
function at<P>(li: usize, e: i32): usize {
  return li + ((<usize>e) << alignof<P>());
}

/** acc[li[e]] += table[e - from] - a over entries [from, to): reciprocal-rank gains from a per-input table. */
function ranksOf<P>(acc: usize, li: usize, from: i32, to: i32, table: usize, a: f64): void {
  let e = from;
  let t = table;
  for (; e + 4 <= to; e += 4, t += 32) {
    const p = at<P>(li, e);
    const l0 = acc + ((<usize>load<P>(p)) << 3);
    const l1 = acc + ((<usize>load<P>(p, sizeof<P>())) << 3);
    const l2 = acc + ((<usize>load<P>(p, 2 * sizeof<P>())) << 3);
    const l3 = acc + ((<usize>load<P>(p, 3 * sizeof<P>())) << 3);
    store<f64>(l0, load<f64>(l0) + (load<f64>(t) - a));
    store<f64>(l1, load<f64>(l1) + (load<f64>(t, 8) - a));
    store<f64>(l2, load<f64>(l2) + (load<f64>(t, 16) - a));
    store<f64>(l3, load<f64>(l3) + (load<f64>(t, 24) - a));
  }
  for (; e < to; e++, t += 8) {
    const l = acc + ((<usize>load<P>(at<P>(li, e))) << 3);
    store<f64>(l, load<f64>(l) + (load<f64>(t) - a));
  }
}

/**
 * acc[li[e]] += w·((s[e] - lo) / den) + shift over entries [from, to). The gains of two entries at a time are
 * one f64x2 computation: lane by lane the same IEEE operations as the scalar twin, so the same bits, at half
 * the divisions' issue cost (the scalar loop ran at 1.5x the bench's floor, this at 1.1-1.3x).
 */
function scoresOf<P>(acc: usize, li: usize, scores: usize, from: i32, to: i32, w: f64, lo: f64, den: f64, shift: f64): void {
  // (s - 0) / 1 is s, bit for bit (-0 - 0 is -0): no normalization needs no division.
  if (lo === 0 && den === 1) {
    scaledOf<P>(acc, li, scores, from, to, w, shift);
    return;
  }
  const vw = f64x2.splat(w);
  const vlo = f64x2.splat(lo);
  const vden = f64x2.splat(den);
  const vshift = f64x2.splat(shift);
  let e = from;
  for (; e + 4 <= to; e += 4) {
    const s = scores + ((<usize>e) << 3);
    const g01 = f64x2.add(f64x2.mul(vw, f64x2.div(f64x2.sub(v128.load(s), vlo), vden)), vshift);
    const g23 = f64x2.add(f64x2.mul(vw, f64x2.div(f64x2.sub(v128.load(s, 16), vlo), vden)), vshift);
    const p = at<P>(li, e);
    const l0 = acc + ((<usize>load<P>(p)) << 3);
    const l1 = acc + ((<usize>load<P>(p, sizeof<P>())) << 3);
    const l2 = acc + ((<usize>load<P>(p, 2 * sizeof<P>())) << 3);
    const l3 = acc + ((<usize>load<P>(p, 3 * sizeof<P>())) << 3);
    store<f64>(l0, load<f64>(l0) + f64x2.extract_lane(g01, 0));
    store<f64>(l1, load<f64>(l1) + f64x2.extract_lane(g01, 1));
    store<f64>(l2, load<f64>(l2) + f64x2.extract_lane(g23, 0));
    store<f64>(l3, load<f64>(l3) + f64x2.extract_lane(g23, 1));
  }
  for (; e < to; e++) {
    const l = acc + ((<usize>load<P>(at<P>(li, e))) << 3);
    store<f64>(l, load<f64>(l) + (w * ((f64At(scores, e) - lo) / den) + shift));
  }
}

/** acc[li[e]] += w·s[e] + shift over entries [from, to): scoresOf without a normalization. */
function scaledOf<P>(acc: usize, li: usize, scores: usize, from: i32, to: i32, w: f64, shift: f64): void {
  let e = from;
  for (; e + 4 <= to; e += 4) {
    const s = scores + ((<usize>e) << 3);
    const p = at<P>(li, e);
    const l0 = acc + ((<usize>load<P>(p)) << 3);
    const l1 = acc + ((<usize>load<P>(p, sizeof<P>())) << 3);
    const l2 = acc + ((<usize>load<P>(p, 2 * sizeof<P>())) << 3);
    const l3 = acc + ((<usize>load<P>(p, 3 * sizeof<P>())) << 3);
    store<f64>(l0, load<f64>(l0) + (w * load<f64>(s) + shift));
    store<f64>(l1, load<f64>(l1) + (w * load<f64>(s, 8) + shift));
    store<f64>(l2, load<f64>(l2) + (w * load<f64>(s, 16) + shift));
    store<f64>(l3, load<f64>(l3) + (w * load<f64>(s, 24) + shift));
  }
  for (; e < to; e++) {
    const l = acc + ((<usize>load<P>(at<P>(li, e))) << 3);
    store<f64>(l, load<f64>(l) + (w * f64At(scores, e) + shift));
  }
}

export function addRanks(acc: usize, li: usize, from: i32, to: i32, table: usize, a: f64): void {
  ranksOf<i32>(acc, li, from, to, table, a);
}

export function addRanks16(acc: usize, li: usize, from: i32, to: i32, table: usize, a: f64): void {
  ranksOf<u16>(acc, li, from, to, table, a);
}

export function addScores(acc: usize, li: usize, scores: usize, from: i32, to: i32, w: f64, lo: f64, den: f64, shift: f64): void {
  scoresOf<i32>(acc, li, scores, from, to, w, lo, den, shift);
}

export function addScores16(acc: usize, li: usize, scores: usize, from: i32, to: i32, w: f64, lo: f64, den: f64, shift: f64): void {
  scoresOf<u16>(acc, li, scores, from, to, w, lo, den, shift);
}
