import { closest } from '../util/suggest.js';
import { UsageError } from '../errors.js';
import { bpref, inferredAp, MIN_GEO_MEAN } from './kernels/ap.js';
import { ndcgAt, rbpResidual, relString, setupGains, type DcgResult, type GainOverride, type GainTable } from './kernels/gain.js';
import { gainedRanks, type GainedRanks, gMeasureSparse, ndcgRelSparse, ndcgSparse, newGainedRanks, rbpSparse, rNdcgSparse } from './kernels/gain-sparse.js';
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
} from './kernels/prefix.js';
import { numNonrelJudgedRet, numRel, numRelRet, numRet, setAp, setF, setP, setRecall, setRelP, utility } from './kernels/set.js';
import { formatFixed, formatLong, padRight, printfFixed } from './printf.js';
import type { JudgedRanking } from './ranking.js';

/**
 * trec_eval's measure table and output, reproduced: the measures, their order, the `-m` syntax
 * (`name[.params]`, nicknames `official`, `set`, `all_trec`), parameter parsing (atol/atof), value names
 * (`P_5`, `iprec_at_recall_0.10`, `utility_2,-1,0,0`), which measures print per query and in the summary,
 * and how each is averaged. Facts from usnistgov/trec_eval 10.0 (measures.c, meas_init.c, meas_avg.c,
 * meas_print_*.c, m_*.c); the code is ours.
 */

/** The flags of a trec_eval invocation that change numbers (see harness/cli/eval.command.ts). */
export interface TrecEvalSettings {
  /** -q: print every query's values before the summary. */
  readonly perQuery: boolean;
  /** -n absent: print the summary. */
  readonly summary: boolean;
  /** -c: average over every qrels query; queries missing from the run score as an empty ranking. */
  readonly averageComplete: boolean;
  /** -J: drop unjudged documents from the ranking before measuring. */
  readonly judgedOnly: boolean;
  /** -l: grades >= this are relevant. */
  readonly relevanceLevel: number;
  /** -M: evaluate only the top M documents of each query. */
  readonly maxDocs: number | undefined;
  /** -N: collection size, used by utility's d cell. */
  readonly numDocsInColl: number;
  /** The -m arguments, in command-line order. Empty: `official`. */
  readonly measures: readonly string[];
}

type Kind = 'runid' | 'count' | 'single' | 'cutLong' | 'cutDouble' | 'doubleParams' | 'pairParams' | 'relstring';
type Averaging = 'mean' | 'sum' | 'gm' | 'numQ' | 'none';

/**
 * What the measures of one query share, each computed on first use and kept until the next query: the
 * running counts of one forward pass (kernels/prefix.ts), the gain table, nDCG's triple, Bpref, the
 * interpolated precisions (11pt_avg is their mean). Reusing a value gives the very double the measure's
 * own kernel computes; the per-measure kernels of ap.ts and cutoff.ts stay the definitions (prefix.test.ts).
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

type Ctx = QueryMemo;

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

const NO_PAIRS: readonly GainOverride[] = Object.freeze([]);

interface Def {
  readonly name: string;
  readonly kind: Kind;
  readonly avg: Averaging;
  /** Printed per query (-q)? */
  readonly perQuery: boolean;
  readonly defaults?: readonly number[];
  /** Computes the measure's values into out[off..]; `params` are the parsed cutoffs / doubles / pairs. */
  readonly calc: (r: JudgedRanking, c: Ctx, p: Params, out: Float64Array, off: number) => void;
}

interface Params {
  readonly numbers: readonly number[];
  readonly pairs: readonly GainOverride[];
}

const CUTOFFS = [5, 10, 15, 20, 30, 100, 200, 500, 1000];
const RECALLS = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0];

function pOf(pairs: readonly GainOverride[]): number {
  let p = 0.9;
  for (const q of pairs) if (q.name === 'p') p = q.value;
  return p;
}

