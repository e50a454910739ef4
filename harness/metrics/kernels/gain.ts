import type { JudgedRanking } from '../ranking.js';

/**
 * Graded-gain kernels: nDCG and its trec_eval variants, G, RBP. Gain convention (docs/adr/0003-ndcg-gain.md):
 * linear by default, gain(g) = g, as trec_eval; exponential gain(g) = 2^g − 1 (Burges et al., "Learning to
 * Rank using Gradient Descent", ICML 2005, doi:10.1145/1102351.1102363) only when asked for. Discount is
 * 1/log2(rank + 1). nDCG: Järvelin & Kekäläinen, "Cumulated Gain-Based Evaluation of IR Techniques",
 * ACM TOIS 20(4), 2002, doi:10.1145/582415.582418.
 */

/** Math.log2(i + 2) for i < 4096, the DCG discount of 0-based rank i, computed once: the same doubles as the call. */
const LOG2_RANK = Float64Array.from({ length: 4096 }, (_, i) => Math.log2(i + 2));

/**
 * log2(i + 2), the discount of 0-based rank i: from the table above for i < 4096 (the ranks of a usual ranking),
 * else Math.log2. The gain kernels take one per relevant rank and one per ideal rank; the call into V8's log2
 * costs more than the rest of such a step.
 */
export function log2Rank(i: number): number {
  return i < 4096 ? LOG2_RANK[i]! : Math.log2(i + 2);
}

/** One grade's gain and how many judged documents carry that grade (trec_eval REL_GAIN). */
export interface GainLevel {
  readonly level: number;
  readonly gain: number;
  readonly numAtLevel: number;
}

/** A query's gain table, sorted by increasing gain (trec_eval GAINS). */
export interface GainTable {
  readonly levels: readonly GainLevel[];
  /** gainOf for grades lutMin .. lutMin + lut.length - 1, precomputed (the kernels call it per rank). */
  readonly lut: Float64Array;
  readonly lutMin: number;
}

function withLut(levels: readonly GainLevel[]): GainTable {
  let lo = -2;
  let hi = 0;
  for (const l of levels) {
    if (l.level < lo) lo = l.level;
    if (l.level > hi) hi = l.level;
  }
  const lut = new Float64Array(hi - lo + 1);
  // First match wins, as trec_eval's linear get_gain: fill from the end so earlier entries overwrite.
  for (let i = levels.length - 1; i >= 0; i--) lut[levels[i]!.level - lo] = levels[i]!.gain;
  return { levels, lut, lutMin: lo };
}

/** A `grade=gain` override, as given on the command line (`ndcg.1=3,2=9`). Non-integer names are ignored. */
export interface GainOverride {
  readonly name: string;
  readonly value: number;
}

/**
 * trec_eval's setup_gains: every grade 0..numRelLevels−1 gets gain = grade unless overridden, overrides for
 * grades the qrels lack are kept with no documents, and the table is sorted by gain with trec_eval's
 * comparator (the difference truncated to an integer, so gains closer than 1 keep their input order).
 * `exponential` replaces the default gain g with 2^g − 1.
 */
export function setupGains(r: JudgedRanking, overrides: readonly GainOverride[] = [], exponential = false): GainTable {
  const levels: { level: number; gain: number; numAtLevel: number }[] = [];
  for (const o of overrides) {
    if (!/^[+-]?\d+$/.test(o.name)) continue;
    levels.push({ level: Number.parseInt(o.name, 10), gain: o.value, numAtLevel: 0 });
  }
  const numOverrides = levels.length;
  for (let g = 0; g < r.numRelLevels; g++) {
    let j = 0;
    while (j < numOverrides && levels[j]!.level !== g) j++;
    if (j < numOverrides) levels[j]!.numAtLevel = r.relLevels[g]!;
    else levels.push({ level: g, gain: exponential ? 2 ** g - 1 : g, numAtLevel: r.relLevels[g]! });
  }
  levels.sort((a, b) => Math.trunc(a.gain - b.gain));
  return withLut(levels);
}

