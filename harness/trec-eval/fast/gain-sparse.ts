import type { JudgedRanking } from '../../metrics/ranking.js';
import { type DcgResult, type GainTable, gainOf, log2Rank, rbp } from '../../metrics/kernels/gain.js';

/**
 * nDCG, nDCGRel and RnDCG (harness/metrics/kernels/gain.ts) over the ranks whose gain is not 0, listed once per query and gain
 * table: a ranking of 1,000 documents of which 30 carry a gain is walked 30 times per measure instead of
 * 1,000. The ideal ranking is walked rank by rank as before (it is as long as the positive judgments). Each
 * accumulator receives the same terms in the same order as in the rank-by-rank kernel, so the results are the
 * same doubles (pinned by kernels.test.ts on random rankings and gain tables). Formulas and citations: gain.ts.
 */
export interface GainedRanks {
  /** 0-based ranks whose gain is not 0, ascending. */
  pos: Int32Array;
  gain: Float64Array;
  n: number;
}

export function newGainedRanks(): GainedRanks {
  return { pos: new Int32Array(256), gain: new Float64Array(256), n: 0 };
}

/** Fills `into` with the ranks of `r` whose gain in `t` is not 0 (gainOf), growing its arrays when needed. */
export function gainedRanks(r: JudgedRanking, t: GainTable, into: GainedRanks = newGainedRanks()): GainedRanks {
  const rels = r.rels;
  const lut = t.lut;
  const lo = t.lutMin;
  let n = 0;
  for (let i = 0; i < r.numRet; i++) {
    const k = rels[i]! - lo;
    const g = k >= 0 && k < lut.length ? lut[k]! : gainOf(rels[i]!, t);
    if (g === 0) continue;
    if (n === into.pos.length) {
      const pos = new Int32Array(2 * n);
      const gain = new Float64Array(2 * n);
      pos.set(into.pos);
      gain.set(into.gain);
      into.pos = pos;
      into.gain = gain;
    }
    into.pos[n] = i;
    into.gain[n] = g;
    n++;
  }
  into.n = n;
  return into;
}

/** ndcg (gain.ts) from the gained ranks. */
export function ndcgSparse(t: GainTable, nz: GainedRanks): DcgResult {
  let resultsDcg = 0.0;
  for (let k = 0; k < nz.n; k++) resultsDcg += nz.gain[k]! / log2Rank(nz.pos[k]!);
  const ls = t.levels;
  let idealDcg = 0.0;
  let cur = ls.length - 1;
  let idealGain = cur >= 0 ? ls[cur]!.gain : 0.0;
  let numAtLevel = 0;
  for (let i = 0; idealGain > 0.0; i++) {
    numAtLevel++;
    while (cur >= 0 && numAtLevel > ls[cur]!.numAtLevel) {
      numAtLevel = 1;
      cur--;
      idealGain = cur >= 0 ? ls[cur]!.gain : 0.0;
    }
    if (idealGain > 0.0) idealDcg += idealGain / log2Rank(i);
  }
  return { dcg: resultsDcg, idcg: idealDcg, ndcg: idealDcg > 0.0 ? resultsDcg / idealDcg : 0 };
}