/** The measures in trec_eval's te_trec_measures order, which is also the output order. */
const DEFS: readonly Def[] = [
  { name: 'runid', kind: 'runid', avg: 'none', perQuery: false, calc: () => {} },
  { name: 'num_q', kind: 'count', avg: 'numQ', perQuery: false, calc: (_r, _c, _p, o, i) => void (o[i] = 1) },
  { name: 'num_ret', kind: 'count', avg: 'sum', perQuery: true, calc: (r, _c, _p, o, i) => void (o[i] = numRet(r)) },
  { name: 'num_rel', kind: 'count', avg: 'sum', perQuery: true, calc: (r, _c, _p, o, i) => void (o[i] = numRel(r)) },
  { name: 'num_rel_ret', kind: 'count', avg: 'sum', perQuery: true, calc: (r, _c, _p, o, i) => void (o[i] = numRelRet(r)) },
  { name: 'map', kind: 'single', avg: 'mean', perQuery: true, calc: (r, c, _p, o, i) => void (o[i] = averagePrecisionFromPrefix(c.prefix(), r.numRel)) },
  {
    name: 'gm_map',
    kind: 'single',
    avg: 'gm',
    perQuery: false,
    // logAveragePrecision (ap.ts) of the shared AP.
    calc: (r, c, _p, o, i) => void (o[i] = Math.log(Math.max(averagePrecisionFromPrefix(c.prefix(), r.numRel), MIN_GEO_MEAN))),
  },
  { name: 'Rprec', kind: 'single', avg: 'mean', perQuery: true, calc: (r, c, _p, o, i) => void (o[i] = rPrecisionFromPrefix(c.prefix(), r.numRel)) },
  { name: 'bpref', kind: 'single', avg: 'mean', perQuery: true, calc: (_r, c, _p, o, i) => void (o[i] = c.bpref()) },
  { name: 'recip_rank', kind: 'single', avg: 'mean', perQuery: true, calc: (_r, c, _p, o, i) => void (o[i] = reciprocalRankFromPrefix(c.prefix())) },
  {
    name: 'iprec_at_recall',
    kind: 'cutDouble',
    avg: 'mean',
    perQuery: true,
    defaults: RECALLS,
    calc: (_r, c, p, o, i) => o.set(c.iprec(p.numbers).subarray(0, p.numbers.length), i),
  },
  { name: 'P', kind: 'cutLong', avg: 'mean', perQuery: true, defaults: CUTOFFS, calc: (_r, c, p, o, i) => precisionFromPrefix(c.prefix(), p.numbers, o, i) },
  { name: 'relstring', kind: 'relstring', avg: 'none', perQuery: true, defaults: [10], calc: () => {} },
  {
    name: 'recall',
    kind: 'cutLong',
    avg: 'mean',
    perQuery: true,
    defaults: CUTOFFS,
    calc: (r, c, p, o, i) => recallFromPrefix(c.prefix(), r.numRel, p.numbers, o, i),
  },
  { name: 'infAP', kind: 'single', avg: 'mean', perQuery: true, calc: (r, c, _p, o, i) => void (o[i] = inferredAp(r, c.level)) },
  // logBpref (ap.ts) of the shared Bpref.
  { name: 'gm_bpref', kind: 'single', avg: 'gm', perQuery: false, calc: (_r, c, _p, o, i) => void (o[i] = Math.log(Math.max(c.bpref(), MIN_GEO_MEAN))) },
  {
    name: 'Rprec_mult',
    kind: 'cutDouble',
    avg: 'mean',
    perQuery: true,
    defaults: [0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0],
    calc: (r, c, p, o, i) => rPrecisionMultFromPrefix(c.prefix(), r.numRel, r.numRelRet, p.numbers, o, i),
  },
  {
    name: 'utility',
    kind: 'doubleParams',
    avg: 'mean',
    perQuery: true,
    defaults: [1.0, -1.0, 0.0, 0.0],
    calc: (r, c, p, o, i) => void (o[i] = utility(r, p.numbers, c.numDocsInColl)),
  },
  {
    name: '11pt_avg',
    kind: 'doubleParams',
    avg: 'mean',
    perQuery: true,
    defaults: RECALLS,
    calc: (_r, c, p, o, i) => void (o[i] = elevenPointFromIprec(c.iprec(p.numbers), p.numbers.length)),
  },
  { name: 'binG', kind: 'single', avg: 'mean', perQuery: true, calc: (r, c, _p, o, i) => void (o[i] = binaryGFromPrefix(c.prefix(), r.numRel)) },
  { name: 'G', kind: 'pairParams', avg: 'mean', perQuery: true, calc: (r, c, p, o, i) => void (o[i] = gMeasureSparse(r, c.gains(p.pairs), c.gained(p.pairs))) },
  { name: 'dcg', kind: 'pairParams', avg: 'mean', perQuery: true, calc: (_r, c, p, o, i) => void (o[i] = c.ndcg(p.pairs).dcg) },
  { name: 'ideal_dcg', kind: 'pairParams', avg: 'mean', perQuery: true, calc: (_r, c, p, o, i) => void (o[i] = c.ndcg(p.pairs).idcg) },
  { name: 'ndcg', kind: 'pairParams', avg: 'mean', perQuery: true, calc: (_r, c, p, o, i) => void (o[i] = c.ndcg(p.pairs).ndcg) },
  {
    name: 'ndcg_rel',
    kind: 'pairParams',
    avg: 'mean',
    perQuery: true,
    calc: (_r, c, p, o, i) => void (o[i] = ndcgRelSparse(c.gains(p.pairs), c.gained(p.pairs))),
  },
  {
    name: 'Rndcg',
    kind: 'pairParams',
    avg: 'mean',
    perQuery: true,
    calc: (r, c, p, o, i) => void (o[i] = rNdcgSparse(r, c.gains(p.pairs), c.gained(p.pairs))),
  },
  { name: 'ndcg_cut', kind: 'cutLong', avg: 'mean', perQuery: true, defaults: CUTOFFS, calc: (r, _c, p, o, i) => ndcgAt(r, p.numbers, o, i) },
  {
    name: 'map_cut',
    kind: 'cutLong',
    avg: 'mean',
    perQuery: true,
    defaults: CUTOFFS,
    calc: (r, c, p, o, i) => apAtFromPrefix(c.prefix(), r.numRel, p.numbers, o, i),
  },
  {
    name: 'relative_P',
    kind: 'cutLong',
    avg: 'mean',
    perQuery: true,
    defaults: CUTOFFS,
    calc: (r, c, p, o, i) => relativePrecisionFromPrefix(c.prefix(), r.numRel, p.numbers, o, i),
  },
  {
    name: 'success',
    kind: 'cutLong',
    avg: 'mean',
    perQuery: true,
    defaults: [1, 5, 10],
    calc: (_r, c, p, o, i) => successFromPrefix(c.prefix(), p.numbers, o, i),
  },
  { name: 'set_P', kind: 'single', avg: 'mean', perQuery: true, calc: (r, _c, _p, o, i) => void (o[i] = setP(r)) },
  { name: 'set_relative_P', kind: 'single', avg: 'mean', perQuery: true, calc: (r, _c, _p, o, i) => void (o[i] = setRelP(r)) },
  { name: 'set_recall', kind: 'single', avg: 'mean', perQuery: true, calc: (r, _c, _p, o, i) => void (o[i] = setRecall(r)) },
  { name: 'set_map', kind: 'single', avg: 'mean', perQuery: true, calc: (r, _c, _p, o, i) => void (o[i] = setAp(r)) },
  { name: 'set_F', kind: 'doubleParams', avg: 'mean', perQuery: true, defaults: [1.0], calc: (r, _c, p, o, i) => void (o[i] = setF(r, p.numbers[0])) },
  { name: 'num_nonrel_judged_ret', kind: 'count', avg: 'sum', perQuery: true, calc: (r, _c, _p, o, i) => void (o[i] = numNonrelJudgedRet(r)) },
  {
    name: 'rbp',
    kind: 'pairParams',
    avg: 'mean',
    perQuery: true,
    calc: (r, c, p, o, i) => void (o[i] = rbpSparse(r, c.gains(p.pairs), c.gained(p.pairs), pOf(p.pairs))),
  },
  { name: 'rbp_resid', kind: 'pairParams', avg: 'mean', perQuery: true, calc: (r, _c, p, o, i) => void (o[i] = rbpResidual(r, pOf(p.pairs))) },
  {
    name: 'unj',
    kind: 'cutLong',
    avg: 'mean',
    perQuery: true,
    defaults: [5, 10, 20],
    calc: (_r, c, p, o, i) => unjudgedFromPrefix(c.prefix(), p.numbers, o, i),
  },
];