/** The gain of a retrieved document's grade; 0 for grades not in the table (unjudged, not in the pool). */
export function gainOf(rel: number, t: GainTable): number {
  const k = rel - t.lutMin;
  if (k >= 0 && k < t.lut.length) return t.lut[k]!;
  const ls = t.levels;
  for (let i = 0; i < ls.length; i++) if (ls[i]!.level === rel) return ls[i]!.gain;
  return 0.0;
}

// The per-rank form of gainOf: the table's lookup array covers every grade a ranking holds.
function lutGain(rel: number, t: GainTable): number {
  const k = rel - t.lutMin;
  return k >= 0 && k < t.lut.length ? t.lut[k]! : gainOf(rel, t);
}

/** DCG, ideal DCG and nDCG of the whole ranking (trec_eval dcg / ideal_dcg / ndcg). */
export interface DcgResult {
  dcg: number;
  idcg: number;
  ndcg: number;
}

/**
 * nDCG = DCG / IDCG over the whole ranking: DCG = Σ_i gain(rel_i) / log2(i + 1), IDCG the same over the
 * judged documents sorted by gain, positive gains only. 0 when IDCG is 0.
 */
export function ndcg(r: JudgedRanking, t: GainTable): DcgResult {
  const ls = t.levels;
  let resultsDcg = 0.0;
  let idealDcg = 0.0;
  let cur = ls.length - 1;
  let idealGain = cur >= 0 ? ls[cur]!.gain : 0.0;
  let numAtLevel = 0;
  let i = 0;
  for (; i < r.numRet && idealGain > 0.0; i++) {
    const g = lutGain(r.rels[i]!, t);
    if (g !== 0) resultsDcg += g / log2Rank(i);
    numAtLevel++;
    while (cur >= 0 && numAtLevel > ls[cur]!.numAtLevel) {
      numAtLevel = 1;
      cur--;
      idealGain = cur >= 0 ? ls[cur]!.gain : 0.0;
    }
    if (idealGain > 0.0) idealDcg += idealGain / log2Rank(i);
  }
  for (; i < r.numRet; i++) {
    const g = lutGain(r.rels[i]!, t);
    if (g !== 0) resultsDcg += g / log2Rank(i);
  }
  while (idealGain > 0.0) {
    numAtLevel++;
    while (cur >= 0 && numAtLevel > ls[cur]!.numAtLevel) {
      numAtLevel = 1;
      cur--;
      idealGain = cur >= 0 ? ls[cur]!.gain : 0.0;
    }
    if (idealGain > 0.0) idealDcg += idealGain / log2Rank(i);
    i++;
  }
  return { dcg: resultsDcg, idcg: idealDcg, ndcg: idealDcg > 0.0 ? resultsDcg / idealDcg : 0 };
}

/**
 * nDCG@k for each cutoff k (ascending): DCG of the top k over the ideal DCG of the top k, gain(g) = g for
 * g > 0 (trec_eval ndcg_cut ignores gain overrides) or 2^g − 1 when `exponential`. Fills out[off + j].
 */
export function ndcgAt(r: JudgedRanking, cutoffs: ArrayLike<number>, out: Float64Array, off = 0, exponential = false): void {
  const rels = r.rels;
  const n = cutoffs.length;
  let c = 0;
  let sum = 0.0;
  let i = 0;
  for (; i < r.numRet; i++) {
    if (i === cutoffs[c]) {
      out[off + c] = sum;
      if (++c === n) break;
    }
    const g = rels[i]!;
    if (g > 0) sum += (exponential ? 2 ** g - 1 : g) / log2Rank(i);
  }
  for (; c < n; c++) out[off + c] = sum;
  c = 0;
  let curLvl = r.numRelLevels - 1;
  let lvlCount = 0;
  let idealDcg = 0.0;
  for (i = 0; ; i++) {
    lvlCount++;
    while (curLvl > 0 && lvlCount > r.relLevels[curLvl]!) {
      curLvl--;
      lvlCount = 1;
    }
    if (curLvl <= 0) break;
    if (i === cutoffs[c]) {
      if (idealDcg > 0.0) out[off + c] = out[off + c]! / idealDcg;
      if (++c === n) break;
    }
    idealDcg += (exponential ? 2 ** curLvl - 1 : curLvl) / log2Rank(i);
  }
  for (; c < n; c++) if (idealDcg > 0.0) out[off + c] = out[off + c]! / idealDcg;
}

