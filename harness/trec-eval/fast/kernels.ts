import { bpref, MIN_GEO_MEAN } from '../../metrics/kernels/ap.js';
import { setupGains, type DcgResult, type GainOverride, type GainTable } from '../../metrics/kernels/gain.js';
import { rbpPersistence, type TrecKernel, type TrecParams } from '../../metrics/measure.js';
import type { JudgedRanking } from '../../metrics/ranking.js';
import type { MeasureKernelSet } from '../kernel-set.js';
import { gainedRanks, type GainedRanks, gMeasureSparse, ndcgRelSparse, ndcgSparse, newGainedRanks, rbpSparse, rNdcgSparse } from './gain-sparse.js';
import {
  apAtFromPrefix,
  averagePrecisionFromPrefix,
  binaryGFromPrefix,
  interpolatedPrecisionFromPrefix,
  newRankPrefix,
  precisionFromPrefix,
  rankPrefix,
  recallFromPrefix,
  reciprocalRankFromPrefix,
  relativePrecisionFromPrefix,
  rPrecisionFromPrefix,
  rPrecisionMultFromPrefix,
  successFromPrefix,
  unjudgedFromPrefix,
  type RankPrefix,
} from './prefix.js';

/**
 * What the measures of one query share, each computed on first use and kept until the next query: the
 * running counts of one forward pass (prefix.ts), the gain table, nDCG's triple, Bpref, the
 * interpolated precisions (11pt_avg is their mean). Reusing a value gives the very double the measure's
 * own kernel computes; the per-measure kernels of harness/metrics/kernels stay the definitions (kernels.test.ts).
 */
class QueryMemo {
  level = 1;
  numDocsInColl = 0;
  private r: JudgedRanking | undefined;
  private readonly pre: RankPrefix = newRankPrefix();
  private preOk = false;
  private bprefValue = 0;
  private bprefOk = false;
  private gainPairs: readonly GainOverride[] | undefined;
  private gainTable: GainTable | undefined;
  private readonly nz: GainedRanks = newGainedRanks();
  private nzPairs: readonly GainOverride[] | undefined;
  private nzOk = false;
  private dcgPairs: readonly GainOverride[] | undefined;
  private dcg: DcgResult | undefined;
  private iprecRecalls: readonly number[] | undefined;
  private iprecValues = new Float64Array(16);

  begin(r: JudgedRanking, level: number, numDocsInColl: number): void {
    this.r = r;
    this.level = level;
    this.numDocsInColl = numDocsInColl;
    this.preOk = false;
    this.bprefOk = false;
    this.gainTable = undefined;
    this.nzOk = false;
    this.dcg = undefined;
    this.iprecRecalls = undefined;
  }

  prefix(): RankPrefix {
    if (!this.preOk) {
      rankPrefix(this.r!, this.level, this.pre);
      this.preOk = true;
    }
    return this.pre;
  }

  bpref(): number {
    if (!this.bprefOk) {
      this.bprefValue = bpref(this.r!, this.level);
      this.bprefOk = true;
    }
    return this.bprefValue;
  }

  /** The query's gain table for these overrides, built once per query and shared by the gain measures. */
  gains(pairs: readonly GainOverride[]): GainTable {
    if (pairs !== this.gainPairs || this.gainTable === undefined) {
      this.gainPairs = pairs;
      this.gainTable = setupGains(this.r!, pairs);
    }
    return this.gainTable;
  }

  /** The ranks whose gain (for these overrides) is not 0: what nDCG, nDCGRel, RnDCG, G and RBP walk (gain-sparse.ts). */
  gained(pairs: readonly GainOverride[]): GainedRanks {
    if (pairs !== this.nzPairs || !this.nzOk) {
      gainedRanks(this.r!, this.gains(pairs), this.nz);
      this.nzPairs = pairs;
      this.nzOk = true;
    }
    return this.nz;
  }

  ndcg(pairs: readonly GainOverride[]): DcgResult {
    if (pairs !== this.dcgPairs || this.dcg === undefined) {
      this.dcgPairs = pairs;
      this.dcg = ndcgSparse(this.gains(pairs), this.gained(pairs));
    }
    return this.dcg;
  }

  /** IPrec at `recalls` (interpolatedPrecisionAt, from the prefix, into a zeroed buffer), values [0, recalls.length). */
  iprec(recalls: readonly number[]): Float64Array {
    if (recalls !== this.iprecRecalls) {
      if (this.iprecValues.length < recalls.length) this.iprecValues = new Float64Array(recalls.length);
      this.iprecValues.fill(0, 0, recalls.length);
      interpolatedPrecisionFromPrefix(this.prefix(), this.r!.numRel, this.r!.numRelRet, recalls, this.iprecValues, 0);
      this.iprecRecalls = recalls;
    }
    return this.iprecValues;
  }
}