/** ndcgRel (gain.ts) from the gained ranks: the ideal walk is advanced to each gained rank before it is scored. */
export function ndcgRelSparse(t: GainTable, nz: GainedRanks): number {
  const ls = t.levels;
  let resultsDcg = 0.0;
  let idealDcg = 0.0;
  let sum = 0.0;
  let numRelRet = 0;
  let numRel = 0;
  let cur = ls.length - 1;
  let idealGain = cur >= 0 ? ls[cur]!.gain : 0.0;
  let numAtLevel = 0;
  let ii = 0;
  for (let k = 0; k < nz.n; k++) {
    const i = nz.pos[k]!;
    for (; ii <= i && idealGain > 0.0; ii++) {
      numAtLevel++;
      while (cur >= 0 && numAtLevel > ls[cur]!.numAtLevel) {
        numAtLevel = 1;
        cur--;
        idealGain = cur >= 0 ? ls[cur]!.gain : 0.0;
      }
      if (idealGain > 0.0) {
        numRel++;
        idealDcg += idealGain / log2Rank(ii);
      }
    }
    const g = nz.gain[k]!;
    resultsDcg += g / log2Rank(i);
    if (g > 0) {
      sum += resultsDcg / idealDcg;
      numRelRet++;
    }
  }
  for (; idealGain > 0.0; ii++) {
    numAtLevel++;
    while (cur >= 0 && numAtLevel > ls[cur]!.numAtLevel) {
      numAtLevel = 1;
      cur--;
      idealGain = cur >= 0 ? ls[cur]!.gain : 0.0;
    }
    if (idealGain > 0.0) {
      numRel++;
      idealDcg += idealGain / log2Rank(ii);
    }
  }
  sum += ((numRel - numRelRet) * resultsDcg) / idealDcg;
  return sum > 0.0 ? sum / numRel : 0;
}

/**
 * rNdcg (gain.ts) from the gained ranks: at each ideal rank i (within the ranking) the DCG of the ranks
 * above i is complete, so the gained ranks below i are added first; the rest after the walk.
 */
export function rNdcgSparse(r: JudgedRanking, t: GainTable, nz: GainedRanks): number {
  if (r.numRel === 0) return 0;
  const ls = t.levels;
  let resultsDcg = 0.0;
  let idealDcg = 0.0;
  let sum = 0.0;
  let numChanged = 0;
  let cur = ls.length - 1;
  let idealGain = cur >= 0 ? ls[cur]!.gain : 0.0;
  let oldIdealGain = idealGain;
  let numAtLevel = 0;
  let k = 0;
  let i = 0;
  for (; i < r.numRet && idealGain > 0.0; i++) {
    for (; k < nz.n && nz.pos[k]! < i; k++) resultsDcg += nz.gain[k]! / log2Rank(nz.pos[k]!);
    numAtLevel++;
    while (cur >= 0 && numAtLevel > ls[cur]!.numAtLevel) {
      numAtLevel = 1;
      cur--;
      idealGain = cur >= 0 ? ls[cur]!.gain : 0.0;
    }
    if (oldIdealGain !== idealGain) {
      if (idealDcg > 0.0) {
        sum += resultsDcg / idealDcg;
        numChanged++;
      }
      oldIdealGain = idealGain;
    }
    if (idealGain > 0.0) idealDcg += idealGain / log2Rank(i);
  }
  for (; k < nz.n; k++) resultsDcg += nz.gain[k]! / log2Rank(nz.pos[k]!);
  if (i < r.numRet && idealDcg > 0.0) {
    sum += resultsDcg / idealDcg;
    numChanged++;
  }
  while (idealGain > 0.0) {
    numAtLevel++;
    while (cur >= 0 && numAtLevel > ls[cur]!.numAtLevel) {
      numAtLevel = 1;
      cur--;
      idealGain = cur >= 0 ? ls[cur]!.gain : 0.0;
    }
    if (oldIdealGain !== idealGain) {
      if (idealDcg > 0.0) {
        sum += resultsDcg / idealDcg;
        numChanged++;
      }
      oldIdealGain = idealGain;
    }
    if (idealGain > 0.0) idealDcg += idealGain / log2Rank(i);
    i++;
  }
  return sum / numChanged;
}

/**
 * gMeasure (gain.ts) from the gained ranks. Past the ideal ranking every rank adds a cost of 1: when the
 * cost so far is an integer (it is with integer gains, trec_eval's default) each of those sums is exact, so
 * the cost at a later rank is computed directly and only the gained ranks are visited; otherwise rank by
 * rank, as the kernel does.
 */