/**
 * nDCGRel (trec_eval ndcg_rel, experimental): nDCG averaged over the ranks of the relevant documents
 * (gain > 0); relevant documents not retrieved contribute DCG(end) / IDCG.
 */
export function ndcgRel(r: JudgedRanking, t: GainTable): number {
  const ls = t.levels;
  let resultsDcg = 0.0;
  let idealDcg = 0.0;
  let sum = 0.0;
  let numRelRet = 0;
  let numRel = 0;
  let cur = ls.length - 1;
  let idealGain = cur >= 0 ? ls[cur]!.gain : 0.0;
  let numAtLevel = 0;
  let i = 0;
  for (; i < r.numRet && idealGain > 0.0; i++) {
    const g = lutGain(r.rels[i]!, t);
    if (g !== 0) resultsDcg += g / log2Rank(i);
    numAtLevel++;
    while (cur >= 0 && numAtLevel > ls[cur]!.numAtLevel) {
      numAtLevel = 1;
      cur--;
      idealGain = cur >= 0 ? ls[cur]!.gain : 0.0;
    }
    if (idealGain > 0.0) {
      numRel++;
      idealDcg += idealGain / log2Rank(i);
    }
    if (g > 0) {
      sum += resultsDcg / idealDcg;
      numRelRet++;
    }
  }
  for (; i < r.numRet; i++) {
    const g = lutGain(r.rels[i]!, t);
    if (g !== 0) resultsDcg += g / log2Rank(i);
    if (g > 0) {
      sum += resultsDcg / idealDcg;
      numRelRet++;
    }
  }
  while (idealGain > 0.0) {
    numAtLevel++;
    while (cur >= 0 && numAtLevel > ls[cur]!.numAtLevel) {
      numAtLevel = 1;
      cur--;
      idealGain = cur >= 0 ? ls[cur]!.gain : 0.0;
    }
    if (idealGain > 0.0) {
      numRel++;
      idealDcg += idealGain / log2Rank(i);
    }
    i++;
  }
  sum += ((numRel - numRelRet) * resultsDcg) / idealDcg;
  return sum > 0.0 ? sum / numRel : 0;
}

/**
 * RnDCG (trec_eval Rndcg, experimental): nDCG averaged at the ranks where the ideal gain changes level,
 * plus the end of the ranking. 0 for a query without relevant documents.
 */
