/**
 * In-place ordering of parallel (doc, score) arrays in the workbench's one ranking order (docs/adr/0001):
 * score descending, then DocTable index descending (= docId descending, since DocTable indices follow id
 * order). Quicksort and quickselect with Hoare partitioning on typed arrays: no per-entry objects, no
 * comparator closures. Doc indices within one range are distinct, so the order is total.
 */

/** True when (sa, da) ranks strictly before (sb, db). */
function before(sa: number, da: number, sb: number, db: number): boolean {
  return sa > sb || (sa === sb && da > db);
}

function swap(d: Int32Array, s: Float64Array, i: number, j: number): void {
  const td = d[i]!;
  d[i] = d[j]!;
  d[j] = td;
  const ts = s[i]!;
  s[i] = s[j]!;
  s[j] = ts;
}

/** Hoare partition of [lo, hi] (inclusive) around the median of three; returns p with [lo, p] <= [p+1, hi]. */
function partition(d: Int32Array, s: Float64Array, lo: number, hi: number): number {
  const mid = (lo + hi) >>> 1;
  if (before(s[mid]!, d[mid]!, s[lo]!, d[lo]!)) swap(d, s, mid, lo);
  if (before(s[hi]!, d[hi]!, s[lo]!, d[lo]!)) swap(d, s, hi, lo);
  if (before(s[hi]!, d[hi]!, s[mid]!, d[mid]!)) swap(d, s, hi, mid);
  const ps = s[mid]!;
  const pd = d[mid]!;
  let i = lo - 1;
  let j = hi + 1;
  for (;;) {
    do i++;
    while (before(s[i]!, d[i]!, ps, pd));
    do j--;
    while (before(ps, pd, s[j]!, d[j]!));
    if (i >= j) return j;
    swap(d, s, i, j);
  }
}

function insertionSort(d: Int32Array, s: Float64Array, lo: number, hi: number): void {
  for (let i = lo + 1; i <= hi; i++) {
    const xd = d[i]!;
    const xs = s[i]!;
    let j = i - 1;
    while (j >= lo && before(xs, xd, s[j]!, d[j]!)) {
      d[j + 1] = d[j]!;
      s[j + 1] = s[j]!;
      j--;
    }
    d[j + 1] = xd;
    s[j + 1] = xs;
  }
}

/** Sorts entries [from, to) best first. */
export function sortRanked(d: Int32Array, s: Float64Array, from: number, to: number): void {
  let lo = from;
  let hi = to - 1;
  while (hi - lo > 16) {
    const p = partition(d, s, lo, hi);
    // Recurse into the smaller side, loop on the larger: stack depth O(log n).
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
 * Reorders [from, to) so that its best `k` entries occupy [from, from + k), in no particular order
 * (quickselect, expected O(n)). No-op when k >= to - from.
 */
export function selectBest(d: Int32Array, s: Float64Array, from: number, to: number, k: number): void {
  if (k <= 0 || k >= to - from) return;
  const target = from + k - 1;
  let lo = from;
  let hi = to - 1;
  while (hi - lo > 16) {
    const p = partition(d, s, lo, hi);
    if (target <= p) hi = p;
    else lo = p + 1;
  }
  insertionSort(d, s, lo, hi);
}

/** True when (sa, la) ranks strictly after (sb, lb). */
function after(sa: number, la: number, sb: number, lb: number): boolean {
  return sa < sb || (sa === sb && la < lb);
}

function siftDown(hs: Float64Array, hl: Int32Array, size: number, at: number): void {
  const s = hs[at]!;
  const l = hl[at]!;
  let i = at;
  for (;;) {
    let c = 2 * i + 1;
    if (c >= size) break;
    if (c + 1 < size && after(hs[c + 1]!, hl[c + 1]!, hs[c]!, hl[c]!)) c++;
    if (!after(hs[c]!, hl[c]!, s, l)) break;
    hs[i] = hs[c]!;
    hl[i] = hl[c]!;
    i = c;
  }
  hs[i] = s;
  hl[i] = l;
}

/**
 * Offers (s, l) to a bounded heap of capacity `k` whose root is its worst entry; returns the new size. Once
 * full, an entry that does not beat the root costs one comparison, so selecting the best k of n costs
 * O(n + k log k log(n/k)) in expectation, not a sort of all n.
 */
export function heapOffer(hs: Float64Array, hl: Int32Array, size: number, k: number, s: number, l: number): number {
  if (size < k) {
    let i = size;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!after(s, l, hs[p]!, hl[p]!)) break;
      hs[i] = hs[p]!;
      hl[i] = hl[p]!;
      i = p;
    }
    hs[i] = s;
    hl[i] = l;
    return size + 1;
  }
  if (after(hs[0]!, hl[0]!, s, l)) {
    hs[0] = s;
    hl[0] = l;
    siftDown(hs, hl, size, 0);
  }
  return size;
}

