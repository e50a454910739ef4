import { closest } from '../util/suggest.js';
import { UsageError } from '../errors.js';
import {
  averagePrecision,
  bpref,
  binaryG,
  elevenPointAverage,
  inferredAp,
  interpolatedPrecisionAt,
  logAveragePrecision,
  logBpref,
  reciprocalRank,
  rPrecision,
  rPrecisionMult,
} from './kernels/ap.js';
import { allRelevantAt, apAt, judgedAt, precisionAt, recallAt, relativePrecisionAt, successAt, unjudgedAt } from './kernels/cutoff.js';
import { gMeasure, ndcg, ndcgAt, ndcgRel, rbp, rbpResidual, rNdcg, setupGains, type GainOverride } from './kernels/gain.js';
import { numNonrelJudgedRet, numRel, numRelRet, numRet, setAp, setF, setP, setRecall, setRelP, utility } from './kernels/set.js';
import { longMemEvalNdcgAt, longMemEvalTurnToSessionAt } from './kernels/longmemeval.js';
import type { JudgedRanking } from './ranking.js';

/**
 * A Measure: an immutable value with one canonical spelling, `Name(param=value,...)@cutoff`, following
 * ir_measures / Anserini (`nDCG@10`, `R@100`, `P(rel=2)@5`, `RR`, `AP`, `Judged@10`, `R-all@10`).
 * Parameters at their default are left out of the canonical form, and parameters print in a fixed order,
 * so two spellings of the same measure format to the same string. That string is the identity: CSV
 * column, cache-key fragment, map key of evaluate().
 */
export interface Measure {
  readonly name: string;
  /** The `@k` cutoff (a rank, or a recall level for IPrec / a multiple of R for RprecMult). */
  readonly cutoff?: number;
  /** Non-default parameters only. `gains` maps a grade to its gain. */
  readonly params: Readonly<{
    rel?: number;
    gain?: 'exp';
    p?: number;
    x?: number;
    a?: number;
    b?: number;
    c?: number;
    d?: number;
    gains?: Readonly<Record<string, number>>;
  }>;
}

type ParamName = 'rel' | 'gain' | 'p' | 'x' | 'a' | 'b' | 'c' | 'd' | 'gains';
type CutoffKind = 'none' | 'rank' | 'optionalRank' | 'fraction';

interface Family {
  readonly cutoff: CutoffKind;
  readonly params: readonly ParamName[];
  readonly describe: string;
  /** A coverage diagnostic (how much of a ranking was judged), which says nothing about quality: never tested. */
  readonly coverage?: true;
  /** Reads the turns' sessions (`JudgedRanking.turnSessions`): LongMemEval's turn-to-session measures. */
  readonly turnSessions?: true;
  /** An Answer measure: its per-question value comes from the answer stage, never from a ranking. */
  readonly answer?: true;
  /** The per-query value; `level` is the resolved relevance level. */
  readonly compute: (r: JudgedRanking, m: Measure, level: number, scratch: Float64Array) => number;
  /** The family's measures as trec_eval computes and prints them; none when trec_eval has no equivalent. */
  readonly trec?: readonly TrecEvalMeasure[];
}

/** How trec_eval reads a measure's parameters (`-m name.params`) and names its values (m_*.c). */
export type TrecParamKind = 'count' | 'single' | 'cutLong' | 'cutDouble' | 'doubleParams' | 'pairParams';

/** trec_eval's nicknames for groups of measures, in the order its help lists them; `official` is the default. */
export const TREC_NICKNAMES = ['official', 'set', 'all_trec'] as const;
export type TrecNickname = (typeof TREC_NICKNAMES)[number];

/** What a trec_eval kernel reads besides the ranking: the relevance level (-l) and the collection size (-N). */
export interface TrecQuery {
  readonly level: number;
  readonly numDocsInColl: number;
}

/** A trec_eval measure's parameters: cutoffs, recall points or coefficients, or `name=value` pairs (gains, `p`). */
export interface TrecParams {
  readonly numbers: readonly number[];
  readonly pairs: readonly GainOverride[];
}

/** Computes one query's values of a trec_eval measure into out[off ..] (zeroed by the caller). */
export type TrecKernel = (r: JudgedRanking, q: TrecQuery, p: TrecParams, out: Float64Array, off: number) => void;

/**
 * One measure as trec_eval computes and prints it: what `harness eval` reproduces (usnistgov/trec_eval 10.0,
 * measures.c and m_*.c). A family may have several (AP: map, map_cut, gm_map).
 */
export interface TrecEvalMeasure {
  /** trec_eval's name: the `-m` argument and the stem of its value names (`P` prints `P_5`, `P_10`, ...). */
  readonly name: string;
  /** Its index in trec_eval's measure table (te_trec_measures), which is the order trec_eval prints in. */
  readonly order: number;
  readonly kind: TrecParamKind;
  /** Averaged as a geometric mean (gm_map, gm_bpref): the per-query value is a log, which trec_eval does not print. */
  readonly geometric?: true;
  /** The parameters when `-m` gives none: cutoffs, recall points, coefficients. */
  readonly defaults?: readonly number[];
  /** The nicknames that include it. */
  readonly nicknames: readonly TrecNickname[];
  /** The name of its values in canonical output when they are no Measure of the family (GMAP for gm_map). */
  readonly canonical?: string;
  /** The reference kernel: this family's kernels (kernels/*.ts), called as trec_eval calls its own. */
  readonly compute: TrecKernel;
}