const NICKNAMES: Readonly<Record<string, readonly string[]>> = {
  official: ['runid', 'num_q', 'num_ret', 'num_rel', 'num_rel_ret', 'map', 'gm_map', 'Rprec', 'bpref', 'recip_rank', 'iprec_at_recall', 'P'],
  set: ['runid', 'num_q', 'num_ret', 'num_rel', 'num_rel_ret', 'utility', 'set_P', 'set_recall', 'set_relative_P', 'set_map', 'set_F'],
  all_trec: [
    'runid',
    'num_q',
    'num_ret',
    'num_rel',
    'num_rel_ret',
    'map',
    'gm_map',
    'Rprec',
    'bpref',
    'recip_rank',
    'iprec_at_recall',
    'P',
    'relstring',
    'recall',
    'unj',
    'rbp',
    'rbp_resid',
    'infAP',
    'gm_bpref',
    'utility',
    '11pt_avg',
    'ndcg',
    'relative_P',
    'Rprec_mult',
    'success',
    'map_cut',
    'ndcg_cut',
    'ndcg_rel',
    'Rndcg',
    'binG',
    'G',
    'set_P',
    'set_recall',
    'set_relative_P',
    'set_map',
    'set_F',
    'num_nonrel_judged_ret',
  ],
};

/** trec_eval measures and nicknames for preference / judgment-group formats, which this tool does not read. */
const UNSUPPORTED = new Set(['all_prefs', 'prefs', 'qrels_jg', 'map_avgjg', 'P_avgjg', 'Rprec_mult_avgjg', 'yaap']);