/** Replaces the worst entry of a full heap by (s, l), which the caller knows to rank before it. */
export function heapReplaceRoot(hs: Float64Array, hl: Int32Array, size: number, s: number, l: number): void {
  hs[0] = s;
  hl[0] = l;
  siftDown(hs, hl, size, 0);
}

/** Turns a heap built by {@link heapOffer} into a list sorted best first, in place. */
export function heapSortBestFirst(hs: Float64Array, hl: Int32Array, size: number): void {
  for (let end = size - 1; end > 0; end--) {
    const s = hs[end]!;
    const l = hl[end]!;
    hs[end] = hs[0]!;
    hl[end] = hl[0]!;
    hs[0] = s;
    hl[0] = l;
    siftDown(hs, hl, end, 0);
  }
}

/** Every how many scores {@link bestSorted} samples for its bucket range. */
const SAMPLE_STRIDE = 8;

/**
 * Scratch arrays of {@link bestSorted} for lists of up to `capacity` entries, allocated once per fusion and
 * reused by every query.
 */
export class BucketScratch {
  readonly bucketOf: Int32Array;
  /** Per bucket: its entry count, then where it ends among the selected entries. */
  readonly counts: Int32Array;
  constructor(readonly capacity: number) {
    this.bucketOf = new Int32Array(capacity);
    this.counts = new Int32Array(Math.max(capacity, 1));
  }
}

/**
 * Writes the best min(k, n) entries of scores[0, size) (entry l ranks by score descending, then l
 * descending; -Infinity marks an entry that is not a candidate) into outL/outS, best first, and returns
 * their number. The order is total, so the result is the one a full sort gives, whatever the algorithm; this
 * one is a bucket sort: bucket = floor((s - lo) · scale), monotone in s, so a higher bucket never holds a
 * worse entry; only buckets down to the one holding the k-th entry are scattered, and each is sorted in
 * place, with few entries per bucket as there are about as many buckets as entries. A quickselect of the
 * union followed by a sort of k entries cost several times more at k = 1,000 (docs/perf/fusion.md). Returns
 * -1, having written nothing, for scores it cannot bucket (NaN, an infinite range): the caller sorts them.
 */
export function bestSorted(scores: Float64Array, size: number, k: number, scratch: BucketScratch, outL: Int32Array, outS: Float64Array): number {
  // The range comes from a sample of the scores: bucket = clamp(floor((s - lo) · scale)) is monotone in s
  // whatever lo and scale are, so a rough range costs only a few larger buckets, never a wrong order.
  let lo = Infinity;
  let hi = -Infinity;
  for (let l = 0; l < size; l += SAMPLE_STRIDE) {
    const s = scores[l]!;
    if (s === -Infinity) continue;
    if (s < lo) lo = s;
    if (s > hi) hi = s;
  }
  // A sample of non-candidates only: one bucket, that is a comparison sort of the candidates.
  if (lo > hi) lo = hi = 0;
  const nb = size;
  const scale = hi > lo ? (nb - 1) / (hi - lo) : 0;
  if (!Number.isFinite(scale)) return -1;
  const { bucketOf, counts } = scratch;
  counts.fill(0, 0, nb);
  let n = 0;
  for (let l = 0; l < size; l++) {
    const s = scores[l]!;
    if (s === -Infinity) {
      bucketOf[l] = -1;
      continue;
    }
    const v = (s - lo) * scale;
    if (Number.isNaN(v)) return -1;
    const b = v <= 0 ? 0 : v < nb - 1 ? v | 0 : nb - 1;
    bucketOf[l] = b;
    counts[b]!++;
    n++;
  }
  if (n === 0) return 0;
  const keep = k < n ? k : n;
  // Buckets from the best down, until they hold `keep` entries; counts become each bucket's start.
  const low = bucketStarts(counts, nb, keep);
  for (let l = 0; l < size; l++) {
    const b = bucketOf[l]!;
    if (b < low) continue;
    const j = counts[b]!++;
    outL[j] = l;
    outS[j] = scores[l]!;
  }
  sortBuckets(outL, outS, counts, nb, low);
  return keep;
}