const DEFAULTS: Readonly<Record<string, number>> = { p: 0.9, x: 1, a: 1, b: -1, c: 0, d: 0 };
const RECALLS = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0];
/** trec_eval's default cutoffs of P, recall, ndcg_cut, map_cut and relative_P. */
const CUTOFFS = [5, 10, 15, 20, 30, 100, 200, 500, 1000];
const R_MULTS = [0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0];
const UTILITY = [1.0, -1.0, 0.0, 0.0];

const EVERY: readonly TrecNickname[] = TREC_NICKNAMES;
const OFFICIAL: readonly TrecNickname[] = ['official', 'all_trec'];
const SET: readonly TrecNickname[] = ['set', 'all_trec'];
const ALL_TREC: readonly TrecNickname[] = ['all_trec'];

/** trec_eval's persistence `p` among a measure's `name=value` pairs (rbp.p=0.8), 0.9 without one. */
export function rbpPersistence(pairs: readonly GainOverride[]): number {
  let p = 0.9;
  for (const q of pairs) if (q.name === 'p') p = q.value;
  return p;
}

function cut(f: (r: JudgedRanking, level: number, k: readonly number[], out: Float64Array, off: number) => void) {
  return (r: JudgedRanking, m: Measure, level: number, s: Float64Array): number => {
    s[0] = 0;
    f(r, level, [m.cutoff!], s, 0);
    return s[0]!;
  };
}

function gainOverrides(m: Measure): GainOverride[] {
  return Object.entries(m.params.gains ?? {}).map(([name, value]) => ({ name, value }));
}

/**
 * The Answer measures: per-question values of an answer, not of a ranking. `Acc` is the answer judge's 0/1
 * grade; the lexical three compare the answer's text with the gold (answer-text.ts). The two F1s are different
 * numbers under the same name elsewhere (LoCoMo's stemmed multiset F1, mem0's token-set F1), so neither is
 * plain `F1` (docs/adr/0046-answer-measures-and-stemmer.md).
 */
export const ANSWER_MEASURE_NAMES = ['Acc', 'F1-LoCoMo', 'F1-set', 'EM'] as const;
export type AnswerMeasureName = (typeof ANSWER_MEASURE_NAMES)[number];

/** An Answer measure's kernel: reached only when something asks a ranking for it, which is a mistake to name. */
function fromAnswerStage(_r: JudgedRanking, m: Measure): number {
  throw new UsageError(`${formatMeasure(m)} is an answer measure: its value per question comes from the answer stage, not from a ranking`, {
    hint: 'score it with `harness ablate` and an `answer:` block in the config (a reader, and a judge for Acc)',
  });
}