/** The trec_eval measure names we implement, in output order. */
export const TREC_MEASURE_NAMES: readonly string[] = DEFS.map((d) => d.name);
/** trec_eval's nicknames for measure groups. */
export const TREC_NICKNAMES: readonly string[] = Object.keys(NICKNAMES);

/** One requested measure with its parameters resolved and its value names. */
export interface TrecInstance {
  readonly name: string;
  readonly kind: Kind;
  readonly avg: Averaging;
  readonly perQuery: boolean;
  readonly params: Params;
  /** The raw parameter text from the command line, or undefined for the defaults. */
  readonly paramText: string | undefined;
  /** The printed names of this measure's values (`P_5`, `P_10`, ...); empty for runid. */
  readonly valueNames: readonly string[];
  /** valueNames padded as trec_eval prints them (`%-22s`). */
  readonly printNames: readonly string[];
  /** Index of this measure's first value in a query's value row. */
  readonly offset: number;
  readonly def: Def;
}

/** The compiled measure list of one trec_eval invocation. */
export interface TrecPlan {
  readonly instances: readonly TrecInstance[];
  /** Values per query (the row width). */
  readonly width: number;
  readonly settings: TrecEvalSettings;
}

/** Parses the -m arguments as trec_eval does (name[.params], nicknames, first parameter list wins). */
export function compileTrecPlan(settings: TrecEvalSettings): TrecPlan {
  const marked = new Set<string>();
  const args: { name: string; params: string }[] = [];
  const measures = settings.measures.length > 0 ? settings.measures : ['official'];
  for (const m of measures) {
    const dot = m.indexOf('.');
    const name = dot >= 0 ? m.slice(0, dot) : m;
    if (dot >= 0) {
      const params = m.slice(dot + 1);
      if (params === '') throw new UsageError(`improper measure in parameter '${name}': nothing after the '.'`);
      args.push({ name, params });
    }
    if (UNSUPPORTED.has(name)) {
      throw new UsageError(
        `measure '${name}' needs the preference or judgment-group qrels formats (-R prefs, qrels_prefs, qrels_jg), which harness eval does not read`,
      );
    }
    const nick = NICKNAMES[name];
    if (nick) for (const n of nick) marked.add(n);
    else if (TREC_MEASURE_NAMES.includes(name)) marked.add(name);
    else {
      const known = [...TREC_MEASURE_NAMES, ...TREC_NICKNAMES];
      throw new UsageError(`illegal measure '${m}'; did you mean '${closest(name, known, { always: true })}'?`, {
        hint: `trec_eval measures: ${known.join(', ')}`,
      });
    }
  }
  const instances: TrecInstance[] = [];
  let offset = 0;
  for (const def of DEFS) {
    if (!marked.has(def.name)) continue;
    const paramText = args.find((a) => a.name === def.name)?.params;
    const inst = instantiate(def, paramText, offset);
    instances.push(inst);
    offset += inst.valueNames.length;
  }
  return { instances, width: offset, settings };
}