/**
 * Scratch of {@link bestOfSums}: the 1-in-8 sample of the scores and its histogram, and the candidates at or
 * above the sampled threshold with their buckets; sized for unions of up to `capacity` entries. Given a
 * memory, the arrays are views laid out from byte `at` as select-kernels.as.ts lays them out (candS, sampleS,
 * candL, candB, counts, sampleCounts; {@link thresholdScratchBytes} in all), so the TypeScript twin of that
 * kernel reads the same bytes; otherwise they are allocated apart.
 */
export class ThresholdScratch {
  readonly sampleS: Float64Array;
  readonly sampleCounts: Int32Array;
  readonly candL: Int32Array;
  readonly candS: Float64Array;
  readonly candB: Int32Array;
  readonly counts: Int32Array;
  constructor(
    readonly capacity: number,
    memory: ArrayBuffer = new ArrayBuffer(thresholdScratchBytes(capacity)),
    at = 0,
  ) {
    const c = Math.max(capacity, 1);
    const samples = Math.ceil(capacity / SAMPLE_STRIDE) + 1;
    this.candS = new Float64Array(memory, at, c);
    this.sampleS = new Float64Array(memory, at + 8 * c, samples);
    const ints = at + 8 * (c + samples);
    this.candL = new Int32Array(memory, ints, c);
    this.candB = new Int32Array(memory, ints + 4 * c, c);
    this.counts = new Int32Array(memory, ints + 8 * c, c);
    this.sampleCounts = new Int32Array(memory, ints + 12 * c, samples);
  }
}

/** The bytes a {@link ThresholdScratch} of `capacity` takes (a multiple of 8). */
export function thresholdScratchBytes(capacity: number): number {
  const c = Math.max(capacity, 1);
  const samples = Math.ceil(capacity / SAMPLE_STRIDE) + 1;
  return 8 * (c + samples) + 8 * Math.ceil((3 * c + samples) / 2);
}

/**
 * The score threshold of {@link bestOfSums}: a sample score with at least m samples at or above it, m such
 * that about 1.25 k + 64 entries of the whole list are expected at or above it; [threshold, sample maximum],
 * or undefined when the sample is too small for the estimate to save anything or holds NaN or an infinity.
 * The samples are bucketed over [min, max] (as many buckets as samples) and counted from the best bucket
 * down to the one that reaches m; the threshold is the least sample of those buckets, so it is at or below
 * the m-th best sample and no sample is ranked: a quickselect of the sample cost about a quarter of a
 * topK 100 fusion (docs/perf/fusion.md). A lower threshold only keeps a few more candidates.
 */