/** Every measure family, by canonical name. trec_eval names in the descriptions. */
const FAMILIES: Readonly<Record<string, Family>> = {
  AP: {
    cutoff: 'optionalRank',
    params: ['rel'],
    describe: 'average precision (trec_eval map; AP@k = map_cut.k)',
    compute: (r, m, l, s) => (m.cutoff === undefined ? averagePrecision(r, l) : cut(apAt)(r, m, l, s)),
    trec: [
      { name: 'map', order: 5, kind: 'single', nicknames: OFFICIAL, compute: (r, q, _p, o, i) => void (o[i] = averagePrecision(r, q.level)) },
      {
        name: 'gm_map',
        order: 6,
        kind: 'single',
        geometric: true,
        nicknames: OFFICIAL,
        canonical: 'GMAP',
        compute: (r, q, _p, o, i) => void (o[i] = logAveragePrecision(r, q.level)),
      },
      { name: 'map_cut', order: 27, kind: 'cutLong', defaults: CUTOFFS, nicknames: ALL_TREC, compute: (r, q, p, o, i) => apAt(r, q.level, p.numbers, o, i) },
    ],
  },
  RR: {
    cutoff: 'optionalRank',
    params: ['rel'],
    describe: 'reciprocal rank of the first relevant document (recip_rank); RR@k counts only the top k',
    compute: (r, m, l) => {
      const v = reciprocalRank(r, l);
      return m.cutoff !== undefined && v > 0 && 1 / v > m.cutoff ? 0 : v;
    },
    trec: [{ name: 'recip_rank', order: 9, kind: 'single', nicknames: OFFICIAL, compute: (r, q, _p, o, i) => void (o[i] = reciprocalRank(r, q.level)) }],
  },
  P: {
    cutoff: 'rank',
    params: ['rel'],
    describe: 'precision at k (P.k)',
    compute: cut(precisionAt),
    trec: [
      { name: 'P', order: 11, kind: 'cutLong', defaults: CUTOFFS, nicknames: OFFICIAL, compute: (r, q, p, o, i) => precisionAt(r, q.level, p.numbers, o, i) },
    ],
  },
  R: {
    cutoff: 'rank',
    params: ['rel'],
    describe: 'recall at k (recall.k)',
    compute: cut(recallAt),
    trec: [
      { name: 'recall', order: 13, kind: 'cutLong', defaults: CUTOFFS, nicknames: ALL_TREC, compute: (r, q, p, o, i) => recallAt(r, q.level, p.numbers, o, i) },
    ],
  },
  'R-all': { cutoff: 'rank', params: ['rel'], describe: '1 if every relevant document is in the top k, else 0', compute: cut(allRelevantAt) },
  Judged: {
    cutoff: 'rank',
    params: [],
    describe: 'fraction of the top k with a qrels entry',
    coverage: true,
    compute: cut((r, _l, k, o, off) => judgedAt(r, k, o, off)),
  },
  Unj: {
    cutoff: 'rank',
    params: [],
    describe: 'fraction of the top k unjudged, past-the-end counted judged (unj.k)',
    compute: cut((r, _l, k, o, off) => unjudgedAt(r, k, o, off)),
    trec: [
      { name: 'unj', order: 38, kind: 'cutLong', defaults: [5, 10, 20], nicknames: ALL_TREC, compute: (r, _q, p, o, i) => unjudgedAt(r, p.numbers, o, i) },
    ],
  },
  Success: {
    cutoff: 'rank',
    params: ['rel'],
    describe: '1 if a relevant document is in the top k (success.k)',
    compute: cut(successAt),
    trec: [
      {
        name: 'success',
        order: 29,
        kind: 'cutLong',
        defaults: [1, 5, 10],
        nicknames: ALL_TREC,
        compute: (r, q, p, o, i) => successAt(r, q.level, p.numbers, o, i),
      },
    ],
  },
  RelP: {
    cutoff: 'rank',
    params: ['rel'],
    describe: 'relative precision at k (relative_P.k)',
    compute: cut(relativePrecisionAt),
    trec: [
      {
        name: 'relative_P',
        order: 28,
        kind: 'cutLong',
        defaults: CUTOFFS,
        nicknames: ALL_TREC,
        compute: (r, q, p, o, i) => relativePrecisionAt(r, q.level, p.numbers, o, i),
      },
    ],
  },
  nDCG: {
    cutoff: 'optionalRank',
    params: ['gain', 'gains'],
    describe: 'normalised DCG, linear gain (ndcg, ndcg_cut.k); gain=exp for 2^g-1',
    compute: (r, m, _l, s) => {
      const exp = m.params.gain === 'exp';
      if (m.cutoff !== undefined && m.params.gains === undefined) {
        s[0] = 0;
        ndcgAt(r, [m.cutoff], s, 0, exp);
        return s[0]!;
      }
      const t = setupGains(r, gainOverrides(m), exp);
      if (m.cutoff === undefined) return ndcg(r, t).ndcg;
      throw new UsageError(`${formatMeasure(m)}: gains={...} cannot be combined with a cutoff (trec_eval ndcg_cut has no gain table)`);
    },
    trec: [
      { name: 'ndcg', order: 23, kind: 'pairParams', nicknames: ALL_TREC, compute: (r, _q, p, o, i) => void (o[i] = ndcg(r, setupGains(r, p.pairs)).ndcg) },
      { name: 'ndcg_cut', order: 26, kind: 'cutLong', defaults: CUTOFFS, nicknames: ALL_TREC, compute: (r, _q, p, o, i) => ndcgAt(r, p.numbers, o, i) },
    ],
  },
  'nDCG-LME': {
    cutoff: 'rank',
    params: ['rel'],
    describe: "LongMemEval's ndcg_any@k: binary gains, ranks 1 and 2 undiscounted; only to compare with published LongMemEval numbers",
    compute: (r, m, l) => longMemEvalNdcgAt(r, l, m.cutoff!),
  },
  // LongMemEval's turn-to-session numbers (evaluate_retrieval_turn2session): what their script prints at session
  // level for a turn-level run, which `unit: session` cannot give (docs/adr/0007-locomo-strata.md, addendum).
  'Success-T2S': {
    cutoff: 'rank',
    params: ['rel'],
    describe: "LongMemEval's recall_any@k turn to session: a turn ranking mapped to sessions as their turn mode does, k widened to k sessions",
    turnSessions: true,
    compute: (r, m, l) => longMemEvalTurnToSessionAt(r, l, m.cutoff!).recallAny,
  },
  'R-all-T2S': {
    cutoff: 'rank',
    params: ['rel'],
    describe: "LongMemEval's recall_all@k turn to session (0, not their 1, for a query with nothing relevant, as R-all)",
    turnSessions: true,
    compute: (r, m, l) => (r.numRel === 0 ? 0 : longMemEvalTurnToSessionAt(r, l, m.cutoff!).recallAll),
  },
  'nDCG-LME-T2S': {
    cutoff: 'rank',
    params: ['rel'],
    describe: "LongMemEval's ndcg_any@k turn to session: their DCG over the widened turn list, one gain per relevant turn",
    turnSessions: true,
    compute: (r, m, l) => longMemEvalTurnToSessionAt(r, l, m.cutoff!).ndcgAny,
  },
  DCG: {
    cutoff: 'none',
    params: ['gain', 'gains'],
    describe: 'discounted cumulative gain (dcg)',
    compute: (r, m) => ndcg(r, setupGains(r, gainOverrides(m), m.params.gain === 'exp')).dcg,
    trec: [{ name: 'dcg', order: 21, kind: 'pairParams', nicknames: [], compute: (r, _q, p, o, i) => void (o[i] = ndcg(r, setupGains(r, p.pairs)).dcg) }],
  },
  IDCG: {
    cutoff: 'none',
    params: ['gain', 'gains'],
    describe: 'ideal DCG (ideal_dcg)',
    compute: (r, m) => ndcg(r, setupGains(r, gainOverrides(m), m.params.gain === 'exp')).idcg,
    trec: [
      { name: 'ideal_dcg', order: 22, kind: 'pairParams', nicknames: [], compute: (r, _q, p, o, i) => void (o[i] = ndcg(r, setupGains(r, p.pairs)).idcg) },
    ],
  },
  nDCGRel: {
    cutoff: 'none',
    params: ['gains'],
    describe: 'nDCG averaged over relevant documents (ndcg_rel)',
    compute: (r, m) => ndcgRel(r, setupGains(r, gainOverrides(m))),
    trec: [
      { name: 'ndcg_rel', order: 24, kind: 'pairParams', nicknames: ALL_TREC, compute: (r, _q, p, o, i) => void (o[i] = ndcgRel(r, setupGains(r, p.pairs))) },
    ],
  },
  RnDCG: {
    cutoff: 'none',
    params: ['gains'],
    describe: 'nDCG averaged at R levels (Rndcg)',
    compute: (r, m) => rNdcg(r, setupGains(r, gainOverrides(m))),
    trec: [{ name: 'Rndcg', order: 25, kind: 'pairParams', nicknames: ALL_TREC, compute: (r, _q, p, o, i) => void (o[i] = rNdcg(r, setupGains(r, p.pairs))) }],
  },
  G: {
    cutoff: 'none',
    params: ['gains'],
    describe: 'trec_eval G',
    compute: (r, m) => gMeasure(r, setupGains(r, gainOverrides(m))),
    trec: [{ name: 'G', order: 20, kind: 'pairParams', nicknames: ALL_TREC, compute: (r, _q, p, o, i) => void (o[i] = gMeasure(r, setupGains(r, p.pairs))) }],
  },
  RBP: {
    cutoff: 'none',
    params: ['p', 'gains'],
    describe: 'rank-biased precision (rbp), persistence p',
    compute: (r, m) => rbp(r, setupGains(r, gainOverrides(m)), m.params.p ?? 0.9),
    trec: [
      {
        name: 'rbp',
        order: 36,
        kind: 'pairParams',
        nicknames: ALL_TREC,
        compute: (r, _q, p, o, i) => void (o[i] = rbp(r, setupGains(r, p.pairs), rbpPersistence(p.pairs))),
      },
    ],
  },
  RBPResid: {
    cutoff: 'none',
    params: ['p'],
    describe: 'RBP residual (rbp_resid)',
    compute: (r, m) => rbpResidual(r, m.params.p ?? 0.9),
    trec: [
      {
        name: 'rbp_resid',
        order: 37,
        kind: 'pairParams',
        nicknames: ALL_TREC,
        compute: (r, _q, p, o, i) => void (o[i] = rbpResidual(r, rbpPersistence(p.pairs))),
      },
    ],
  },
  Rprec: {
    cutoff: 'none',
    params: ['rel'],
    describe: 'precision at R (Rprec)',
    compute: (r, _m, l) => rPrecision(r, l),
    trec: [{ name: 'Rprec', order: 7, kind: 'single', nicknames: OFFICIAL, compute: (r, q, _p, o, i) => void (o[i] = rPrecision(r, q.level)) }],
  },
  RprecMult: {
    cutoff: 'fraction',
    params: ['rel'],
    describe: 'precision at m times R (Rprec_mult)',
    compute: cut(rPrecisionMult),
    trec: [
      {
        name: 'Rprec_mult',
        order: 16,
        kind: 'cutDouble',
        defaults: R_MULTS,
        nicknames: ALL_TREC,
        compute: (r, q, p, o, i) => rPrecisionMult(r, q.level, p.numbers, o, i),
      },
    ],
  },
  IPrec: {
    cutoff: 'fraction',
    params: ['rel'],
    describe: 'interpolated precision at recall x (iprec_at_recall)',
    compute: cut(interpolatedPrecisionAt),
    trec: [
      {
        name: 'iprec_at_recall',
        order: 10,
        kind: 'cutDouble',
        defaults: RECALLS,
        nicknames: OFFICIAL,
        compute: (r, q, p, o, i) => interpolatedPrecisionAt(r, q.level, p.numbers, o, i),
      },
    ],
  },
  '11ptAvg': {
    cutoff: 'none',
    params: ['rel'],
    describe: 'mean interpolated precision at recall 0, 0.1, ..., 1 (11pt_avg)',
    compute: (r, _m, l) => elevenPointAverage(r, l, RECALLS),
    trec: [
      {
        name: '11pt_avg',
        order: 18,
        kind: 'doubleParams',
        defaults: RECALLS,
        nicknames: ALL_TREC,
        compute: (r, q, p, o, i) => void (o[i] = elevenPointAverage(r, q.level, p.numbers)),
      },
    ],
  },
  Bpref: {
    cutoff: 'none',
    params: ['rel'],
    describe: 'binary preference (bpref)',
    compute: (r, _m, l) => bpref(r, l),
    trec: [
      { name: 'bpref', order: 8, kind: 'single', nicknames: OFFICIAL, compute: (r, q, _p, o, i) => void (o[i] = bpref(r, q.level)) },
      {
        name: 'gm_bpref',
        order: 15,
        kind: 'single',
        geometric: true,
        nicknames: ALL_TREC,
        canonical: 'GMBpref',
        compute: (r, q, _p, o, i) => void (o[i] = logBpref(r, q.level)),
      },
    ],
  },
  infAP: {
    cutoff: 'none',
    params: ['rel'],
    describe: 'inferred AP (infAP)',
    compute: (r, _m, l) => inferredAp(r, l),
    trec: [{ name: 'infAP', order: 14, kind: 'single', nicknames: ALL_TREC, compute: (r, q, _p, o, i) => void (o[i] = inferredAp(r, q.level)) }],
  },
  BinG: {
    cutoff: 'none',
    params: ['rel'],
    describe: 'trec_eval binG',
    compute: (r, _m, l) => binaryG(r, l),
    trec: [{ name: 'binG', order: 19, kind: 'single', nicknames: ALL_TREC, compute: (r, q, _p, o, i) => void (o[i] = binaryG(r, q.level)) }],
  },
  SetP: {
    cutoff: 'none',
    params: ['rel'],
    describe: 'set precision (set_P)',
    compute: (r) => setP(r),
    trec: [{ name: 'set_P', order: 30, kind: 'single', nicknames: SET, compute: (r, _q, _p, o, i) => void (o[i] = setP(r)) }],
  },
  SetRelP: {
    cutoff: 'none',
    params: ['rel'],
    describe: 'set relative precision (set_relative_P)',
    compute: (r) => setRelP(r),
    trec: [{ name: 'set_relative_P', order: 31, kind: 'single', nicknames: SET, compute: (r, _q, _p, o, i) => void (o[i] = setRelP(r)) }],
  },
  SetR: {
    cutoff: 'none',
    params: ['rel'],
    describe: 'set recall (set_recall)',
    compute: (r) => setRecall(r),
    trec: [{ name: 'set_recall', order: 32, kind: 'single', nicknames: SET, compute: (r, _q, _p, o, i) => void (o[i] = setRecall(r)) }],
  },
  SetAP: {
    cutoff: 'none',
    params: ['rel'],
    describe: 'set AP (set_map)',
    compute: (r) => setAp(r),
    trec: [{ name: 'set_map', order: 33, kind: 'single', nicknames: SET, compute: (r, _q, _p, o, i) => void (o[i] = setAp(r)) }],
  },
  SetF: {
    cutoff: 'none',
    params: ['x', 'rel'],
    describe: 'set F, x weighs recall (set_F.x)',
    compute: (r, m) => setF(r, m.params.x ?? 1),
    trec: [
      { name: 'set_F', order: 34, kind: 'doubleParams', defaults: [1.0], nicknames: SET, compute: (r, _q, p, o, i) => void (o[i] = setF(r, p.numbers[0])) },
    ],
  },
  Utility: {
    cutoff: 'none',
    params: ['a', 'b', 'c', 'd', 'rel'],
    describe: 'set utility a*rel_ret + b*nonrel_ret + c*rel_missed + d*rest (utility)',
    compute: (r, m) => utility(r, [m.params.a ?? 1, m.params.b ?? -1, m.params.c ?? 0, m.params.d ?? 0]),
    trec: [
      {
        name: 'utility',
        order: 17,
        kind: 'doubleParams',
        defaults: UTILITY,
        nicknames: SET,
        compute: (r, q, p, o, i) => void (o[i] = utility(r, p.numbers, q.numDocsInColl)),
      },
    ],
  },
  NumRet: {
    cutoff: 'none',
    params: [],
    describe: 'documents retrieved (num_ret)',
    compute: (r) => numRet(r),
    trec: [{ name: 'num_ret', order: 2, kind: 'count', nicknames: EVERY, compute: (r, _q, _p, o, i) => void (o[i] = numRet(r)) }],
  },
  NumRel: {
    cutoff: 'none',
    params: ['rel'],
    describe: 'relevant documents (num_rel)',
    compute: (r) => numRel(r),
    trec: [{ name: 'num_rel', order: 3, kind: 'count', nicknames: EVERY, compute: (r, _q, _p, o, i) => void (o[i] = numRel(r)) }],
  },
  NumRelRet: {
    cutoff: 'none',
    params: ['rel'],
    describe: 'relevant documents retrieved (num_rel_ret)',
    compute: (r) => numRelRet(r),
    trec: [{ name: 'num_rel_ret', order: 4, kind: 'count', nicknames: EVERY, compute: (r, _q, _p, o, i) => void (o[i] = numRelRet(r)) }],
  },
  NumNonrelJudgedRet: {
    cutoff: 'none',
    params: ['rel'],
    describe: 'judged non-relevant documents retrieved (num_nonrel_judged_ret)',
    compute: (r) => numNonrelJudgedRet(r),
    trec: [{ name: 'num_nonrel_judged_ret', order: 35, kind: 'count', nicknames: ALL_TREC, compute: (r, _q, _p, o, i) => void (o[i] = numNonrelJudgedRet(r)) }],
  },
  Acc: {
    cutoff: 'none',
    params: [],
    describe: "answer accuracy: 1 when the answer judge grades a question's answer correct, else 0 (answer stage)",
    answer: true,
    compute: fromAnswerStage,
  },
  'F1-LoCoMo': {
    cutoff: 'none',
    params: [],
    describe: "LoCoMo's answer F1: Porter-stemmed token overlap with the gold, by its per-category rules (answer stage)",
    answer: true,
    compute: fromAnswerStage,
  },
  'F1-set': {
    cutoff: 'none',
    params: [],
    describe: "mem0's answer F1: overlap of the answer's and the gold's sets of lower-cased words (answer stage)",
    answer: true,
    compute: fromAnswerStage,
  },
  EM: {
    cutoff: 'none',
    params: [],
    describe: 'exact match of answer and gold after SQuAD normalisation (case, punctuation, articles), 0 or 1 (answer stage)',
    answer: true,
    compute: fromAnswerStage,
  },
};