function instantiate(def: Def, paramText: string | undefined, offset: number): TrecInstance {
  let numbers: readonly number[] = def.defaults ?? [];
  let pairs: readonly GainOverride[] = NO_PAIRS;
  let valueNames: string[];
  const bad = (why: string) => new UsageError(`measure '${def.name}.${paramText}': ${why}`);
  switch (def.kind) {
    case 'runid':
      valueNames = [];
      break;
    case 'count':
    case 'single':
      valueNames = [def.name];
      break;
    case 'cutLong': {
      if (paramText !== undefined) {
        const cs = paramText
          .split(',')
          .map(atol)
          .sort((a, b) => a - b);
        if (cs[0]! <= 0) throw bad('cutoffs must be positive');
        for (let i = 1; i < cs.length; i++) if (cs[i] === cs[i - 1]) throw bad('duplicate cutoffs');
        numbers = cs;
      }
      valueNames = numbers.map((c) => `${def.name}_${c}`);
      break;
    }
    case 'cutDouble': {
      if (paramText !== undefined) {
        const cs = paramText
          .split(',')
          .map(atof)
          .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        for (let i = 1; i < cs.length; i++) if (cs[i] === cs[i - 1]) throw bad('duplicate cutoffs');
        numbers = cs;
      }
      // snprintf into a buffer of strlen(name) + 10 bytes: at most name + 9 characters survive.
      valueNames = numbers.map((c) => `${def.name}_${formatFixed(c, 2)}`.slice(0, def.name.length + 9));
      break;
    }
    case 'doubleParams':
    case 'relstring': {
      if (paramText !== undefined) numbers = paramText.split(',').map(atof);
      if (def.name === 'utility' && numbers.length !== 4) throw bad('utility needs exactly 4 coefficients');
      valueNames = [paramText === undefined ? def.name : `${def.name}_${paramText}`];
      break;
    }
    case 'pairParams': {
      if (paramText !== undefined) pairs = parsePairs(paramText, bad);
      valueNames = [paramText === undefined ? def.name : `${def.name}_${paramText}`];
      break;
    }
  }
  const printNames = valueNames.map((n) => padRight(n, 22));
  return { name: def.name, kind: def.kind, avg: def.avg, perQuery: def.perQuery, params: { numbers, pairs }, paramText, valueNames, printNames, offset, def };
}

/** trec_eval get_param_pairs: `name=value` pairs separated by commas, each with exactly one '='. */
function parsePairs(text: string, bad: (why: string) => Error): GainOverride[] {
  let last = ',';
  for (const ch of text) {
    if (ch === ',') {
      if (last === ',') break;
      last = ',';
    } else if (ch === '=') {
      if (last === '=') {
        last = ',';
        break;
      }
      last = '=';
    }
  }
  if (last !== '=') throw bad(`malformed pair parameters in '${text}' (expected name=value,...)`);
  return text.split(',').map((seg) => {
    const eq = seg.indexOf('=');
    return { name: seg.slice(0, eq), value: atof(seg.slice(eq + 1)) };
  });
}

/** C atol: optional whitespace and sign, then digits; stops at the first other character; 0 if none. */
export function atol(s: string): number {
  const m = /^\s*([+-]?\d+)/.exec(s);
  return m ? Number.parseInt(m[1]!, 10) : 0;
}

/** C atof for decimal text: the longest numeric prefix, 0 if none. */
export function atof(s: string): number {
  const m = /^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)/.exec(s);
  return m ? Number(m[1]) : 0;
}

/** The document trec_eval ranks alone for a qrels query missing from the run under -c (then zeroes some values). */
export const BOGUS_DOCNO = 'ceci_nest_pas_un_docno';

// computeTrecRow runs one query to the end before the next starts (no await, no re-entry): one memo serves all.
const MEMO = new QueryMemo();

/**
 * Computes one query's value row (`row[off .. off + plan.width)`, zeroed first) and returns the
 * relstring when that measure is requested. `bogus` applies trec_eval's clean-up for a -c filler query.
 */
export function computeTrecRow(plan: TrecPlan, r: JudgedRanking, row: Float64Array, off: number, bogus = false): string | undefined {
  const c = MEMO;
  c.begin(r, plan.settings.relevanceLevel, plan.settings.numDocsInColl);
  row.fill(0, off, off + plan.width);
  let rel: string | undefined;
  for (const inst of plan.instances) {
    if (inst.kind === 'relstring') rel = relString(r, inst.params.numbers[0]);
    else inst.def.calc(r, c, inst.params, row, off + inst.offset);
  }
  if (bogus) {
    // trec_eval main(): these exact value names are reset after measuring the filler document.
    for (const inst of plan.instances) {
      inst.valueNames.forEach((n, j) => {
        if (n === 'num_ret' || n === 'utility' || n === 'rbp_resid' || n.startsWith('unj')) row[off + inst.offset + j] = 0;
      });
      if (inst.kind === 'relstring' && inst.valueNames[0] === 'relstring') rel = '';
    }
  }
  return rel;
}