function sampledThreshold(acc: Float64Array, base: number, div: number, size: number, k: number, sc: ThresholdScratch): [number, number] | undefined {
  const m = Math.ceil((k * 1.25) / SAMPLE_STRIDE) + 8;
  const { sampleS, sampleCounts } = sc;
  let n = 0;
  let lo = Infinity;
  let hi = -Infinity;
  const divide = div !== 1;
  for (let l = 0; l < size; l += SAMPLE_STRIDE) {
    const raw = base + acc[l]!;
    const s = divide ? raw / div : raw;
    // NaN has no place in the order: the caller's general path handles it as it always did.
    if (Number.isNaN(s)) return undefined;
    sampleS[n++] = s;
    hi = Math.max(hi, s);
    lo = Math.min(lo, s);
  }
  if (m * 2 > n || !(Number.isFinite(lo) && Number.isFinite(hi))) return undefined;
  if (hi === lo) return [hi, hi];
  const top = n - 1;
  const scale = top / (hi - lo);
  // A range too narrow to divide by (subnormal): a bucket of NaN would break the order, so decline.
  if (!Number.isFinite(scale)) return undefined;
  sampleCounts.fill(0, 0, n);
  for (let j = 0; j < n; j++) {
    const v = (sampleS[j]! - lo) * scale;
    sampleCounts[v < top ? v | 0 : top]!++;
  }
  // n >= 2m samples, so the walk stops at a bucket >= 0.
  let b = top;
  for (let at = sampleCounts[b]!; at < m; ) at += sampleCounts[--b]!;
  // Every sample of bucket b or above has (s - lo) · scale >= b; one bucket's width below that edge is far
  // beyond any rounding of the two operations, so at least m samples lie at or above the threshold.
  return [b === 0 ? lo : lo + (b - 1) / scale, hi];
}

/**
 * Writes the best min(k, size) entries of a list whose every entry is a candidate, entry l scoring
 * (base + acc[l]) / div (div > 0; x / 1 is x exactly, so div 1 gives the plain sum), into outL/outS best first
 * (score descending, then l descending), and returns their number; -1, having written nothing, when the
 * scores resist it (NaN, infinities, a sampled threshold that kept fewer than k): the caller then takes its
 * general path, so the result is always the full sort's. One pass over the list: an entry below a threshold
 * sampled from the list costs one comparison of its raw sum (no division: the raw cut lies a relative 1e-9
 * below threshold · div, so an entry under it scores below the threshold however the division rounds);
 * the ~1.25 k kept are bucket-sorted as in {@link bestSorted}, into 3.75 k + 64 buckets (BUCKETS_PER_K). It replaces a pass writing every fused score
 * and two passes bucketing them (or the heap's seeding and scan) (docs/perf/fusion.md). It is the TypeScript
 * twin of the kernel of the same name in select-kernels.as.ts, which fuse runs (HARNESS_KERNELS picks).
 */
export function bestOfSums(
  acc: Float64Array,
  base: number,
  div: number,
  size: number,
  k: number,
  sc: ThresholdScratch,
  outL: Int32Array,
  outS: Float64Array,
): number {
  if (size === 0) return 0;
  const range = sampledThreshold(acc, base, div, size, k, sc);
  if (range === undefined) return -1;
  const [t, hi] = range;
  if (!(Number.isFinite(t) && Number.isFinite(hi))) return -1;
  const tt = t * div;
  const rawCut = tt - Math.abs(tt) * 1e-9 - div * 1e-290;
  const nb = Math.min(sc.capacity, Math.ceil(k * BUCKETS_PER_K) + 64);
  const scale = hi > t ? (nb - 1) / (hi - t) : 0;
  if (!Number.isFinite(scale)) return -1;
  const { candL, candS, candB, counts } = sc;
  const passed = compactAboveCut(acc, base, size, rawCut, candL);
  counts.fill(0, 0, nb);
  let n = 0;
  // x / 1 is x: rrf and combsum skip the division (a divide per entry, bit-identical either way).
  const divide = div !== 1;
  for (let j = 0; j < passed; j++) {
    const l = candL[j]!;
    const raw = base + acc[l]!;
    const s = divide ? raw / div : raw;
    if (s < t) continue;
    const v = (s - t) * scale;
    if (Number.isNaN(v)) return -1;
    const b = v < nb - 1 ? v | 0 : nb - 1;
    candL[n] = l;
    candS[n] = s;
    candB[n++] = b;
    counts[b]!++;
  }
  if (n < k && n < size) return -1;
  return placeBuckets(sc, n, nb, k < n ? k : n, outL, outS);
}

