import { REL_NONPOOL, REL_UNJUDGED, type JudgedRanking } from '../ranking.js';
import { log2Rank } from './gain.js';

/**
 * Average-precision family and other rank-position kernels, each trec_eval's per-query value. `level` is
 * the relevance level (grades >= level are relevant). Cite for AP, R-prec, interpolated precision:
 * C. Buckley and E. M. Voorhees, "Retrieval System Evaluation", TREC: Experiment and Evaluation in
 * Information Retrieval, MIT Press, 2005.
 */

/** Lower bound applied before taking logs for the geometric-mean measures (trec_eval MIN_GEO_MEAN). */
export const MIN_GEO_MEAN = 0.00001;
const INFAP_EPSILON = 0.00001;

/** AP = (1/|relevant|) Σ_{relevant d retrieved at rank i} P@i. 0 when no relevant document is retrieved. */
export function averagePrecision(r: JudgedRanking, level: number): number {
  const rels = r.rels;
  let relSoFar = 0;
  let sum = 0.0;
  for (let i = 0; i < r.numRet; i++) {
    if (rels[i]! >= level) {
      relSoFar++;
      sum += relSoFar / (i + 1);
    }
  }
  return relSoFar ? sum / r.numRel : 0;
}

/** ln(max(AP, 1e-5)): the per-query term of GMAP = exp(mean of these). Robertson, "On GMAP", CIKM 2006, doi:10.1145/1183614.1183630. */
export function logAveragePrecision(r: JudgedRanking, level: number): number {
  return Math.log(Math.max(averagePrecision(r, level), MIN_GEO_MEAN));
}

/** RR = 1 / rank of the first relevant document; 0 when none is retrieved. Voorhees, TREC-8 QA, 1999. */
export function reciprocalRank(r: JudgedRanking, level: number): number {
  const rels = r.rels;
  for (let i = 0; i < r.numRet; i++) if (rels[i]! >= level) return 1.0 / (i + 1);
  return 0;
}

/** Rprec = P@R with R = |relevant|: precision at the rank where precision equals recall. */
export function rPrecision(r: JudgedRanking, level: number): number {
  const n = Math.min(r.numRet, r.numRel);
  if (n === 0) return 0;
  let relSoFar = 0;
  for (let i = 0; i < n; i++) if (r.rels[i]! >= level) relSoFar++;
  return relSoFar / r.numRel;
}

/**
 * RprecMult@m: precision after ⌊m·R + 0.9⌋ documents, for each multiple m of R = |relevant| in `mults`
 * (ascending). Past the end of the ranking: |relevant retrieved| / cutoff. Fills out[off + j].
 */
export function rPrecisionMult(r: JudgedRanking, level: number, mults: ArrayLike<number>, out: Float64Array, off = 0): void {
  const n = mults.length;
  const cutoffs = new Float64Array(n);
  for (let j = 0; j < n; j++) cutoffs[j] = Math.trunc(mults[j]! * r.numRel + 0.9);
  let cur = n - 1;
  while (cur >= 0 && cutoffs[cur]! > r.numRet) {
    out[off + cur] = r.numRelRet / cutoffs[cur]!;
    cur--;
  }
  let relSoFar = r.numRelRet;
  for (let i = r.numRet; i > 0 && relSoFar > 0; i--) {
    const precis = relSoFar / i;
    while (cur >= 0 && i === cutoffs[cur]) {
      out[off + cur] = precis;
      cur--;
    }
    if (r.rels[i - 1]! >= level) relSoFar--;
  }
}

/**
 * IPrec@x: interpolated precision at recall x, max_{rank j >= rank where recall reaches x} P@j, with the
 * recall point taken as round(x·R) relevant documents (trec_eval ≥ 10 rounds; 9 and earlier added 0.9 and
 * truncated). `recalls` ascending; fills out[off + j].
 */
export function interpolatedPrecisionAt(r: JudgedRanking, level: number, recalls: ArrayLike<number>, out: Float64Array, off = 0): void {
  const n = recalls.length;
  const cutoffs = new Float64Array(n);
  for (let j = 0; j < n; j++) cutoffs[j] = lround(recalls[j]! * r.numRel);
  let cur = n - 1;
  while (cur >= 0 && cutoffs[cur]! > r.numRelRet) cur--;
  let intPrecis = r.numRelRet / r.numRet;
  let relSoFar = r.numRelRet;
  for (let i = r.numRet; i > 0 && relSoFar > 0; i--) {
    const precis = relSoFar / i;
    if (intPrecis < precis) intPrecis = precis;
    if (r.rels[i - 1]! >= level) {
      while (cur >= 0 && relSoFar === cutoffs[cur]) {
        out[off + cur] = intPrecis;
        cur--;
      }
      relSoFar--;
    }
  }
  while (cur >= 0) {
    out[off + cur] = intPrecis;
    cur--;
  }
}