/**
 * 11ptAvg as elevenPointAverage (ap.ts) sums it: the interpolated precisions from the last recall point to
 * the first (points that are never reached add their 0), over the number of points.
 */
function elevenPointFromIprec(values: Float64Array, n: number): number {
  if (n === 0) return 0;
  let sum = 0.0;
  for (let j = n - 1; j >= 0; j--) sum += values[j]!;
  return sum / n;
}

type FastKernel = (r: JudgedRanking, c: QueryMemo, p: TrecParams, out: Float64Array, off: number) => void;

/**
 * The trec_eval measures whose values the memo shares, by trec_eval name; the rest keep their reference
 * kernels, which already walk the ranking once (or not at all: the counts).
 */
const FAST: Readonly<Record<string, FastKernel>> = {
  map: (r, c, _p, o, i) => void (o[i] = averagePrecisionFromPrefix(c.prefix(), r.numRel)),
  // logAveragePrecision (ap.ts) of the shared AP.
  gm_map: (r, c, _p, o, i) => void (o[i] = Math.log(Math.max(averagePrecisionFromPrefix(c.prefix(), r.numRel), MIN_GEO_MEAN))),
  Rprec: (r, c, _p, o, i) => void (o[i] = rPrecisionFromPrefix(c.prefix(), r.numRel)),
  bpref: (_r, c, _p, o, i) => void (o[i] = c.bpref()),
  recip_rank: (_r, c, _p, o, i) => void (o[i] = reciprocalRankFromPrefix(c.prefix())),
  iprec_at_recall: (_r, c, p, o, i) => o.set(c.iprec(p.numbers).subarray(0, p.numbers.length), i),
  P: (_r, c, p, o, i) => precisionFromPrefix(c.prefix(), p.numbers, o, i),
  recall: (r, c, p, o, i) => recallFromPrefix(c.prefix(), r.numRel, p.numbers, o, i),
  // logBpref (ap.ts) of the shared Bpref.
  gm_bpref: (_r, c, _p, o, i) => void (o[i] = Math.log(Math.max(c.bpref(), MIN_GEO_MEAN))),
  Rprec_mult: (r, c, p, o, i) => rPrecisionMultFromPrefix(c.prefix(), r.numRel, r.numRelRet, p.numbers, o, i),
  '11pt_avg': (_r, c, p, o, i) => void (o[i] = elevenPointFromIprec(c.iprec(p.numbers), p.numbers.length)),
  binG: (r, c, _p, o, i) => void (o[i] = binaryGFromPrefix(c.prefix(), r.numRel)),
  G: (r, c, p, o, i) => void (o[i] = gMeasureSparse(r, c.gains(p.pairs), c.gained(p.pairs))),
  dcg: (_r, c, p, o, i) => void (o[i] = c.ndcg(p.pairs).dcg),
  ideal_dcg: (_r, c, p, o, i) => void (o[i] = c.ndcg(p.pairs).idcg),
  ndcg: (_r, c, p, o, i) => void (o[i] = c.ndcg(p.pairs).ndcg),
  ndcg_rel: (_r, c, p, o, i) => void (o[i] = ndcgRelSparse(c.gains(p.pairs), c.gained(p.pairs))),
  Rndcg: (r, c, p, o, i) => void (o[i] = rNdcgSparse(r, c.gains(p.pairs), c.gained(p.pairs))),
  map_cut: (r, c, p, o, i) => apAtFromPrefix(c.prefix(), r.numRel, p.numbers, o, i),
  relative_P: (r, c, p, o, i) => relativePrecisionFromPrefix(c.prefix(), r.numRel, p.numbers, o, i),
  success: (_r, c, p, o, i) => successFromPrefix(c.prefix(), p.numbers, o, i),
  rbp: (r, c, p, o, i) => void (o[i] = rbpSparse(r, c.gains(p.pairs), c.gained(p.pairs), rbpPersistence(p.pairs))),
  unj: (_r, c, p, o, i) => unjudgedFromPrefix(c.prefix(), p.numbers, o, i),
};

// computeTrecRow runs one query to the end before the next starts (no await, no re-entry): one memo serves all.
const MEMO = new QueryMemo();

/**
 * The fast paths of `harness eval`: one forward pass per query shared by the cutoff and rank measures
 * (prefix.ts), the gain measures over the ranks with a gain (gain-sparse.ts), and a memo per query of what
 * several measures share, each value the very double its reference kernel computes (kernels.test.ts).
 */
export const FAST_KERNELS: MeasureKernelSet = {
  name: 'fast',
  begin(r, level, numDocsInColl) {
    MEMO.begin(r, level, numDocsInColl);
    return MEMO;
  },
  // A FastKernel is only ever called with the memo begin() returned.
  kernel: (trecName) => (Object.hasOwn(FAST, trecName) ? (FAST[trecName] as TrecKernel) : undefined),
};
