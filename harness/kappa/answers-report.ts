import { stringify } from 'csv-stringify/sync';
import { type KappaEstimate, kappaEstimate } from '../stats/kappa-estimate.js';
import { MIN_PPI_LABELS } from '../stats/ppi.js';
import { checkOf, type KappaCheck, KAPPA_MIN_LABELS, minimumLabels } from './report.js';

/** One hand-labelled answer with the judge's grade: 1 correct, 0 wrong. */
export interface LabelledAnswer {
  readonly questionId: string;
  readonly system: string;
  readonly stratum: string;
  /** Who graded it (`binary/gpt-4o-mini`, `recorded:mem0`). */
  readonly judge: string;
  readonly human: 0 | 1;
  readonly llm: 0 | 1;
}

/** Cohen's kappa on correct/wrong over some labelled answers, with its bootstrap interval and raw agreement. */
export interface AnswerKappaTable {
  readonly n: number;
  readonly kappa: KappaEstimate;
}

/** How many questions the labels cover for every system (usable as per-question human accuracy), overall and per stratum. */
export interface AnswerCoverage {
  readonly complete: number;
  readonly incomplete: number;
  readonly perStratum: readonly { readonly stratum: string; readonly complete: number }[];
}

/** The answer kappa check's report: agreement of the answer judge's grades with hand labels. */
export interface AnswerKappaReport extends AnswerKappaTable {
  /** The labelled report's grades version. */
  readonly gradesVersion: string;
  readonly strata: readonly (AnswerKappaTable & { readonly stratum: string })[];
  readonly systems: readonly (AnswerKappaTable & { readonly system: string })[];
  /** Counts by human label (rows) and the judge's grade (columns), correct first. */
  readonly confusion: readonly [readonly [number, number], readonly [number, number]];
  /** The share graded correct by each rater, on the labelled answers: a judge above the human is lenient. */
  readonly accuracy: { readonly human: number; readonly judge: number };
  /** The judges whose grades were checked (more than one when answers files carry recorded grades). */
  readonly judges: readonly string[];
  readonly threshold: number;
  readonly level: number;
  readonly resamples: number;
  /** Labelled answers the check needs: {@link KAPPA_MIN_LABELS}, or every graded answer when there are fewer. */
  readonly minimum: number;
  /** Labellable answers in the report: what a sample is drawn from. */
  readonly graded: number;
  readonly questions: AnswerCoverage;
  /** PASS when kappa is at least `threshold`; TOO-FEW below `minimum`; the relevance check's rules. */
  readonly check: KappaCheck;
}

export interface AnswerKappaOptions {
  readonly gradesVersion: string;
  /** The report's systems: a question counts as labelled whole when each has a label. */
  readonly systems: readonly string[];
  readonly threshold: number;
  readonly resamples: number;
  readonly seed: number;
  readonly level: number;
  readonly graded: number;
}

function table(xs: readonly LabelledAnswer[], opts: AnswerKappaOptions): AnswerKappaTable {
  const boot = { resamples: opts.resamples, seed: opts.seed, level: opts.level, relevantAt: 1 };
  return {
    n: xs.length,
    kappa: kappaEstimate(
      xs.map((x) => x.human),
      xs.map((x) => x.llm),
      'binary',
      boot,
    ),
  };
}

/** Questions every system has a label on, overall and per stratum, and those labelled for some systems only. */
export function answerCoverage(xs: readonly LabelledAnswer[], systems: readonly string[]): AnswerCoverage {
  const byQuestion = new Map<string, { stratum: string; systems: Set<string> }>();
  for (const x of xs) {
    const q = byQuestion.get(x.questionId) ?? { stratum: x.stratum, systems: new Set<string>() };
    q.systems.add(x.system);
    byQuestion.set(x.questionId, q);
  }
  const whole = [...byQuestion.values()].filter((q) => systems.every((s) => q.systems.has(s)));
  const strata = [...new Set(xs.map((x) => x.stratum))].sort();
  return {
    complete: whole.length,
    incomplete: byQuestion.size - whole.length,
    perStratum: strata.map((stratum) => ({ stratum, complete: whole.filter((q) => q.stratum === stratum).length })),
  };
}

/**
 * Agreement between hand labels and the answer judge on correct/wrong: Cohen's kappa with a percentile bootstrap
 * interval (the relevance check's estimator, on two categories), overall, per stratum and per system; the 2x2
 * confusion, both raters' accuracy, and the kappa check under the relevance check's rules and minimum sample.
 */
export function answerKappaReport(xs: readonly LabelledAnswer[], opts: AnswerKappaOptions): AnswerKappaReport {
  const all = table(xs, opts);
  const count = (h: 0 | 1, l: 0 | 1) => xs.filter((x) => x.human === h && x.llm === l).length;
  const share = (pick: (x: LabelledAnswer) => number) => (xs.length === 0 ? 0 : xs.reduce((t, x) => t + pick(x), 0) / xs.length);
  const minimum = minimumLabels(opts.graded);
  return {
    ...all,
    gradesVersion: opts.gradesVersion,
    strata: [...new Set(xs.map((x) => x.stratum))].sort().map((stratum) => ({
      stratum,
      ...table(
        xs.filter((x) => x.stratum === stratum),
        opts,
      ),
    })),
    systems: opts.systems
      .filter((s) => xs.some((x) => x.system === s))
      .map((system) => ({
        system,
        ...table(
          xs.filter((x) => x.system === system),
          opts,
        ),
      })),
    confusion: [
      [count(1, 1), count(1, 0)],
      [count(0, 1), count(0, 0)],
    ],
    accuracy: { human: share((x) => x.human), judge: share((x) => x.llm) },
    judges: [...new Set(xs.map((x) => x.judge))].sort(),
    threshold: opts.threshold,
    level: opts.level,
    resamples: opts.resamples,
    minimum,
    graded: opts.graded,
    questions: answerCoverage(xs, opts.systems),
    check: checkOf(xs.length, minimum, all.kappa, opts.threshold),
  };
}