/**
 * Writes trec_eval's per-query lines (the -q output) as bytes into a reusable buffer and hands them on in
 * large string chunks. A query's lines are ~100 small strings otherwise; at 50,000 queries the string
 * building costs more than the evaluation.
 */
export class TrecQueryWriter {
  private buf = Buffer.allocUnsafe(1 << 20);
  private pos = 0;
  /** The per-query lines in print order: `name\t` bytes (names[nameStart[k] .. nameStart[k + 1])), the row column, and how the value prints. */
  private readonly names: Uint8Array;
  private readonly nameStart: Int32Array;
  private readonly columns: Int32Array;
  private readonly kinds: Uint8Array;
  private readonly maxPrefix: number;

  constructor(
    plan: TrecPlan,
    private readonly emit: (text: string) => void,
  ) {
    const prefixes: Buffer[] = [];
    const columns: number[] = [];
    const kinds: number[] = [];
    for (const inst of plan.instances) {
      if (!inst.perQuery) continue;
      inst.printNames.forEach((n, j) => {
        prefixes.push(Buffer.from(`${n}\t`, 'utf8'));
        columns.push(inst.offset + j);
        kinds.push(inst.kind === 'relstring' ? RELSTRING : inst.kind === 'count' ? COUNT : FIXED);
      });
    }
    this.names = Buffer.concat(prefixes);
    this.nameStart = new Int32Array(prefixes.length + 1);
    prefixes.forEach((b, k) => (this.nameStart[k + 1] = this.nameStart[k]! + b.length));
    this.columns = Int32Array.from(columns);
    this.kinds = Uint8Array.from(kinds);
    this.maxPrefix = Math.max(0, ...prefixes.map((b) => b.length));
  }

  /**
   * Appends one query's lines: `%-22s\t%s\t%6.4f` (`%ld` for counts, `'%s'` for relstring). The usual line
   * is written byte by byte into the buffer through local variables, with room for the whole query reserved
   * once; a value the digit writers decline (huge, -0, near a rounding half, not ASCII) goes through
   * printfFixed / formatLong, which reserve for themselves, and the room for the rest is reserved again.
   */
  query(qid: string, row: Float64Array, off: number, relstring: string | undefined): void {
    const q = Buffer.from(`${qid}\t`, 'utf8');
    const qLen = q.length;
    const rel = relstring ?? '';
    const { names, nameStart, columns, kinds } = this;
    const n = kinds.length;
    // A value prints in at most 24 bytes unless it takes the slow path; a relstring in 4 bytes a character.
    const lineMax = this.maxPrefix + qLen + 32;
    const room = 4 * rel.length;
    this.reserve(n * lineMax + room);
    let out = this.buf;
    let p = this.pos;
    for (let k = 0; k < n; k++) {
      for (let i = nameStart[k]!, e = nameStart[k + 1]!; i < e; i++) out[p++] = names[i]!;
      for (let i = 0; i < qLen; i++) out[p++] = q[i]!;
      const kind = kinds[k]!;
      const x = row[off + columns[k]!]!;
      let end = kind === FIXED ? fixed4Into(out, p, x) : kind === COUNT ? longInto(out, p, x) : quotedInto(out, p, rel);
      if (end < 0) {
        this.pos = p;
        this.text(kind === FIXED ? printfFixed(x, 6, 4) : kind === COUNT ? formatLong(x) : `'${rel}'`);
        this.reserve((n - k) * lineMax + room);
        out = this.buf;
        end = this.pos;
      }
      out[end] = 10;
      p = end + 1;
    }
    this.pos = p;
  }

  /** Emits what is buffered. */
  flush(): void {
    if (this.pos > 0) this.emit(this.buf.toString('utf8', 0, this.pos));
    this.pos = 0;
  }

  private reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    this.flush();
    if (n > this.buf.length) this.buf = Buffer.allocUnsafe(n);
  }

  private text(s: string): void {
    this.reserve(3 * s.length + 1);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }
}

const FIXED = 0;
const COUNT = 1;
const RELSTRING = 2;