/** Canonical measure names, for help texts and did-you-mean. */
export const MEASURE_NAMES: readonly string[] = Object.keys(FAMILIES);

/**
 * Every measure family: its one-line description, its parameters, and how it is written, as examples of the
 * canonical spelling (`nDCG`, `nDCG@10`: the cutoff optional; `P@10`: required; `IPrec@0.5`: a fraction).
 */
export function describeMeasures(): readonly { name: string; describe: string; params: readonly string[]; examples: readonly string[] }[] {
  return MEASURE_NAMES.map((name) => {
    const fam = FAMILIES[name]!;
    const examples =
      fam.cutoff === 'none' ? [name] : fam.cutoff === 'rank' ? [`${name}@10`] : fam.cutoff === 'fraction' ? [`${name}@0.5`] : [name, `${name}@10`];
    return { name, describe: fam.describe, params: fam.params, examples };
  });
}

/** Every trec_eval measure of the registry with its family's name and parameters, in trec_eval's order. */
export function trecEvalMeasures(): readonly { readonly family: string; readonly params: readonly string[]; readonly measure: TrecEvalMeasure }[] {
  return MEASURE_NAMES.flatMap((family) => (FAMILIES[family]!.trec ?? []).map((measure) => ({ family, params: FAMILIES[family]!.params, measure }))).sort(
    (x, y) => x.measure.order - y.measure.order,
  );
}

