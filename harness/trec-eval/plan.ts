import { closest } from '../util/suggest.js';
import { UsageError } from '../errors.js';
import { MIN_GEO_MEAN } from '../metrics/kernels/ap.js';
import { relString, type GainOverride } from '../metrics/kernels/gain.js';
import { TREC_NICKNAMES, trecEvalMeasures, type TrecKernel, type TrecNickname, type TrecParamKind, type TrecParams } from '../metrics/measure.js';
import { formatFixed, padRight } from '../metrics/printf.js';
import type { JudgedRanking } from '../metrics/ranking.js';
import { REFERENCE_KERNELS, type MeasureKernelSet } from './kernel-set.js';

/**
 * trec_eval's measure table and its per-query values, reproduced: the measures, their order, the `-m` syntax
 * (`name[.params]`, nicknames `official`, `set`, `all_trec`), parameter parsing (atol/atof), value names
 * (`P_5`, `iprec_at_recall_0.10`, `utility_2,-1,0,0`), which measures print per query and in the summary,
 * and how each is averaged. The measures come from the one measure registry (harness/metrics/measure.ts),
 * which holds each family's trec_eval names, parameters and reference kernels; this file adds the lines of
 * trec_eval's table that are no measure (runid, num_q, relstring). Facts from usnistgov/trec_eval 10.0
 * (measures.c, meas_init.c, meas_avg.c, meas_print_*.c, m_*.c); the code is ours.
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

type Kind = TrecParamKind | 'runid' | 'relstring';
type Averaging = 'mean' | 'sum' | 'gm' | 'numQ' | 'none';

/** One line of trec_eval's measure table (te_trec_measures). */
interface Def {
  readonly name: string;
  readonly order: number;
  readonly kind: Kind;
  readonly avg: Averaging;
  /** Printed per query (-q)? */
  readonly perQuery: boolean;
  readonly defaults?: readonly number[];
  readonly nicknames: readonly TrecNickname[];
  /** The canonical name of its values and the parameters that name takes; none for runid and relstring. */
  readonly canonical?: { readonly name: string; readonly params: readonly string[] };
  /** Computes the measure's values into out[off..]; `p` holds the parsed cutoffs / doubles / pairs. */
  readonly compute: TrecKernel;
}

const EVERY: readonly TrecNickname[] = TREC_NICKNAMES;

/** The lines of trec_eval's table that are no measure of the registry: the run tag, the query count, the relstring. */
const NON_MEASURES: readonly Def[] = [
  { name: 'runid', order: 0, kind: 'runid', avg: 'none', perQuery: false, nicknames: EVERY, compute: () => {} },
  {
    name: 'num_q',
    order: 1,
    kind: 'count',
    avg: 'numQ',
    perQuery: false,
    nicknames: EVERY,
    canonical: { name: 'NumQ', params: [] },
    compute: (_r, _q, _p, o, i) => void (o[i] = 1),
  },
  // A string, not a number: computeTrecRow returns it (relString) beside the row.
  { name: 'relstring', order: 12, kind: 'relstring', avg: 'none', perQuery: true, defaults: [10], nicknames: ['all_trec'], compute: () => {} },
];

/** The measures in trec_eval's te_trec_measures order, which is also the output order. */
const DEFS: readonly Def[] = [
  ...NON_MEASURES,
  ...trecEvalMeasures().map(
    ({ family, params, measure: t }): Def => ({
      name: t.name,
      order: t.order,
      kind: t.kind,
      // meas_avg.c: counts are summed, gm_* averaged geometrically (a log per query, which is not printed).
      avg: t.kind === 'count' ? 'sum' : t.geometric ? 'gm' : 'mean',
      perQuery: !t.geometric,
      ...(t.defaults === undefined ? {} : { defaults: t.defaults }),
      nicknames: t.nicknames,
      canonical: { name: t.canonical ?? family, params },
      compute: t.compute,
    }),
  ),
].sort((a, b) => a.order - b.order);

const NO_PAIRS: readonly GainOverride[] = Object.freeze([]);

/** trec_eval measures and nicknames for preference / judgment-group formats, which this tool does not read. */
export const UNREAD_TREC_NAMES: ReadonlySet<string> = new Set(['all_prefs', 'prefs', 'qrels_jg', 'map_avgjg', 'P_avgjg', 'Rprec_mult_avgjg', 'yaap']);

/** The trec_eval measure names we implement, in output order. */
export const TREC_MEASURE_NAMES: readonly string[] = DEFS.map((d) => d.name);

/** The measures each nickname stands for. */
const NICKNAMES: ReadonlyMap<string, readonly string[]> = new Map(
  TREC_NICKNAMES.map((n) => [n, DEFS.filter((d) => d.nicknames.includes(n)).map((d) => d.name)]),
);