/** The decimal digits of an int32 v >= 0 at out[p..]; returns the position after them. */
function uintInto(out: Uint8Array, p: number, v: number): number {
  let len = 1;
  for (let u = v; u >= 10; u = (u / 10) | 0) len++;
  const end = p + len;
  for (let i = end - 1; i >= p; i--) {
    const d = (v / 10) | 0;
    out[i] = 48 + v - d * 10;
    v = d;
  }
  return end;
}

/**
 * `%ld` of `(long) x` (formatLong) digit by digit when it lies in 0 .. 2^31 − 1, where the digits are an
 * int32's (Buffer.write would be a call into C++ per value); -1 for the rest, which formatLong prints.
 */
function longInto(out: Uint8Array, p: number, x: number): number {
  const t = Math.trunc(x);
  return t >= 0 && t <= 0x7fffffff ? uintInto(out, p, t | 0) : -1;
}

/** `'%s'` of the relstring when it is ASCII (grade digits, '-', '.', '>'), as bytes; -1 otherwise. */
function quotedInto(out: Uint8Array, p: number, s: string): number {
  out[p++] = 39;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128) return -1;
    out[p++] = c;
  }
  out[p++] = 39;
  return p;
}

/**
 * `%6.4f` digit by digit with formatFixed's fast path (printf.ts): |x| < 10^6, not -0, and x·10^4 not
 * within 10^-4 of a half, where the double product rounds as the exact value does. -1 otherwise (printfFixed).
 */
function fixed4Into(out: Uint8Array, p: number, x: number): number {
  const a = Math.abs(x);
  if (!(a < 1e6) || Object.is(x, -0)) return -1;
  const t = a * 10000;
  const f = Math.floor(t);
  const r = t - f;
  if (!(r < 0.4999 || r > 0.5001)) return -1;
  const n = r > 0.5 ? f + 1 : f;
  if (x < 0) out[p++] = 45;
  const ip = Math.floor(n / 10000);
  if (ip < 10) out[p++] = 48 + ip;
  else p = uintInto(out, p, ip);
  out[p++] = 46;
  // frac < 10^4 is an integer: int32 digits (a double's % is a call to fmod, four per value).
  let f4 = (n - ip * 10000) | 0;
  for (let k = 3; k >= 0; k--) {
    const d = (f4 / 10) | 0;
    out[p + k] = 48 + f4 - d * 10;
    f4 = d;
  }
  return p + 4;
}

/**
 * The summary values, from the rows of the evaluated queries in evaluation order: sums, means over
 * `numQueries` (the qrels query count under -c), geometric means exp(mean of logs), num_q.
 */
export function summarizeTrec(plan: TrecPlan, rows: Float64Array, numEvaluated: number, numQrelsQueries: number): Float64Array {
  const w = plan.width;
  const acc = new Float64Array(w);
  for (let q = 0; q < numEvaluated; q++) for (let j = 0; j < w; j++) acc[j] = acc[j]! + rows[q * w + j]!;
  return finishTrecSummary(plan, acc, numEvaluated, numQrelsQueries);
}

/**
 * The summary values from `acc`, the sums of the evaluated queries' rows added in evaluation order (as
 * summarizeTrec adds them); turns them into summarizeTrec's values in place and returns `acc`.
 */
export function finishTrecSummary(plan: TrecPlan, acc: Float64Array, numEvaluated: number, numQrelsQueries: number): Float64Array {
  const n = plan.settings.averageComplete ? numQrelsQueries : numEvaluated;
  for (const inst of plan.instances) {
    for (let j = 0; j < inst.valueNames.length; j++) {
      const k = inst.offset + j;
      if (inst.avg === 'numQ') acc[k] = numEvaluated;
      else if (inst.avg === 'mean' && n) acc[k] = acc[k]! / n;
      else if (inst.avg === 'gm' && n > 0) {
        let sum = acc[k]!;
        if (plan.settings.averageComplete) sum += (n - numEvaluated) * Math.log(MIN_GEO_MEAN);
        acc[k] = Math.exp(sum / n);
      }
    }
  }
  return acc;
}