const isCut = (t: TrecEvalMeasure) => t.kind === 'cutLong' || t.kind === 'cutDouble';

/**
 * How to ask trec_eval (and `harness eval -m`) for this measure: the `-m` argument and, for a `rel=`
 * parameter, the `-l` level it needs. Undefined when trec_eval has no equivalent (`Judged@k`, `R-all@k`,
 * `RR@k`, `nDCG(gain=exp)`, `nDCG-LME@k`, gains with a cutoff).
 */
export function trecEvalSpelling(m: Measure): { readonly measure: string; readonly level?: number } | undefined {
  const p = m.params;
  if (p.gain === 'exp') return undefined;
  // The family's trec_eval measure that takes the cutoff (P.k, map_cut.k) or, without one, the plain one (map).
  const name = FAMILIES[m.name]?.trec?.find((t) => !t.geometric && isCut(t) === (m.cutoff !== undefined))?.name;
  if (name === undefined || (m.cutoff !== undefined && p.gains !== undefined)) return undefined;
  const args: string[] = [];
  if (m.cutoff !== undefined) args.push(numberText(m.cutoff));
  if (m.name === 'SetF' && p.x !== undefined) args.push(numberText(p.x));
  if (m.name === 'Utility') args.push([p.a ?? 1, p.b ?? -1, p.c ?? 0, p.d ?? 0].map(numberText).join(','));
  if (p.p !== undefined) args.push(`p=${numberText(p.p)}`);
  for (const [grade, gain] of Object.entries(p.gains ?? {})) args.push(`${grade}=${numberText(gain)}`);
  return { measure: args.length ? `${name}.${args.join(',')}` : name, ...(p.rel === undefined ? {} : { level: p.rel }) };
}

