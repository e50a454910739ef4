import { REL_NONPOOL, REL_UNJUDGED, type JudgedRanking } from '../../metrics/ranking.js';
import { log2Rank } from '../../metrics/kernels/gain.js';

/**
 * One forward pass over a judged ranking that keeps the running counts the cutoff measures share, so that
 * P@k, R@k, RelP@k, Success@k, AP@k, Unj@k, AP, RR, Rprec and RprecMult of one query are read off the
 * arrays in O(number of cutoffs), and IPrec and BinG walk the relevant ranks only, instead of one pass over
 * the ranking each (trec_eval all_trec walks each
 * ranking about 35 times). Every value is computed with the same operations, in the same order, as the
 * per-measure kernel it replaces (harness/metrics/kernels/cutoff.ts, ap.ts), so the results are the same doubles
 * bit for bit (pinned by kernels.test.ts on random rankings). Formulas and citations: see those kernels.
 */
export interface RankPrefix {
  /** relAt[i] = documents with grade >= level among the top i (i = 0 .. numRet). */
  relAt: Int32Array;
  /** unjAt[i] = documents without a qrels entry or with a negative grade among the top i. */
  unjAt: Int32Array;
  /** apSum[i] = Σ_{relevant at rank j <= i} relAt[j] / j, AP's running sum, added in rank order. */
  apSum: Float64Array;
  /** relPos[k] = 0-based rank of the (k+1)-th relevant document, k < relAt[numRet]. */
  relPos: Int32Array;
  /** 0-based rank of the first relevant document, -1 if none is retrieved. */
  firstRel: number;
  numRet: number;
}

/** An empty prefix whose arrays rankPrefix grows and reuses across queries. */
export function newRankPrefix(): RankPrefix {
  return { relAt: new Int32Array(1024), unjAt: new Int32Array(1024), apSum: new Float64Array(1024), relPos: new Int32Array(1024), firstRel: -1, numRet: 0 };
}

/** Fills `p` (growing its arrays when the ranking is longer than they are) for `r` at relevance `level`. */
export function rankPrefix(r: JudgedRanking, level: number, p: RankPrefix = newRankPrefix()): RankPrefix {
  const n = r.numRet;
  if (p.relAt.length < n + 1) {
    const size = Math.max(n + 1, 2 * p.relAt.length);
    p.relAt = new Int32Array(size);
    p.unjAt = new Int32Array(size);
    p.apSum = new Float64Array(size);
    p.relPos = new Int32Array(size);
  }
  const { relAt, unjAt, apSum, relPos } = p;
  const rels = r.rels;
  let rel = 0;
  let unj = 0;
  let sum = 0.0;
  let first = -1;
  relAt[0] = 0;
  unjAt[0] = 0;
  apSum[0] = 0.0;
  for (let i = 0; i < n; i++) {
    const g = rels[i]!;
    if (g >= level) {
      relPos[rel] = i;
      rel++;
      sum += rel / (i + 1);
      if (first < 0) first = i;
    }
    if (g === REL_NONPOOL || g === REL_UNJUDGED) unj++;
    relAt[i + 1] = rel;
    unjAt[i + 1] = unj;
    apSum[i + 1] = sum;
  }
  p.firstRel = first;
  p.numRet = n;
  return p;
}

/** Relevant documents in the top k: ranks past the end add none. */
function relIn(p: RankPrefix, k: number): number {
  return p.relAt[k < p.numRet ? k : p.numRet]!;
}

/** precisionAt (cutoff.ts) from the prefix. */
export function precisionFromPrefix(p: RankPrefix, cutoffs: ArrayLike<number>, out: Float64Array, off: number): void {
  for (let c = 0; c < cutoffs.length; c++) out[off + c] = relIn(p, cutoffs[c]!) / cutoffs[c]!;
}

/** recallAt (cutoff.ts) from the prefix; leaves out untouched (0) without relevant documents. */
export function recallFromPrefix(p: RankPrefix, numRel: number, cutoffs: ArrayLike<number>, out: Float64Array, off: number): void {
  if (numRel === 0) return;
  for (let c = 0; c < cutoffs.length; c++) out[off + c] = relIn(p, cutoffs[c]!) / numRel;
}

/** relativePrecisionAt (cutoff.ts) from the prefix; leaves out untouched (0) without relevant documents. */
export function relativePrecisionFromPrefix(p: RankPrefix, numRel: number, cutoffs: ArrayLike<number>, out: Float64Array, off: number): void {
  if (numRel === 0) return;
  for (let c = 0; c < cutoffs.length; c++) {
    const k = cutoffs[c]!;
    out[off + c] = relIn(p, k) / (k > numRel ? numRel : k);
  }
}