const f3 = (x: number | undefined) => (x === undefined ? 'n/a' : x.toFixed(3).replace(/^-(0\.000)$/, '$1'));
const est = (e: KappaEstimate) => `${f3(e.kappa)}${e.ci ? ` [${f3(e.ci.lo)}, ${f3(e.ci.hi)}]` : ''}`;
const percent = (x: number | undefined) => (x === undefined ? 'n/a' : `${(100 * x).toFixed(1)}%`);

/** The check's line: its outcome and the kappa it read, or what it lacks. */
function checkLine(r: AnswerKappaReport): string {
  if (r.check === 'TOO-FEW')
    return `kappa check: TOO-FEW: ${r.n} labelled answers, the check needs ${r.minimum} (at least ${KAPPA_MIN_LABELS}, or every graded answer when fewer; ${r.graded} graded)`;
  const every = r.accuracy.human === 1 ? 'correct' : 'wrong';
  if (r.check === 'UNDEFINED')
    return `kappa check: UNDEFINED: both raters call every answer ${every}: raw agreement 100.0% on a sample without variation, which cannot show whether the judge tells right from wrong`;
  if (r.kappa.agreement === 0) return `kappa check: FAIL: raw agreement 0.0% (human and judge differ on every answer); kappa ${f3(r.kappa.kappa)}`;
  const lowCi = r.kappa.ci !== undefined && r.kappa.kappa !== undefined && r.kappa.kappa >= r.threshold && r.kappa.ci.lo < r.threshold;
  return (
    `kappa check: ${r.check}: kappa ${f3(r.kappa.kappa)} ${r.check === 'PASS' ? '>=' : '<'} threshold ${r.threshold}; raw agreement ${percent(r.kappa.agreement)}` +
    (lowCi ? ' (the interval reaches below it: label more answers to be sure)' : '')
  );
}

/** The report at the terminal: kappa and agreement, per stratum and system, the 2x2, coverage of questions, the check. */
export function formatAnswerKappaReport(r: AnswerKappaReport): string {
  const L: string[] = [];
  L.push(`kappa: hand labels vs the answer judge, grades version ${r.gradesVersion}`);
  L.push(`judge: ${r.judges.join(', ')}`);
  L.push(`n = ${r.n} labelled answers of ${r.graded} graded; interval: ${Math.round(r.level * 100)}% percentile bootstrap, ${r.resamples} resamples`);
  L.push(`  kappa (correct / wrong)  ${est(r.kappa)}`);
  L.push(
    `raw agreement ${percent(r.kappa.agreement)}; graded correct on these answers: human ${percent(r.accuracy.human)}, judge ${percent(r.accuracy.judge)}`,
  );
  L.push('per stratum (n, kappa, raw agreement):');
  for (const s of r.strata) L.push(`  ${s.stratum.padEnd(12)} ${String(s.n).padStart(4)}  ${est(s.kappa)}  ${percent(s.kappa.agreement)}`);
  L.push('per system (n, kappa, raw agreement):');
  for (const s of r.systems) L.push(`  ${s.system.padEnd(12)} ${String(s.n).padStart(4)}  ${est(s.kappa)}  ${percent(s.kappa.agreement)}`);
  if ([r, ...r.strata, ...r.systems].some((t) => t.kappa.kappa === undefined)) L.push('  (n/a: no kappa where both raters gave one grade only)');
  L.push('confusion (rows: human, columns: judge correct, judge wrong):');
  L.push(`  human correct ${String(r.confusion[0][0]).padStart(5)}${String(r.confusion[0][1]).padStart(5)}`);
  L.push(`  human wrong   ${String(r.confusion[1][0]).padStart(5)}${String(r.confusion[1][1]).padStart(5)}`);
  const q = r.questions;
  const per = q.perStratum.map((s) => `${s.stratum} ${s.complete}`).join(', ');
  L.push(
    `questions labelled for every system: ${q.complete} (${per}); in part: ${q.incomplete}; answer.humanLabels corrects a stratum's accuracy difference (PPI) from ${MIN_PPI_LABELS} such questions`,
  );
  L.push(checkLine(r));
  return `${L.join('\n')}\n`;
}

/** The CSV of the answers where human and judge disagree: ids and grades only, no text, so nothing sensitive. */
export function answerDisagreementsCsv(xs: readonly LabelledAnswer[]): string {
  return stringify(
    xs.filter((x) => x.human !== x.llm).map((x) => [x.system, x.questionId, x.stratum, x.human, x.llm, x.judge]),
    { header: true, columns: ['system', 'questionId', 'stratum', 'human', 'judge', 'judgeName'] },
  );
}