function numberText(n: number): string {
  return String(n);
}

/** A Measure from parts, dropping parameters at their default (so it formats canonically). */
export function measureOf(name: string, params: Readonly<Record<string, unknown>>, cutoff?: number): Measure {
  const kept: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(params)) if (v !== undefined && DEFAULTS[k] !== v) kept[k] = v;
  return Object.freeze({ name, ...(cutoff === undefined ? {} : { cutoff }), params: Object.freeze(kept) as Measure['params'] });
}

/** The canonical spelling of a measure. */
export function formatMeasure(m: Measure): string {
  const fam = FAMILIES[m.name];
  const order = fam ? fam.params : (Object.keys(m.params) as ParamName[]);
  const parts: string[] = [];
  for (const k of order) {
    const v = m.params[k];
    if (v === undefined) continue;
    if (k === 'gains') {
      const g = v as Readonly<Record<string, number>>;
      const keys = Object.keys(g).sort((a, b) => Number(a) - Number(b));
      parts.push(`gains={${keys.map((key) => `${key}:${numberText(g[key]!)}`).join(',')}}`);
    } else parts.push(`${k}=${typeof v === 'number' ? numberText(v) : v}`);
  }
  return `${m.name}${parts.length ? `(${parts.join(',')})` : ''}${m.cutoff === undefined ? '' : `@${numberText(m.cutoff)}`}`;
}

/**
 * Other tools' names for our measure families, keyed in lower case: trec_eval (`map`, `recip_rank`,
 * `ndcg_cut`, `P`), ir_measures (`MAP`, `MRR`, `NDCG`, `Recall`, `Precision`; docs: ir-measur.es), BEIR's
 * `EvaluateRetrieval` (`NDCG@k`, `MAP@k`, `Recall@k`, `P@k`, `MRR@k`, `top_k_acc@k`), MTEB (`ndcg_at_10`)
 * and LongMemEval (`recall_any`, `recall_all`, `ndcg_any`). Every canonical name is also found in any case.
 * An alias only ever resolves to the same number: BEIR's capped recall `R_cap@k` has no entry here.
 */