/** successAt (cutoff.ts) from the prefix. */
export function successFromPrefix(p: RankPrefix, cutoffs: ArrayLike<number>, out: Float64Array, off: number): void {
  for (let c = 0; c < cutoffs.length; c++) out[off + c] = relIn(p, cutoffs[c]!) > 0 ? 1.0 : 0.0;
}

/** apAt (cutoff.ts, trec_eval map_cut) from the prefix; leaves out untouched (0) without relevant documents. */
export function apAtFromPrefix(p: RankPrefix, numRel: number, cutoffs: ArrayLike<number>, out: Float64Array, off: number): void {
  if (numRel === 0) return;
  for (let c = 0; c < cutoffs.length; c++) {
    const k = cutoffs[c]!;
    out[off + c] = p.apSum[k < p.numRet ? k : p.numRet]! / numRel;
  }
}

/** unjudgedAt (cutoff.ts, trec_eval unj) from the prefix. */
export function unjudgedFromPrefix(p: RankPrefix, cutoffs: ArrayLike<number>, out: Float64Array, off: number): void {
  for (let c = 0; c < cutoffs.length; c++) {
    const k = cutoffs[c]!;
    out[off + c] = p.unjAt[k < p.numRet ? k : p.numRet]! / k;
  }
}

/** averagePrecision (ap.ts) from the prefix. */
export function averagePrecisionFromPrefix(p: RankPrefix, numRel: number): number {
  return p.relAt[p.numRet]! ? p.apSum[p.numRet]! / numRel : 0;
}

/** reciprocalRank (ap.ts) from the prefix. */
export function reciprocalRankFromPrefix(p: RankPrefix): number {
  return p.firstRel >= 0 ? 1.0 / (p.firstRel + 1) : 0;
}

/** rPrecision (ap.ts) from the prefix. */
export function rPrecisionFromPrefix(p: RankPrefix, numRel: number): number {
  const n = Math.min(p.numRet, numRel);
  if (n === 0) return 0;
  return p.relAt[n]! / numRel;
}

/**
 * rPrecisionMult (ap.ts) from the prefix: precision at ⌊m·R + 0.9⌋ for each multiple m; past the end of the
 * ranking |relevant retrieved| / cutoff. A cutoff of 0 (no relevant documents) keeps its 0; one above the
 * first relevant document, which the kernel's backward walk never reaches, computes the same 0 / k = +0.
 */
export function rPrecisionMultFromPrefix(p: RankPrefix, numRel: number, numRelRet: number, mults: ArrayLike<number>, out: Float64Array, off: number): void {
  for (let j = 0; j < mults.length; j++) {
    const k = Math.trunc(mults[j]! * numRel + 0.9);
    if (k > p.numRet) out[off + j] = numRelRet / k;
    else if (k > 0) out[off + j] = p.relAt[k]! / k;
  }
}

/**
 * interpolatedPrecisionAt (ap.ts) from the relevant ranks. The kernel walks every rank from the bottom,
 * keeping the highest precision seen; between two relevant documents the precision only falls as the rank
 * grows (same numerator, IEEE division is monotone), so the highest of such a stretch is the one at its
 * relevant document, and visiting the relevant ranks alone leaves every maximum the same double.
 */
export function interpolatedPrecisionFromPrefix(
  p: RankPrefix,
  numRel: number,
  numRelRet: number,
  recalls: ArrayLike<number>,
  out: Float64Array,
  off: number,
): void {
  const n = recalls.length;
  let cur = n - 1;
  while (cur >= 0 && lround(recalls[cur]! * numRel) > numRelRet) cur--;
  let intPrecis = numRelRet / p.numRet;
  const relPos = p.relPos;
  for (let relSoFar = numRelRet; relSoFar > 0; relSoFar--) {
    const precis = relSoFar / (relPos[relSoFar - 1]! + 1);
    if (intPrecis < precis) intPrecis = precis;
    while (cur >= 0 && relSoFar === lround(recalls[cur]! * numRel)) {
      out[off + cur] = intPrecis;
      cur--;
    }
  }
  while (cur >= 0) {
    out[off + cur] = intPrecis;
    cur--;
  }
}

/** C lround: nearest integer, halves away from zero (as ap.ts rounds the recall points). */
function lround(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

/** binaryG (ap.ts) from the relevant ranks. */
export function binaryGFromPrefix(p: RankPrefix, numRel: number): number {
  const n = p.relAt[p.numRet]!;
  let sum = 0.0;
  for (let k = 0; k < n; k++) sum += 1.0 / log2Rank(p.relPos[k]! - k);
  return n ? sum / numRel : 0;
}