/** One requested measure with its parameters resolved and its value names. */
export interface TrecInstance {
  readonly name: string;
  readonly kind: Kind;
  readonly avg: Averaging;
  readonly perQuery: boolean;
  readonly params: TrecParams;
  /** The raw parameter text from the command line, or undefined for the defaults. */
  readonly paramText: string | undefined;
  /** The printed names of this measure's values (`P_5`, `P_10`, ...); empty for runid. */
  readonly valueNames: readonly string[];
  /** valueNames padded as trec_eval prints them (`%-22s`). */
  readonly printNames: readonly string[];
  /** Index of this measure's first value in a query's value row. */
  readonly offset: number;
  readonly canonical: Def['canonical'];
  /** The kernel the plan's MeasureKernelSet gave, or the reference kernel. */
  readonly calc: TrecKernel;
}

/** The compiled measure list of one trec_eval invocation. */
export interface TrecPlan {
  readonly instances: readonly TrecInstance[];
  /** Values per query (the row width). */
  readonly width: number;
  readonly settings: TrecEvalSettings;
  /** Where the values come from: the set's kernels where it has one, else the registry's reference kernels. */
  readonly kernels: MeasureKernelSet;
}

/**
 * Parses the -m arguments as trec_eval does (name[.params], nicknames, first parameter list wins). `kernels`
 * opts in to faster kernels (fast/kernels.ts); without, every value comes from its reference kernel.
 */
export function compileTrecPlan(settings: TrecEvalSettings, kernels: MeasureKernelSet = REFERENCE_KERNELS): TrecPlan {
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
    if (UNREAD_TREC_NAMES.has(name)) {
      throw new UsageError(
        `measure '${name}' needs the preference or judgment-group qrels formats (-R prefs, qrels_prefs, qrels_jg), which harness eval does not read`,
      );
    }
    const nick = NICKNAMES.get(name);
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
    const inst = instantiate(def, paramText, offset, kernels.kernel(def.name) ?? def.compute);
    instances.push(inst);
    offset += inst.valueNames.length;
  }
  return { instances, width: offset, settings, kernels };
}

function instantiate(def: Def, paramText: string | undefined, offset: number, calc: TrecKernel): TrecInstance {
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
  const { name, kind, avg, perQuery, canonical } = def;
  return { name, kind, avg, perQuery, params: { numbers, pairs }, paramText, valueNames, printNames, offset, canonical, calc };
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

/** The -M and -J settings as judgeRankingWithLevels takes them. */
export function judgeOptions(s: TrecEvalSettings): { readonly maxDocs?: number; readonly judgedOnly: boolean } {
  return { ...(s.maxDocs === undefined ? {} : { maxDocs: s.maxDocs }), judgedOnly: s.judgedOnly };
}

/** The document trec_eval ranks alone for a qrels query missing from the run under -c (then zeroes some values). */
export const BOGUS_DOCNO = 'ceci_nest_pas_un_docno';

/**
 * Computes one query's value row (`row[off .. off + plan.width)`, zeroed first) and returns the
 * relstring when that measure is requested. `bogus` applies trec_eval's clean-up for a -c filler query.
 */
export function computeTrecRow(plan: TrecPlan, r: JudgedRanking, row: Float64Array, off: number, bogus = false): string | undefined {
  const q = plan.kernels.begin(r, plan.settings.relevanceLevel, plan.settings.numDocsInColl);
  row.fill(0, off, off + plan.width);
  let rel: string | undefined;
  for (const inst of plan.instances) {
    if (inst.kind === 'relstring') rel = relString(r, inst.params.numbers[0]);
    else inst.calc(r, q, inst.params, row, off + inst.offset);
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
  for (const inst of plan.instances) {
    const params = inst.canonical && canonicalParams(inst, inst.canonical.params, plan.settings.relevanceLevel);
    if (params === undefined) continue;
    inst.valueNames.forEach((_, j) => {
      const cutoff = inst.kind === 'cutLong' || inst.kind === 'cutDouble' ? inst.params.numbers[j] : undefined;
      out[inst.offset + j] = format(inst.canonical!.name, params, cutoff);
    });
  }
  return out;
}

/**
 * A value's canonical parameters from the trec_eval parameters it was given, as the family names them
 * (`params`): the level as `rel` where the family takes one, utility's coefficients as a, b, c, d, set_F's
 * as x, numeric pair names as gains and `p=` as rbp's persistence. Undefined when the family has no name
 * for the parameters (11pt_avg's recall points).
 */
function canonicalParams(inst: TrecInstance, params: readonly string[], level: number): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  if (params.includes('rel') && level !== 1) out['rel'] = level;
  if (inst.paramText === undefined) return out;
  if (inst.kind === 'doubleParams') {
    const named = params.filter((k) => k !== 'rel');
    if (named.length === 0) return undefined;
    named.forEach((k, i) => (out[k] = inst.params.numbers[i]));
  }
  if (inst.kind === 'pairParams') {
    const gains: Record<string, number> = {};
    for (const p of inst.params.pairs) {
      if (/^[+-]?\d+$/.test(p.name)) gains[String(Number.parseInt(p.name, 10))] = p.value;
      else if (p.name === 'p' && params.includes('p')) out['p'] = p.value;
    }
    if (Object.keys(gains).length > 0 && params.includes('gains')) out['gains'] = gains;
  }
  return out;
}