const ALIASES: Readonly<Record<string, string>> = {
  map: 'AP',
  map_cut: 'AP',
  mrr: 'RR',
  recip_rank: 'RR',
  ndcg_cut: 'nDCG',
  ndcg_at: 'nDCG',
  recall: 'R',
  precision: 'P',
  success: 'Success',
  hit: 'Success',
  hits: 'Success',
  hit_rate: 'Success',
  hitrate: 'Success',
  top_k_acc: 'Success',
  recall_any: 'Success',
  recall_all: 'R-all',
  ndcg_any: 'nDCG-LME',
  judged: 'Judged',
  unj: 'Unj',
  relative_p: 'RelP',
  rprec_mult: 'RprecMult',
  iprec_at_recall: 'IPrec',
  '11pt_avg': '11ptAvg',
  bpref: 'Bpref',
  infap: 'infAP',
  bing: 'BinG',
  dcg: 'DCG',
  ideal_dcg: 'IDCG',
  ndcg_rel: 'nDCGRel',
  rndcg: 'RnDCG',
  rbp: 'RBP',
  rbp_resid: 'RBPResid',
  rprec: 'Rprec',
  set_p: 'SetP',
  set_relative_p: 'SetRelP',
  set_recall: 'SetR',
  set_map: 'SetAP',
  set_f: 'SetF',
  utility: 'Utility',
  num_ret: 'NumRet',
  num_rel: 'NumRel',
  num_rel_ret: 'NumRelRet',
  num_nonrel_judged_ret: 'NumNonrelJudgedRet',
  accuracy: 'Acc',
  ...Object.fromEntries(Object.keys(FAMILIES).map((name) => [name.toLowerCase(), name])),
};

/** Names other tools give to different numbers: refused, with the canonical names to choose between. */
const AMBIGUOUS: Readonly<Record<string, string>> = {
  f1: "LoCoMo's and mem0's evaluations both call their answer F1 `F1` and compute different numbers; write F1-LoCoMo (stemmed tokens, per-category rules) or F1-set (mem0's token sets)",
};

/** The names a measure family answers to besides its canonical one, for `harness measures`. */
export function measureAliases(name: string): readonly string[] {
  return Object.keys(ALIASES).filter((a) => ALIASES[a] === name && a !== name.toLowerCase());
}

/**
 * A family named by an alias, with a cutoff carried in the name as trec_eval (`P_5`, `ndcg_cut.10`) or
 * MTEB (`ndcg_at_10`) write it.
 */
function resolveAlias(name: string): { readonly family: string; readonly cutoff?: string } | undefined {
  const lower = name.toLowerCase();
  const direct = ALIASES[lower];
  if (direct !== undefined) return { family: direct };
  const suffixed = /^(.+?)(?:_at_|_|\.)(\d+(?:\.\d+)?)$/.exec(lower);
  const family = suffixed ? ALIASES[suffixed[1]!] : undefined;
  return family === undefined ? undefined : { family, cutoff: suffixed![2]! };
}

/** The canonical spelling closest to an unknown name, completed with a cutoff when the family needs one. */
function suggest(name: string, cutoffText: string | undefined): string {
  const base = name.toLowerCase().replace(/(?:_at_|_|\.)(\d+(?:\.\d+)?)$/, '');
  const family = ALIASES[closest(base, Object.keys(ALIASES), { always: true })!]!;
  const cutoff = cutoffText ?? /(\d+(?:\.\d+)?)$/.exec(name)?.[1];
  const kind = FAMILIES[family]!.cutoff;
  if (kind === 'none') return family;
  if (cutoff !== undefined) return `${family}@${cutoff}`;
  return kind === 'rank' ? `${family}@10` : kind === 'fraction' ? `${family}@0.5` : family;
}

/**
 * Parses a measure. Accepts the canonical form and equivalent spellings (parameters in any order, defaults
 * spelled out) and other tools' names for the same measure (`NDCG@10`, `MAP`, `MRR@10`, `Recall@100`,
 * `P_5`, `ndcg_cut_10`, `ndcg_at_10`; see ALIASES), all of which format back to the one canonical string.
 * Rejects unknown names with a did-you-mean, and cutoffs or parameters the measure lacks.
 */
