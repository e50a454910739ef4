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