export function gMeasureSparse(r: JudgedRanking, t: GainTable, nz: GainedRanks): number {
  const ls = t.levels;
  let resultsG = 0.0;
  let sumResults = 0.0;
  let sumIdeal = 0.0;
  let sumCost = 0.0;
  let cur = ls.length - 1;
  let idealGain = cur >= 0 ? ls[cur]!.gain : 0.0;
  let numAtLevel = 0;
  const minCost = 1.0;
  let k = 0;
  let i = 0;
  for (; i < r.numRet && idealGain > 0.0; i++) {
    let g = 0.0;
    if (k < nz.n && nz.pos[k] === i) g = nz.gain[k++]!;
    sumResults += g;
    numAtLevel++;
    while (cur >= 0 && numAtLevel > ls[cur]!.numAtLevel) {
      numAtLevel = 1;
      cur--;
      idealGain = cur >= 0 ? ls[cur]!.gain : 0.0;
    }
    if (idealGain > 0.0) sumIdeal += idealGain;
    sumCost += idealGain >= minCost ? idealGain : minCost;
    if (g !== 0) resultsG += g / Math.log2(2 + sumCost - sumResults);
  }
  if (Number.isInteger(sumCost) && sumCost + r.numRet < 2 ** 53) {
    // The cost after tail rank j is sumCost + (j - i + 1), every partial sum an exact integer.
    const base = sumCost + 1 - i;
    for (; k < nz.n; k++) {
      const g = nz.gain[k]!;
      sumResults += g;
      resultsG += g / Math.log2(2 + (base + nz.pos[k]!) - sumResults);
    }
  } else {
    for (; i < r.numRet; i++) {
      let g = 0.0;
      if (k < nz.n && nz.pos[k] === i) g = nz.gain[k++]!;
      sumResults += g;
      sumCost += minCost;
      if (g !== 0) resultsG += g / Math.log2(2 + sumCost - sumResults);
    }
  }
  while (idealGain > 0.0) {
    numAtLevel++;
    while (cur >= 0 && numAtLevel > ls[cur]!.numAtLevel) {
      numAtLevel = 1;
      cur--;
      idealGain = cur >= 0 ? ls[cur]!.gain : 0.0;
    }
    if (idealGain > 0.0) sumIdeal += idealGain;
  }
  return sumIdeal > 0.0 ? resultsG / sumIdeal : 0;
}

/** p^i for i = 0, 1, ...: the products of rbp's running curP = curP * p, kept for the last p asked for. */
let powP = Number.NaN;
let pow = new Float64Array(0);
let powLen = 0;

/** pow[0 .. n) for this p (n >= 1: p^0 is always there). */
function powers(p: number, want: number): Float64Array {
  const n = Math.max(want, 1);
  if (!Object.is(p, powP)) {
    powP = p;
    powLen = 0;
  }
  if (pow.length < n) {
    const next = new Float64Array(Math.max(n, 2 * pow.length, 1024));
    next.set(pow.subarray(0, powLen));
    pow = next;
  }
  if (powLen === 0) pow[powLen++] = 1.0;
  for (; powLen < n; powLen++) pow[powLen] = pow[powLen - 1]! * p;
  return pow;
}

/**
 * rbp (gain.ts) from the gained ranks. With no negative gain, the kernel's rescaling (g - 0) / (max - 0)
 * keeps 0 at 0, so the ranks it adds are the gained ranks, each with g / max (or g), times the same p^i the
 * kernel's running product reaches; with a negative gain every rank may count, and the kernel runs.
 */
export function rbpSparse(r: JudgedRanking, t: GainTable, nz: GainedRanks, p = 0.9): number {
  let min = 0;
  let max = 0;
  for (const l of t.levels) {
    if (l.gain < min) min = l.gain;
    if (l.gain > max) max = l.gain;
  }
  if (min < 0) return rbp(r, t, p);
  const scale = max > 1;
  const pw = powers(p, r.numRet);
  let sum = 0.0;
  for (let k = 0; k < nz.n; k++) {
    const g = scale ? (nz.gain[k]! - min) / (max - min) : nz.gain[k]!;
    if (g !== 0) sum += g * pw[nz.pos[k]!]!;
  }
  return (1.0 - p) * sum;
}
