import { GRADES, type KappaEstimate, type KappaEstimateOptions, type KappaKind, kappaEstimate } from '../stats/kappa-estimate.js';

export { KAPPA_KINDS, type KappaEstimate, type KappaKind, kappaEstimate } from '../stats/kappa-estimate.js';

/** One hand-labelled pair with the judge's grade. */
export interface LabelledPair {
  readonly queryId: string;
  readonly docId: string;
  readonly stratum: string;
  readonly human: number;
  readonly llm: number;
}

export interface KappaTable {
  readonly n: number;
  readonly none: KappaEstimate;
  readonly linear: KappaEstimate;
  readonly quadratic: KappaEstimate;
  readonly binary: KappaEstimate;
}

export interface KappaReport extends KappaTable {
  readonly qrelsVersion: string;
  readonly strata: readonly (KappaTable & { readonly stratum: string })[];
  /** confusion[h][l]: pairs the human graded h and the judge l. */
  readonly confusion: readonly (readonly number[])[];
  /** Share of each grade 0-3, per rater. */
  readonly baseRates: { readonly human: readonly number[]; readonly llm: readonly number[] };
  /** The kappa the check reads. */
  readonly on: KappaKind;
  /** `binary` splits here: a grade at or above it is relevant (the grade the decision's measure first gains from). */
  readonly relevantAt: number;
  /** Where `relevantAt` comes from, for the report: `the gate's nDCG@10`, `--relevant-at 2`, or the default's reason. */
  readonly relevantFrom: string;
  readonly threshold: number;
  readonly level: number;
  readonly resamples: number;
  /** The labelled pairs the check needs ({@link minimumLabels}): below it the check is `TOO-FEW`, never a PASS. */
  readonly minimum: number;
  /** The judged pairs of the judgments: what a sample is drawn from. */
  readonly judged: number;
  /** The judge as its manifest records it: the model asked for and the models the server answered as. */
  readonly judge?: { readonly model: string; readonly servedModels: readonly string[] };
  /**
   * Queries the labels cover whole (every pair the judge graded for them labelled: usable as query-level human
   * labels) and those covered in part. Set by `harness kappa`, which knows the judgments.
   */
  readonly queries?: { readonly complete: number; readonly incomplete: number };
  /** The kappa check: PASS when the `on` kappa is at least `threshold`; TOO-FEW below `minimum` labelled pairs. */
  readonly check: KappaCheck;
}

export type KappaCheck = 'PASS' | 'FAIL' | 'UNDEFINED' | 'TOO-FEW';

/** The README's promise: a kappa check reads at least 50 labelled pairs. */
export const KAPPA_MIN_LABELS = 50;

/**
 * The labelled pairs a kappa check needs: {@link KAPPA_MIN_LABELS}, or every judged pair when the judgments
 * hold fewer (then the labels cover the whole population and kappa has no sampling error to hide).
 */
export function minimumLabels(judged: number): number {
  return Math.min(KAPPA_MIN_LABELS, judged);
}

function table(pairs: readonly LabelledPair[], opts: KappaEstimateOptions): KappaTable {
  const human = pairs.map((p) => p.human);
  const llm = pairs.map((p) => p.llm);
  return {
    n: pairs.length,
    none: kappaEstimate(human, llm, 'none', opts),
    linear: kappaEstimate(human, llm, 'linear', opts),
    quadratic: kappaEstimate(human, llm, 'quadratic', opts),
    binary: kappaEstimate(human, llm, 'binary', opts),
  };
}

/**
 * The check's outcome on the `on` estimate. No raw agreement at all is a FAIL whatever kappa says (with two
 * constant raters kappa is 0, and a threshold of 0 would pass it). An undefined kappa is left with perfect raw
 * agreement on one category only: both raters agree, but on a sample without variation, which cannot show
 * whether the judge tells the categories apart: UNDEFINED, never a PASS.
 */