/** 11ptAvg: the mean of IPrec@x over the recall points `recalls` (default 0, 0.1, ..., 1), in trec_eval's order of summation. */
export function elevenPointAverage(r: JudgedRanking, level: number, recalls: ArrayLike<number>): number {
  const n = recalls.length;
  if (n === 0) return 0;
  const cutoffs = new Float64Array(n);
  for (let j = 0; j < n; j++) cutoffs[j] = lround(recalls[j]! * r.numRel);
  let cur = n - 1;
  while (cur >= 0 && cutoffs[cur]! > r.numRelRet) cur--;
  let intPrecis = r.numRelRet / r.numRet;
  let relSoFar = r.numRelRet;
  let sum = 0.0;
  for (let i = r.numRet; i > 0 && relSoFar > 0; i--) {
    const precis = relSoFar / i;
    if (intPrecis < precis) intPrecis = precis;
    if (r.rels[i - 1]! >= level) {
      while (cur >= 0 && relSoFar === cutoffs[cur]) {
        sum += intPrecis;
        cur--;
      }
      relSoFar--;
    }
  }
  while (cur >= 0) {
    sum += intPrecis;
    cur--;
  }
  return sum / n;
}

/** C lround: nearest integer, halves away from zero. */
function lround(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

/**
 * Bpref = (1/R) Σ_{judged relevant d retrieved} (1 − min(n_d, R) / min(N, R)), n_d = judged non-relevant
 * documents ranked above d, N = judged non-relevant documents of the query, R = |relevant|. Documents
 * without a judgment are skipped. Buckley & Voorhees, "Retrieval Evaluation with Incomplete Information",
 * SIGIR 2004, doi:10.1145/1008992.1009000.
 */
export function bpref(r: JudgedRanking, level: number): number {
  let numNonrel = 0;
  for (let j = 0; j < level; j++) numNonrel += r.relLevels[j] ?? 0;
  const rels = r.rels;
  let nonrelSoFar = 0;
  let sum = 0.0;
  for (let j = 0; j < r.numRet; j++) {
    const g = rels[j]!;
    if (g === REL_NONPOOL || g === REL_UNJUDGED) continue;
    if (g >= 0 && g < level) nonrelSoFar++;
    else if (nonrelSoFar > 0) sum += 1.0 - Math.min(nonrelSoFar, r.numRel) / Math.min(numNonrel, r.numRel);
    else sum += 1.0;
  }
  if (r.numRel) sum /= r.numRel;
  return sum;
}

/** ln(max(Bpref, 1e-5)): the per-query term of the geometric-mean GMBpref. */
export function logBpref(r: JudgedRanking, level: number): number {
  return Math.log(Math.max(bpref(r, level), MIN_GEO_MEAN));
}

/**
 * infAP, inferred AP for sampled pools: documents without a qrels entry count as non-relevant, documents
 * with a negative grade (in the pool, not sampled for judging) are left out of the precision estimate.
 * Yilmaz & Aslam, "Estimating Average Precision with Incomplete and Imperfect Judgments", CIKM 2006,
 * doi:10.1145/1183614.1183633.
 */
export function inferredAp(r: JudgedRanking, level: number): number {
  const rels = r.rels;
  let nonrelSoFar = 0;
  let relSoFar = 0;
  let unjSoFar = 0;
  let infAp = 0.0;
  for (let j = 0; j < r.numRet; j++) {
    const g = rels[j]!;
    if (g === REL_NONPOOL) continue;
    if (g === REL_UNJUDGED) {
      unjSoFar++;
      continue;
    }
    if (g >= 0 && g < level) {
      nonrelSoFar++;
    } else {
      relSoFar++;
      if (j === 0) infAp += 1.0;
      else {
        const fj = j;
        infAp +=
          1.0 / (fj + 1.0) +
          (fj / (fj + 1.0)) *
            ((relSoFar - 1 + nonrelSoFar + unjSoFar) / fj) *
            ((relSoFar - 1 + INFAP_EPSILON) / (relSoFar - 1 + nonrelSoFar + 2 * INFAP_EPSILON));
      }
    }
  }
  if (r.numRel) infAp /= r.numRel;
  return infAp;
}

/**
 * BinG = (1/R) Σ_{relevant d retrieved} 1 / log2(2 + non-relevant documents ranked above d): binary-gain
 * version of trec_eval's experimental G measure.
 */
export function binaryG(r: JudgedRanking, level: number): number {
  const rels = r.rels;
  let relSoFar = 0;
  let sum = 0.0;
  for (let i = 0; i < r.numRet; i++) {
    if (rels[i]! >= level) {
      relSoFar++;
      sum += 1.0 / log2Rank(1 + i - relSoFar);
    }
  }
  return relSoFar ? sum / r.numRel : 0;
}
