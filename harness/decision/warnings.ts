import { annRecallWarnings } from './ann.js';
import { answerLevelWarnings } from './answer-level.js';
import { GATE_FAMILY } from '../compare/comparisons.js';
import { zeroWeightInputs } from '../systems/fuse.js';
import { faultSentence } from '../systems/result-check.js';
import type { ReportedMeasure } from '../compare/measures.js';
import { judgeFooled } from './audit.js';
import { decisionDependsOnHoles } from './holes.js';
import { fmtDelta, fmtMde, fmtMean, fmtP } from './format.js';
import { answerJudged, gateOnAnswerJudge, type ReportCore } from './select.js';
import type { Comparison, ReportRun, ReportWarning, WarningSeverity } from './types.js';

/**
 * A warning rule: a pure function of the report's numbers (and its measures, read) that returns zero or more
 * caveats. Rules never change numbers; they say what the numbers cannot carry. Each rule returns at most one
 * warning per kind of subject (the gate, the exploratory comparisons, the runs), so a report lists a handful,
 * not one per row.
 */
export type WarningRule = (data: ReportCore, measures: readonly ReportedMeasure[]) => ReportWarning[];

const MAX_LISTED = 3;

function listSome(items: readonly string[]): string {
  const shown = items.slice(0, MAX_LISTED).join('; ');
  return items.length > MAX_LISTED ? `${shown}; and ${items.length - MAX_LISTED} more` : shown;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The strata the gate decides on: those of its confirmatory comparisons. */
function gateStrata(data: ReportCore): Set<string> {
  return new Set(data.comparisons.filter((c) => c.role === 'confirmatory').map((c) => c.stratum));
}

/** Runs the gate compares. */
function gateRuns(data: ReportCore): Set<string> {
  const g = data.gateResult?.config;
  return new Set(g ? [g.baseline, g.candidate] : []);
}

/** What {@link aboutSubjects} needs: the code, the subjects' ids, those on the gate, the message. */
interface SubjectsWarning {
  readonly code: string;
  readonly ids: readonly string[];
  readonly onGate: ReadonlySet<string>;
  readonly message: string;
}

/**
 * One warning about several subjects (strata, runs), listed in `subject`; it bears on the gate when one of them
 * does. None when there are no subjects.
 */
function aboutSubjects(w: SubjectsWarning): ReportWarning[] {
  if (w.ids.length === 0) return [];
  return [{ code: w.code, severity: 'warning', subject: w.ids.join(', '), gate: w.ids.some((id) => w.onGate.has(id)), message: w.message }];
}

/** One note (severity info, never on the gate). */
function note(w: Pick<ReportWarning, 'code' | 'subject' | 'message'>): ReportWarning[] {
  return [{ code: w.code, severity: 'info', subject: w.subject, gate: false, message: w.message }];
}

/** What {@link gateAndExploratory} needs: the code, the comparisons it is about, the gate item's severity and each item's message. */
interface ComparisonsWarning {
  readonly code: string;
  readonly hits: readonly Comparison[];
  readonly gateSeverity: WarningSeverity;
  readonly gate: (cs: readonly Comparison[]) => string;
  readonly exploratory: (cs: readonly Comparison[]) => string;
}

/**
 * The comparisons among `hits` in two items: the gate's (confirmatory) in one of `gateSeverity` on subject
 * `gate`, the exploratory ones in one note; each only when it has any.
 */
function gateAndExploratory(w: ComparisonsWarning): ReportWarning[] {
  const out: ReportWarning[] = [];
  const gate = w.hits.filter((c) => c.role === 'confirmatory');
  if (gate.length > 0) out.push({ code: w.code, severity: w.gateSeverity, subject: 'gate', gate: true, message: w.gate(gate) });
  const explore = w.hits.filter((c) => c.role === 'exploratory');
  if (explore.length > 0) out.push(...note({ code: w.code, subject: 'exploratory', message: w.exploratory(explore) }));
  return out;
}

/** Strata smaller than `compare.underpoweredBelow` queries, in one warning. */
const underpoweredStratum: WarningRule = (data) => {
  const small = data.strata.filter((s) => s.n < data.compare.underpoweredBelow);
  return aboutSubjects({
    code: 'underpowered-stratum',
    ids: small.map((s) => s.id),
    onGate: gateStrata(data),
    message:
      `${small.length === 1 ? 'stratum' : 'strata'} ${small.map((s) => `${s.id} (n=${s.n})`).join(', ')} ` +
      `${small.length === 1 ? 'has' : 'have'} fewer than ${data.compare.underpoweredBelow} queries: only large ` +
      'differences can reach significance there, and a non-significant result says little',
  });
};

/** Non-significant with |delta| below the MDE: "not seen", not "absent". */
function belowMde(c: Comparison): boolean {
  return !c.significant && c.mde !== null && c.mde > Math.abs(c.delta);
}

function describeBelowMde(c: Comparison): string {
  return `${c.system} vs ${c.baseline} on ${c.measure} in ${c.stratum}: delta ${fmtDelta(c.delta)}, MDE ${fmtMde(c.mde)}`;
}

/**
 * Non-significant comparisons whose observed |delta| is below the minimum detectable effect: the stratum was
 * too small to see a difference of that size. One warning for the gate's comparisons (a loss the gate could
 * not have seen), one note for all exploratory ones.
 */
const mdeAboveDelta: WarningRule = (data) =>
  gateAndExploratory({
    code: 'mde-above-delta',
    hits: data.comparisons.filter(belowMde),
    gateSeverity: 'warning',
    gate: (gate) =>
      `${plural(gate.length, 'gate comparison')} not significant with |delta| below the minimum detectable effect ` +
      `(${listSome(gate.map(describeBelowMde))}): the eval set cannot tell such a difference from none`,
    exploratory: (explore) =>
      `${plural(explore.length, 'exploratory comparison')} not significant with |delta| below the minimum detectable ` +
      `effect (${listSome(explore.map(describeBelowMde))}); these are not evidence of no effect`,
  });

/** The `Judged@k` measure to read coverage from: `Judged@10` when present, else the first `Judged@k`. */
function judgedMeasure(measures: readonly ReportedMeasure[]): ReportedMeasure | undefined {
  const judged = measures.filter((m) => m.measure.name === 'Judged');
  return judged.find((m) => m.measure.cutoff === 10) ?? judged[0];
}

/**
 * Whether judged qrels cover a run to the cutoff of `measure`: the judge pooled it (or every point a tuned run
 * picks from) at a depth at least the cutoff, and left no pooled pair ungraded. Then every document in its top
 * k is judged, and a Judged@k below 1 is empty ranks (a run shorter than k), not judgment holes.
 */
function judgedCover(data: ReportCore, measure: ReportedMeasure): (run: ReportCore['runs'][number]) => boolean {
  const j = data.evalset.judge;
  const cutoff = measure.measure.cutoff as number;
  if (j?.pooled === undefined || j.depth === undefined || j.holes !== 0 || !(cutoff <= j.depth)) return () => false;
  const pooled = new Set(j.pooled);
  return (run) =>
    pooled.has(run.id) || (run.kind === 'tuned' && data.runs.filter((r) => r.group === run.group && r.kind !== 'tuned').every((r) => pooled.has(r.id)));
}

/**
 * Judgment holes, read from Judged@k only where it means something: with qrels that hold non-relevant
 * judgments (a pool). Qrels that list only relevant documents make Judged@k equal to precision, so they get
 * one note instead of a warning per run.
 */
const judgmentHoles: WarningRule = (data, measures) => {
  if (data.evalset.qrelsCompleteness === 'complete') return [];
  const pooled = data.evalset.qrelsJudgesNonRelevant;
  if (pooled === false) {
    return note({
      code: 'qrels-relevant-only',
      subject: 'qrels',
      message:
        'the qrels list only relevant documents, so every unlisted document counts as not relevant and Judged@k ' +
        'equals precision: judgment holes cannot be measured from these qrels',
    });
  }
  if (pooled !== true) return [];
  const judged = judgedMeasure(measures);
  if (!judged) {
    // The holes check (condensed lists, Bpref) did run: only Judged@k's per-run coverage is missing.
    if (data.holes !== undefined) return [];
    return note({
      code: 'holes-unchecked',
      subject: 'measures',
      message:
        'no Judged@k measure in this report, so judgment holes were not checked; add Judged@10 to the measures to see how much of each top 10 was judged',
    });
  }
  const measure = judged.spelling;
  const threshold = data.compare.judgedThreshold;
  const covered = judgedCover(data, judged);
  const low = data.runs
    .filter((run) => !covered(run))
    .map((run) => ({ run: run.id, rows: data.summary.filter((r) => r.run === run.id && r.measure === measure && r.mean < threshold) }))
    .filter((x) => x.rows.length > 0);
  return aboutSubjects({
    code: 'judged-holes',
    ids: low.map((x) => x.run),
    onGate: gateRuns(data),
    message:
      `${measure} below ${fmtMean(threshold)} for ${listSome(low.map((x) => `${x.run} (${x.rows.map((r) => `${r.stratum} ${fmtMean(r.mean)}`).join(', ')})`))}; ` +
      'unjudged documents count as not relevant, which penalises runs that retrieve outside the judged pool',
  });
};

/**
 * Runs that stand in for another model or system: their numbers are about the stand-in. A gate system that is
 * one is serious and named on its own (the verdict names it too); the others are one warning per stand-in,
 * listing its runs, so twenty grid points of one substitute read as one caveat.
 */
const substitutes: WarningRule = (data) => {
  const onGate = gateRuns(data);
  const subs = data.runs.filter((r) => r.substitute !== undefined);
  const gate = subs
    .filter((r) => onGate.has(r.id))
    .map(
      (r): ReportWarning => ({
        code: 'substitute',
        severity: 'serious',
        subject: r.id,
        gate: true,
        message: `gate system ${r.id} is a substitute: ${r.substitute}; the verdict is about the stand-in, not the original`,
      }),
    );
  const byText = new Map<string, string[]>();
  for (const r of subs.filter((x) => !onGate.has(x.id))) byText.set(r.substitute as string, [...(byText.get(r.substitute as string) ?? []), r.id]);
  const rest = [...byText].map(
    ([text, ids]): ReportWarning => ({
      code: 'substitute',
      severity: 'warning',
      subject: ids.join(', '),
      gate: false,
      message: `${ids.length === 1 ? `run ${ids[0]} is a substitute` : `${ids.length} runs are substitutes (${listSome(ids)})`}: ${text}; their numbers describe the stand-in, not the original`,
    }),
  );
  return [...gate, ...rest];
};

/** Runs that never saw the eval set's Sensitive Documents (or saw them through another arm): not like for like. */
const sensitiveDocuments: WarningRule = (data) => {
  const onGate = gateRuns(data);
  return data.runs.flatMap((r): ReportWarning[] => {
    const s = r.sensitive;
    if (!s) return [];
    const n = plural(s.documents, 'sensitive document');
    return [
      {
        code: 'sensitive-documents',
        severity: 'warning',
        subject: r.id,
        gate: onGate.has(r.id),
        message:
          s.policy === 'skip'
            ? `run ${r.id} sends text off this machine, so the eval set's ${n} were left out of its corpus: it can never retrieve them, and its comparisons with runs that can are not like for like`
            : `run ${r.id} sends text off this machine, so the eval set's ${n} were retrieved by the local arm ${s.route} and merged by raw score: the two models' scores are not calibrated against each other`,
      },
    ];
  });
};

/**
 * Families in which no Monte Carlo randomization test can reach significance: the smallest p it can return is
 * 1/(B+1), and every correction offered here compares the smallest p with alpha/m first (Holm, Bonferroni,
 * Hommel and BH alike). With 10,000 permutations that caps m at about 500 tests at alpha 0.05.
 */
const permutationsTooFew: WarningRule = (data) => {
  if (data.compare.test !== 'randomization') return [];
  const floor = 1 / (data.compare.permutations + 1);
  return data.families
    .filter((f) => f.correction !== 'none' && f.size > 0 && floor > data.compare.alpha / f.size)
    .map((f) => ({
      code: 'permutations-too-few',
      severity: f.id === GATE_FAMILY ? 'serious' : 'warning',
      subject: f.id,
      gate: f.id === GATE_FAMILY,
      message:
        `family ${f.id} has ${f.size} tests: with ${data.compare.permutations} permutations the smallest attainable ` +
        `p is 1/${data.compare.permutations + 1}, above the first ${f.correction} threshold ` +
        `alpha/m = ${data.compare.alpha}/${f.size}, so no Monte Carlo comparison in it can be significant; set ` +
        `compare.permutations to at least ${Math.ceil(f.size / data.compare.alpha)}`,
    }));
};

/** Whether a run is a grid point that gives `input` weight 0 (alpha at an end of its range): degenerate by design. */
export function degenerateEndpoint(run: ReportRun, input: string): boolean {
  return run.point !== undefined && zeroWeightInputs(run.params).includes(input);
}

/**
 * Fusion inputs that the fusion's own parameters bar from its top-k: their zero contribution is not evidence.
 * A grid point that gives an input weight 0 is no misconfiguration but the end of a sweep (the fusion is its
 * other input alone there): those points get one note per grid, never a serious item.
 */
const unreachableInputs: WarningRule = (data) => {
  const barred = data.runs.flatMap((r) => (r.diagnostics?.inputs ?? []).filter((d) => !d.reachable).map((d) => ({ r, d })));
  const onGate = (r: ReportRun): boolean => r.id === data.gate?.candidate || r.id === data.gate?.baseline;
  const serious = barred
    .filter(({ r, d }) => !degenerateEndpoint(r, d.input))
    .map(
      ({ r, d }): ReportWarning => ({
        code: 'input-unreachable',
        severity: 'serious',
        subject: `${r.id} <- ${d.input}`,
        gate: onGate(r),
        message: `${r.id} can never place a document only ${d.input} ranks first in its top-${d.cutoff} (${d.reason}); a zero contribution of ${d.input} here says nothing about ${d.input}`,
      }),
    );
  const byGroup = new Map<string, { r: ReportRun; input: string }[]>();
  for (const { r, d } of barred.filter(({ r, d }) => degenerateEndpoint(r, d.input))) {
    const group = r.group ?? r.id;
    byGroup.set(group, [...(byGroup.get(group) ?? []), { r, input: d.input }]);
  }
  const notes = [...byGroup].map(
    ([group, points]): ReportWarning => ({
      code: 'degenerate-grid-endpoint',
      severity: 'info',
      subject: group,
      gate: points.some((p) => onGate(p.r)),
      message:
        `grid ${group}: ${listSome(points.map((p) => `${fmtPoint(p.r)} gives ${p.input} weight 0`))}; ` +
        `${points.length === 1 ? 'that point is a degenerate endpoint' : 'those points are degenerate endpoints'} of the sweep, ` +
        'each the other input(s) alone, so the input left out contributes nothing there by design',
    }),
  );
  return [...serious, ...notes];
};

/** `alpha=0` from a grid point; the run id when it has none. */
function fmtPoint(r: ReportRun): string {
  const entries = Object.entries(r.point ?? {}).filter(([k]) => k !== 'inputs');
  return entries.length === 0 ? r.id : entries.map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`).join(', ');
}

/**
 * Runs the Result check found empty for most queries or made mostly of ids the eval set lacks: their zeros are
 * a fault (a response mapping, an empty store, an id template), not evidence of a total miss. One warning per
 * fault and run, with its likely cause; the same sentences went to stderr when the run was made.
 */
const silentZeros: WarningRule = (data) => {
  const onGate = gateRuns(data);
  return data.runs.flatMap((r): ReportWarning[] => {
    const check = r.resultCheck;
    if (!check) return [];
    return check.faults.map((fault) => ({
      code: fault === 'empty' ? 'empty-results' : 'unknown-ids',
      severity: 'serious',
      subject: r.id,
      gate: onGate.has(r.id),
      message: `run ${r.id}: ${faultSentence(check, fault)}`,
    }));
  });
};

/**
 * Comparisons whose corrected p lies within two Monte Carlo standard errors of alpha: another seed could flip
 * them. The gate's family is redrawn with more permutations before this is raised, so a gate item means even
 * the largest draw count left it undecided.
 */
const pNearAlpha: WarningRule = (data) => {
  const describe = (c: Comparison): string =>
    `${c.system} vs ${c.baseline} on ${c.measure} in ${c.stratum}: corrected p ${fmtP(c.pAdjusted)} from ${c.permutations} permutations`;
  return gateAndExploratory({
    code: 'p-near-alpha',
    hits: data.comparisons.filter((c) => c.nearAlpha),
    gateSeverity: 'serious',
    gate: (gate) =>
      `${plural(gate.length, 'gate comparison')} with a corrected p within two Monte Carlo standard errors of alpha ` +
      `${data.compare.alpha} (${listSome(gate.map(describe))}): another seed could change the verdict; raise compare.permutations`,
    exploratory: (explore) =>
      `${plural(explore.length, 'exploratory comparison')} with a corrected p within two Monte Carlo standard errors of ` +
      `alpha (${listSome(explore.map(describe))}); their significance depends on the draws`,
  });
};

/**
 * A report scored on judged or gold+judged qrels whose judge was not validated against human labels for the same
 * qrels version, or failed validation (docs/adr/0038): its decision rests on grades nobody checked.
 */
const judgeUnvalidated: WarningRule = (data) => {
  const e = data.evalset;
  if (e.qrelsSource === 'gold' || data.humanLabels?.of === 'answers') return [];
  const v = data.validation;
  const onGate = data.gateResult !== undefined && !gateOnAnswerJudge(data);
  const base = { code: 'judge-unvalidated', severity: 'serious' as const, subject: 'judge', gate: onGate };
  const version = e.judge?.qrelsVersion;
  if (v === undefined)
    return [
      {
        ...base,
        message: `scored on ${e.qrelsSource} qrels with no human labels: nothing shows the decision holds under human grades; label whole queries (harness kappa --by query) and name the session in humanLabels:`,
      },
    ];
  if (version !== undefined && v.qrelsVersion !== version)
    return [
      {
        ...base,
        message: `the human labels were checked against qrels version ${v.qrelsVersion}, the report scores version ${version}; label the current judgments`,
      },
    ];
  if (!v.pass) return [{ ...base, message: `the judge failed validation on ${v.labelledQueries} human-labelled queries: ${v.failures.join('; ')}` }];
  return [];
};

/**
 * `Acc` graded by an answer judge that human answer labels (`answer.humanLabels`) did not validate, or that failed
 * the validation: accuracy that rests on an LLM's verdicts nobody checked (docs/adr/0045).
 */
const answerJudgeUnvalidated: WarningRule = (data) => {
  if (!answerJudged(data)) return [];
  const v = data.humanLabels?.of === 'answers' ? data.validation : undefined;
  const base = { code: 'judge-unvalidated', severity: 'serious' as const, subject: 'answer judge', gate: gateOnAnswerJudge(data) };
  if (v === undefined)
    return [
      {
        ...base,
        message:
          'Acc rests on the answer judge and no human answer labels: nothing shows its grades hold; label answers (harness kappa --answers) and name the session in answer.humanLabels',
      },
    ];
  if (!v.pass) return [{ ...base, message: `the answer judge failed validation on ${v.labelledQueries} human-labelled questions: ${v.failures.join('; ')}` }];
  return [];
};

/**
 * Every warning rule. A new kind of caveat (fusion diagnostics that find an arm unreachable, parameters tuned
 * on the test split) is one more rule here, reading whatever new field of ReportData carries its evidence.
 */
export const warningRules = {
  'underpowered-stratum': underpoweredStratum,
  'mde-above-delta': mdeAboveDelta,
  'judged-holes': judgmentHoles,
  substitute: substitutes,
  'sensitive-documents': sensitiveDocuments,
  'permutations-too-few': permutationsTooFew,
  'input-unreachable': unreachableInputs,
  'silent-zeros': silentZeros,
  'p-near-alpha': pNearAlpha,
  'judge-fooled': judgeFooled,
  'decision-depends-on-holes': decisionDependsOnHoles,
  'judge-unvalidated': judgeUnvalidated,
  'answer-judge-unvalidated': answerJudgeUnvalidated,
  'ann-recall': (data) => annRecallWarnings(data, gateRuns(data)),
  'answer-level': answerLevelWarnings, // answer level (issue 43): answer failures, judge flip rate
} as const satisfies Record<string, WarningRule>;

const SEVERITY_RANK: Record<WarningSeverity, number> = { serious: 0, warning: 1, info: 2 };

/** Every rule's warnings, those bearing on the gate first, then by severity, then in rule order. */
export function deriveWarnings(data: ReportCore, measures: readonly ReportedMeasure[]): ReportWarning[] {
  return Object.values(warningRules)
    .flatMap((rule: WarningRule) => rule(data, measures))
    .map((w, i) => ({ w, i }))
    .sort((x, y) => Number(y.w.gate) - Number(x.w.gate) || SEVERITY_RANK[x.w.severity] - SEVERITY_RANK[y.w.severity] || x.i - y.i)
    .map((x) => x.w);
}