export function checkOf(n: number, minimum: number, e: KappaEstimate, threshold: number): KappaCheck {
  if (n < minimum) return 'TOO-FEW';
  if (e.agreement === 0) return 'FAIL';
  if (e.kappa === undefined) return 'UNDEFINED';
  return e.kappa >= threshold ? 'PASS' : 'FAIL';
}

/**
 * Agreement between hand labels and the judge: kappa unweighted, linear, quadratic and binary (relevant at
 * `relevantAt`, the grade the decision's measure first gains from), each with a bootstrap interval, overall and
 * per stratum; the confusion matrix, both raters' base rates, and the kappa check on the `on` kappa
 * ({@link checkOf}). The sample oversamples some strata and is not reweighted: the overall kappa is over the
 * sample as drawn.
 */
export function kappaReport(
  pairs: readonly LabelledPair[],
  opts: {
    qrelsVersion: string;
    on: KappaKind;
    relevantAt: number;
    relevantFrom: string;
    threshold: number;
    resamples: number;
    seed: number;
    level: number;
    /** Judged pairs in the judgments; the minimum sample is read from it. */
    judged: number;
    judge?: KappaReport['judge'];
  },
): KappaReport {
  const boot = { resamples: opts.resamples, seed: opts.seed, level: opts.level, relevantAt: opts.relevantAt };
  const all = table(pairs, boot);
  const strata = [...new Set(pairs.map((p) => p.stratum))].sort().map((stratum) => ({
    stratum,
    ...table(
      pairs.filter((p) => p.stratum === stratum),
      boot,
    ),
  }));
  const confusion = GRADES.map((h) => GRADES.map((l) => pairs.filter((p) => p.human === h && p.llm === l).length));
  const rate = (pick: (p: LabelledPair) => number) => GRADES.map((g) => (pairs.length === 0 ? 0 : pairs.filter((p) => pick(p) === g).length / pairs.length));
  const minimum = minimumLabels(opts.judged);
  return {
    ...all,
    qrelsVersion: opts.qrelsVersion,
    strata,
    confusion,
    baseRates: { human: rate((p) => p.human), llm: rate((p) => p.llm) },
    on: opts.on,
    relevantAt: opts.relevantAt,
    relevantFrom: opts.relevantFrom,
    threshold: opts.threshold,
    level: opts.level,
    resamples: opts.resamples,
    minimum,
    judged: opts.judged,
    ...(opts.judge === undefined ? {} : { judge: opts.judge }),
    check: checkOf(pairs.length, minimum, all[opts.on], opts.threshold),
  };
}

/** A kappa to three decimals (never `-0.000`); `n/a` where there is none (both raters gave one grade only). */
const f3 = (x: number | undefined) => (x === undefined ? 'n/a' : x.toFixed(3).replace(/^-(0\.000)$/, '$1'));
const est = (e: KappaEstimate) => `${f3(e.kappa)}${e.ci ? ` [${f3(e.ci.lo)}, ${f3(e.ci.hi)}]` : ''}`;

const percent = (x: number | undefined) => (x === undefined ? 'n/a' : `${(100 * x).toFixed(1)}%`);
/** How the binary kappa splits the scale, and why there. */
const relevance = (r: Pick<KappaReport, 'relevantAt' | 'relevantFrom'>) => `relevant at grade >= ${r.relevantAt}, ${r.relevantFrom}`;

/** What both raters said of every pair when kappa is undefined (each used one category, the same one). */
function oneCategory(r: KappaReport): string {
  if (r.on !== 'binary') return `every pair grade ${r.baseRates.human.findIndex((x) => x > 0)}`;
  const relevant = r.baseRates.human.slice(r.relevantAt).reduce((a, b) => a + b, 0) > 0;
  return relevant ? `every pair relevant (grade >= ${r.relevantAt})` : `every pair not relevant (grade < ${r.relevantAt})`;
}