/**
 * Writes, in order, the local position of every entry whose raw sum base + acc[l] is not below `rawCut` (NaN
 * included, which the caller turns into a decline) to candL; returns their number. Branch-free: each
 * entry is written and the count advanced by the comparison's 0 or 1. About a quarter of the entries pass, in
 * no pattern a branch predictor learns, so the branching loop paid a misprediction per few entries and ran
 * about three times slower (docs/perf/fusion.md, issue 45).
 */
function compactAboveCut(acc: Float64Array, base: number, size: number, rawCut: number, candL: Int32Array): number {
  let n = 0;
  let l = 0;
  // Four entries an iteration, their comparisons first: they are independent, only the count is a chain.
  for (; l + 4 <= size; l += 4) {
    const c0 = 1 - Number(base + acc[l]! < rawCut);
    const c1 = 1 - Number(base + acc[l + 1]! < rawCut);
    const c2 = 1 - Number(base + acc[l + 2]! < rawCut);
    const c3 = 1 - Number(base + acc[l + 3]! < rawCut);
    candL[n] = l;
    n += c0;
    candL[n] = l + 1;
    n += c1;
    candL[n] = l + 2;
    n += c2;
    candL[n] = l + 3;
    n += c3;
  }
  for (; l < size; l++) {
    candL[n] = l;
    n += 1 - Number(base + acc[l]! < rawCut);
  }
  return n;
}

/** Scatters the candidates of the buckets down to the one holding the keep-th, best first, and sorts each. */
function placeBuckets(sc: ThresholdScratch, n: number, nb: number, keep: number, outL: Int32Array, outS: Float64Array): number {
  const { candL, candS, candB, counts } = sc;
  const low = bucketStarts(counts, nb, keep);
  for (let j = 0; j < n; j++) {
    const b = candB[j]!;
    if (b < low) continue;
    const i = counts[b]!++;
    outL[i] = candL[j]!;
    outS[i] = candS[j]!;
  }
  sortBuckets(outL, outS, counts, nb, low);
  return keep;
}

/**
 * Turns bucket counts (best bucket nb - 1) into start offsets, best first, down to the bucket `low` where
 * `keep` entries are reached, and returns `low`; worse buckets are not kept.
 */
function bucketStarts(counts: Int32Array, nb: number, keep: number): number {
  let at = 0;
  let low = nb - 1;
  for (; ; low--) {
    const c = counts[low]!;
    counts[low] = at;
    at += c;
    if (at >= keep) return low;
  }
}

/** Buckets larger than this are sorted on their own before the one insertion pass of {@link sortBuckets}. */
const SMALL_BUCKET = 16;

/**
 * Buckets per entry of the fused list in {@link bestOfSums}, plus 64: the candidates crowd the low end of the
 * range, and 3.75 an entry (against 1.25 before) halve the entries that arrive out of order in their bucket,
 * which the kernel's insertion pass pays a mispredicted branch for (docs/perf/fusion.md). The twin uses the
 * same count so that both sets decline (an infinite bucket scale) on the same lists.
 */
const BUCKETS_PER_K = 3.75;

/**
 * Sorts the scattered buckets, best first, in place: counts[b] is now bucket b's end, and the next better
 * bucket's end its start. Every bucket ranks wholly before the next, so once the few large ones are sorted on
 * their own, one insertion pass over all of them moves each entry only within its small bucket: linear in the
 * entries plus a handful of swaps, where a sort call per bucket (about one entry each) paid a call and its
 * set-up per bucket (docs/perf/fusion.md, issue 45). The last bucket, `low`, is sorted whole; only its best
 * `keep - start` are used.
 */
function sortBuckets(outL: Int32Array, outS: Float64Array, counts: Int32Array, nb: number, low: number): void {
  let start = 0;
  for (let b = nb - 1; b >= low; b--) {
    const end = counts[b]!;
    if (end - start > SMALL_BUCKET) sortRanked(outL, outS, start, end);
    start = end;
  }
  insertionSort(outL, outS, 0, start - 1);
}