/** trec_eval's summary lines (qid `all`). */
export function formatTrecSummary(plan: TrecPlan, summary: Float64Array, runId: string): string {
  if (!plan.settings.summary) return '';
  let s = '';
  for (const inst of plan.instances) {
    if (inst.kind === 'runid') {
      s += `${padRight('runid', 22)}\tall\t${runId}\n`;
      continue;
    }
    if (inst.kind === 'relstring') continue;
    for (let j = 0; j < inst.valueNames.length; j++) {
      const v = summary[inst.offset + j]!;
      s += `${padRight(inst.valueNames[j]!, 22)}\tall\t${inst.kind === 'count' ? formatLong(v) : printfFixed(v, 6, 4)}\n`;
    }
  }
  return s;
}

const CANONICAL_FAMILY: Readonly<Record<string, string>> = {
  num_q: 'NumQ',
  num_ret: 'NumRet',
  num_rel: 'NumRel',
  num_rel_ret: 'NumRelRet',
  map: 'AP',
  gm_map: 'GMAP',
  Rprec: 'Rprec',
  bpref: 'Bpref',
  recip_rank: 'RR',
  iprec_at_recall: 'IPrec',
  P: 'P',
  recall: 'R',
  infAP: 'infAP',
  gm_bpref: 'GMBpref',
  Rprec_mult: 'RprecMult',
  utility: 'Utility',
  '11pt_avg': '11ptAvg',
  binG: 'BinG',
  G: 'G',
  dcg: 'DCG',
  ideal_dcg: 'IDCG',
  ndcg: 'nDCG',
  ndcg_rel: 'nDCGRel',
  Rndcg: 'RnDCG',
  ndcg_cut: 'nDCG',
  map_cut: 'AP',
  relative_P: 'RelP',
  success: 'Success',
  set_P: 'SetP',
  set_relative_P: 'SetRelP',
  set_recall: 'SetR',
  set_map: 'SetAP',
  set_F: 'SetF',
  num_nonrel_judged_ret: 'NumNonrelJudgedRet',
  rbp: 'RBP',
  rbp_resid: 'RBPResid',
  unj: 'Unj',
};

/** trec_eval measures whose value depends on the relevance level (-l). */
const USES_LEVEL = new Set([
  'num_rel',
  'num_rel_ret',
  'map',
  'gm_map',
  'Rprec',
  'bpref',
  'recip_rank',
  'iprec_at_recall',
  'P',
  'recall',
  'infAP',
  'gm_bpref',
  'Rprec_mult',
  'utility',
  '11pt_avg',
  'binG',
  'map_cut',
  'relative_P',
  'success',
  'set_P',
  'set_relative_P',
  'set_recall',
  'set_map',
  'set_F',
  'num_nonrel_judged_ret',
]);

/**
 * The canonical measure name (measure.ts spelling) of each value of the plan, in row order, or undefined
 * for values with no canonical form (runid, relstring, 11pt_avg with custom recall points). The relevance
 * level shows as `rel=` when it is not 1: `P(rel=2)@5`.
 */
export function canonicalValueNames(
  plan: TrecPlan,
  format: (name: string, params: Record<string, unknown>, cutoff?: number) => string,
): (string | undefined)[] {
  const out: (string | undefined)[] = new Array(plan.width).fill(undefined);
  const level = plan.settings.relevanceLevel;
  for (const inst of plan.instances) {
    const fam = CANONICAL_FAMILY[inst.name];
    if (!fam) continue;
    const params: Record<string, unknown> = {};
    if (USES_LEVEL.has(inst.name) && level !== 1) params['rel'] = level;
    if (inst.paramText !== undefined) {
      if (inst.name === '11pt_avg') continue;
      if (inst.name === 'utility') ['a', 'b', 'c', 'd'].forEach((k, i) => (params[k] = inst.params.numbers[i]));
      if (inst.name === 'set_F') params['x'] = inst.params.numbers[0];
      if (inst.kind === 'pairParams') {
        const gains: Record<string, number> = {};
        for (const p of inst.params.pairs) {
          if (/^[+-]?\d+$/.test(p.name)) gains[String(Number.parseInt(p.name, 10))] = p.value;
          else if (p.name === 'p' && (inst.name === 'rbp' || inst.name === 'rbp_resid')) params['p'] = p.value;
        }
        if (Object.keys(gains).length > 0 && inst.name !== 'rbp_resid') params['gains'] = gains;
      }
    }
    inst.valueNames.forEach((_, j) => {
      const cutoff = inst.kind === 'cutLong' || inst.kind === 'cutDouble' ? inst.params.numbers[j] : undefined;
      out[inst.offset + j] = format(fam, params, cutoff);
    });
  }
  return out;
}