export function parseMeasure(text: string): Measure {
  const s = text.trim();
  const m = /^([A-Za-z0-9_.-]+?)(?:\((.*)\))?(?:@([^@()]+))?$/.exec(s);
  if (!m) throw new UsageError(`cannot read measure "${text}"; write Name, Name@k or Name(param=value)@k, e.g. nDCG@10, P(rel=2)@5`);
  let name = m[1]!;
  let cutoffText = m[3];
  if (!FAMILIES[name]) {
    const ambiguous = AMBIGUOUS[name.toLowerCase()];
    if (ambiguous !== undefined) throw new UsageError(`measure "${text}" is ambiguous: ${ambiguous}`);
    const alias = resolveAlias(name);
    if (alias === undefined) {
      throw new UsageError(`unknown measure "${text}"; did you mean "${suggest(name, cutoffText)}"?`, {
        hint: '`harness measures` lists every measure with the other names it accepts',
      });
    }
    if (alias.cutoff !== undefined && cutoffText !== undefined) {
      throw new UsageError(`measure "${text}" gives its cutoff twice; write ${alias.family}@${cutoffText}`);
    }
    name = alias.family;
    cutoffText = alias.cutoff ?? cutoffText;
  }
  const fam = FAMILIES[name]!;
  const params: Record<string, unknown> = {};
  if (m[2] !== undefined && m[2].trim() !== '') {
    for (const part of splitParams(m[2])) {
      const eq = part.indexOf('=');
      if (eq < 0) throw new UsageError(`measure "${text}": parameter "${part}" needs the form name=value`);
      let key = part.slice(0, eq).trim() as ParamName;
      let raw = part.slice(eq + 1).trim();
      // ir_measures writes the gain as nDCG(dcg=exp-log2); the same measure as our gain=exp.
      if ((key as string) === 'dcg' && fam.params.includes('gain')) {
        if (raw !== 'log2' && raw !== 'exp-log2')
          throw new UsageError(`measure "${text}": dcg=${raw}; ir_measures' dcg is log2 (linear gain) or exp-log2 (2^g-1)`);
        key = 'gain';
        raw = raw === 'exp-log2' ? 'exp' : 'linear';
      }
      if (!fam.params.includes(key)) {
        throw new UsageError(
          `measure "${text}": ${name} has no parameter "${key}"${fam.params.length ? ` (it takes ${fam.params.join(', ')})` : ' (it takes none)'}`,
        );
      }
      if (key in params) throw new UsageError(`measure "${text}": parameter "${key}" given twice`);
      params[key] = parseParam(text, key, raw);
    }
  }
  for (const [k, v] of Object.entries(params)) if (v === undefined || DEFAULTS[k] === v) delete params[k];
  let cutoff: number | undefined;
  if (cutoffText !== undefined) {
    if (fam.cutoff === 'none') throw new UsageError(`measure "${text}": ${name} takes no @cutoff`);
    const c = Number(cutoffText);
    if (fam.cutoff === 'fraction') {
      if (!/^\d*\.?\d+$/.test(cutoffText) || !(c >= 0)) throw new UsageError(`measure "${text}": @${cutoffText} must be a non-negative number`);
    } else if (!/^\d+$/.test(cutoffText) || c <= 0) {
      throw new UsageError(`measure "${text}": the cutoff @${cutoffText} must be a positive integer rank`);
    }
    cutoff = c;
  } else if (fam.cutoff === 'rank' || fam.cutoff === 'fraction') {
    throw new UsageError(`measure "${text}": ${name} needs a cutoff, e.g. ${name}@${fam.cutoff === 'rank' ? 10 : 0.5}`);
  }
  return Object.freeze({ name, ...(cutoff === undefined ? {} : { cutoff }), params: Object.freeze(params) as Measure['params'] });
}

function splitParams(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '{') depth++;
    else if (s[i] === '}') depth--;
    else if (s[i] === ',' && depth === 0) {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  out.push(s.slice(start));
  return out;
}

function parseParam(text: string, key: ParamName, raw: string): unknown {
  const num = (v: string): number => {
    if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(v)) throw new UsageError(`measure "${text}": ${key}=${v} is not a number`);
    return Number(v);
  };
  switch (key) {
    case 'rel': {
      const v = num(raw);
      if (!Number.isInteger(v)) throw new UsageError(`measure "${text}": rel=${raw} must be an integer grade`);
      return v;
    }
    case 'gain':
      if (raw !== 'exp' && raw !== 'linear') throw new UsageError(`measure "${text}": gain=${raw}; use gain=exp (2^g-1) or gain=linear (the default)`);
      return raw === 'exp' ? 'exp' : undefined;
    case 'gains': {
      const body = /^\{(.*)\}$/.exec(raw);
      if (!body) throw new UsageError(`measure "${text}": gains must look like {1:1,2:3}`);
      const g: Record<string, number> = {};
      for (const pair of body[1]!.split(',').filter((x) => x.trim() !== '')) {
        const [k, v] = pair.split(':').map((x) => x.trim());
        if (k === undefined || v === undefined || !/^[+-]?\d+$/.test(k)) throw new UsageError(`measure "${text}": gains entry "${pair}" must be grade:gain`);
        g[String(Number.parseInt(k, 10))] = num(v);
      }
      return Object.freeze(g);
    }
    default:
      return num(raw);
  }
}

/** The family's per-query kernel, for evaluate(). */
export function measureKernel(m: Measure): Family['compute'] {
  const fam = FAMILIES[m.name];
  if (!fam) throw new UsageError(`unknown measure "${m.name}"`);
  return fam.compute;
}

/** Is the measure tested in Comparisons? Every one is but a coverage diagnostic (`Judged@k`). */
export function isTested(m: Measure): boolean {
  return FAMILIES[m.name]?.coverage !== true;
}

/** Is it an Answer measure (`Acc`, `F1-LoCoMo`, `F1-set`, `EM`), whose per-question value the answer stage gives? */
export function isAnswerMeasure(m: Measure): boolean {
  return FAMILIES[m.name]?.answer === true;
}

/** Does the measure read the turns' sessions (LongMemEval's turn-to-session measures, `*-T2S@k`)? */
export function needsTurnSessions(m: Measure): boolean {
  return FAMILIES[m.name]?.turnSessions === true;
}

/** Does the measure's value depend on the relevance level? */
export function usesRelevanceLevel(m: Measure): boolean {
  return FAMILIES[m.name]?.params.includes('rel') ?? false;
}