export function rNdcg(r: JudgedRanking, t: GainTable): number {
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
  let i = 0;
  for (; i < r.numRet && idealGain > 0.0; i++) {
    const g = lutGain(r.rels[i]!, t);
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
    if (g !== 0) resultsDcg += g / log2Rank(i);
    if (idealGain > 0.0) idealDcg += idealGain / log2Rank(i);
  }
  if (i < r.numRet) {
    for (; i < r.numRet; i++) {
      const g = lutGain(r.rels[i]!, t);
      if (g !== 0) resultsDcg += g / log2Rank(i);
    }
    if (idealDcg > 0.0) {
      sum += resultsDcg / idealDcg;
      numChanged++;
    }
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
 * G (trec_eval G, experimental, 2008): Σ_d gain(d) / log2(2 + idealCost(i) − resultsGain(i)) normalised by
 * the total ideal gain, where idealCost accumulates max(idealGain, 1) per rank.
 */
export function gMeasure(r: JudgedRanking, t: GainTable): number {
  const ls = t.levels;
  let resultsG = 0.0;
  let sumResults = 0.0;
  let sumIdeal = 0.0;
  let sumCost = 0.0;
  let cur = ls.length - 1;
  let idealGain = cur >= 0 ? ls[cur]!.gain : 0.0;
  let numAtLevel = 0;
  const minCost = 1.0;
  let i = 0;
  for (; i < r.numRet && idealGain > 0.0; i++) {
    const g = lutGain(r.rels[i]!, t);
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
  for (; i < r.numRet; i++) {
    const g = lutGain(r.rels[i]!, t);
    sumResults += g;
    sumCost += minCost;
    if (g !== 0) resultsG += g / Math.log2(2 + sumCost - sumResults);
  }
  while (idealGain > 0.0) {
    numAtLevel++;
    while (cur >= 0 && numAtLevel > ls[cur]!.numAtLevel) {
      numAtLevel = 1;
      cur--;
      idealGain = cur >= 0 ? ls[cur]!.gain : 0.0;
    }
    if (idealGain > 0.0) sumIdeal += idealGain;
    i++;
  }
  return sumIdeal > 0.0 ? resultsG / sumIdeal : 0;
}

/**
 * RBP = (1 − p) Σ_i gain(rel_i) · p^(i−1) with gains rescaled to [0, 1] when any lies outside.
 * Moffat & Zobel, "Rank-Biased Precision for Measurement of Retrieval Effectiveness", ACM TOIS 27(1), 2008,
 * doi:10.1145/1416950.1416952. trec_eval reads its rescaling bounds from uninitialised variables; we start
 * them at 0, the value that reproduces its published outputs, so the bounds are min(0, gains), max(0, gains).
 */
export function rbp(r: JudgedRanking, t: GainTable, p = 0.9): number {
  let min = 0;
  let max = 0;
  for (const l of t.levels) {
    if (l.gain < min) min = l.gain;
    if (l.gain > max) max = l.gain;
  }
  const table: GainTable =
    min < 0 || max > 1 ? withLut(t.levels.map((l) => ({ level: l.level, gain: (l.gain - min) / (max - min), numAtLevel: l.numAtLevel }))) : t;
  let sum = 0.0;
  let curP = 1.0;
  for (let i = 0; i < r.numRet; i++) {
    const g = lutGain(r.rels[i]!, table);
    if (g !== 0) sum += g * curP;
    curP = curP * p;
  }
  return (1.0 - p) * sum;
}

/**
 * RBPResid: the RBP residual, the most RBP could rise if every unjudged retrieved document (no entry or a
 * negative grade) had gain 1, plus the tail past the ranking: p^n + (1 − p) Σ_{unjudged i} p^(i−1).
 * 0 when every retrieved document is judged.
 */
export function rbpResidual(r: JudgedRanking, p = 0.9): number {
  let unj = 0;
  let sum = 0.0;
  let curP = 1.0;
  for (let i = 0; i < r.numRet; i++) {
    if (r.rels[i]! < 0) {
      unj++;
      sum += curP;
    }
    curP = curP * p;
  }
  return unj ? curP + (1 - p) * sum : 0;
}

/**
 * trec_eval `relstring`: the grades of the first `len` retrieved documents as characters — the digit for
 * 0..9, '>' above 9, '-' not in the pool, '.' negative grade (in the pool, unjudged).
 */
export function relString(r: JudgedRanking, len = 10): string {
  const n = Math.max(0, Math.min(Math.trunc(len), r.numRet));
  let s = '';
  for (let i = 0; i < n; i++) {
    const g = r.rels[i]!;
    s += g > 9 ? '>' : g >= 0 ? String.fromCharCode(48 + g) : g === -1 ? '-' : g === -2 ? '.' : '<';
  }
  return s;
}