/** The kappa check's line: its outcome, the kappa and raw agreement it read, the threshold, or the counts it lacks. */
function checkLine(r: KappaReport): string {
  const checked = r[r.on];
  const name = r.on === 'binary' ? `binary kappa (${relevance(r)})` : r.on === 'none' ? 'unweighted kappa' : `${r.on} kappa`;
  if (r.check === 'TOO-FEW') {
    return `kappa check: TOO-FEW: ${r.n} labelled pairs, the check needs ${r.minimum} (at least ${KAPPA_MIN_LABELS}, or every judged pair when fewer; ${r.judged} judged)`;
  }
  if (r.check === 'UNDEFINED')
    return `kappa check: UNDEFINED: ${name} is undefined: both raters call ${oneCategory(r)}, raw agreement 100.0% on a sample without variation, which cannot show whether the judge tells them apart`;
  const weighted = r.on === 'binary' ? `; weighted (quadratic) kappa ${f3(r.quadratic.kappa)}` : '';
  if (checked.agreement === 0) return `kappa check: FAIL: raw agreement 0.0% (human and judge differ on every pair); ${name} ${f3(checked.kappa)}${weighted}`;
  const lowCi = checked.ci !== undefined && checked.kappa !== undefined && checked.kappa >= r.threshold && checked.ci.lo < r.threshold;
  return (
    `kappa check: ${r.check}: ${name} ${f3(checked.kappa)} ${r.check === 'PASS' ? '>=' : '<'} threshold ${r.threshold}; raw agreement ${percent(checked.agreement)}${weighted}` +
    (lowCi ? ` (the interval reaches below it: label more pairs to be sure)` : '')
  );
}

export function formatKappaReport(r: KappaReport): string {
  const L: string[] = [];
  L.push(`kappa: hand labels vs the judge, qrels version ${r.qrelsVersion}`);
  L.push(`n = ${r.n} labelled pairs; intervals: ${Math.round(r.level * 100)}% percentile bootstrap, ${r.resamples} resamples`);
  if (r.judge !== undefined) {
    const served = r.judge.servedModels.filter((m) => m !== r.judge?.model);
    L.push(`judge: model ${r.judge.model}${served.length > 0 ? `, served as ${served.join(', ')}` : ''}`);
  }
  L.push(`  unweighted  ${est(r.none)}`);
  L.push(`  linear      ${est(r.linear)}`);
  L.push(`  quadratic   ${est(r.quadratic)}`);
  L.push(`  binary      ${est(r.binary)}  (${relevance(r)})`);
  L.push(`raw agreement: ${percent(r.none.agreement)} on grades, ${percent(r.binary.agreement)} on relevance (grade >= ${r.relevantAt})`);
  L.push(`per stratum (n, unweighted, quadratic, binary at grade >= ${r.relevantAt}):`);
  for (const s of r.strata) L.push(`  ${s.stratum.padEnd(12)} ${String(s.n).padStart(4)}  ${est(s.none)}  ${est(s.quadratic)}  ${est(s.binary)}`);
  if ([r, ...r.strata].some((t) => [t.none, t.quadratic, t.binary, t.linear].some((e) => e.kappa === undefined)))
    L.push('  (n/a: no kappa where both raters gave one grade only)');
  L.push('confusion (rows: human 0-3, columns: judge 0-3):');
  r.confusion.forEach((row, h) => L.push(`  ${h}  ${row.map((c) => String(c).padStart(5)).join('')}`));
  const pct = (xs: readonly number[]) => xs.map((x, g) => `${g}: ${(100 * x).toFixed(1)}%`).join(', ');
  L.push(`base rates: human ${pct(r.baseRates.human)}; judge ${pct(r.baseRates.llm)}`);
  if (r.queries !== undefined)
    L.push(
      `queries labelled whole (every judged pair): ${r.queries.complete}; in part: ${r.queries.incomplete}${r.queries.incomplete > 0 ? ' (not usable as query-level labels until finished)' : ''}`,
    );
  L.push(checkLine(r));
  return `${L.join('\n')}\n`;
}
