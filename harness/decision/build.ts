import { ConfigError } from '../errors.js';
import { comparisonPairs, computeComparisons, type StratumIndex } from '../compare/comparisons.js';
import { measureTable, type ReportedMeasure, reportedMeasures } from '../compare/measures.js';
import { ppiRows } from './ppi.js';
import { validationOf } from './validate.js';
import { evaluateGate } from './gate.js';
import { OVERALL, REPORT_VERSION, type ReportData, type ReportInput, type StratumInfo, type SummaryRow } from './types.js';
import { answersOf, decide } from './verdict.js';
import { deriveWarnings } from './warnings.js';

/**
 * Problems that make a ReportInput unusable, each as `dotted.path: message` so a caller can wrap them in a
 * ConfigError naming its config file. Empty when the input is sound. `measures` are `input.measures` read.
 */
export function checkReportInput(input: ReportInput, measures: readonly ReportedMeasure[] = reportedMeasures(input.measures)): string[] {
  const problems: string[] = [];
  const runIds = input.runs.map((r) => r.id);
  const known = `known runs: ${runIds.join(', ')}`;
  if (runIds.length === 0) problems.push('runs: a report needs at least one run');
  const seen = new Set<string>();
  for (const id of runIds) {
    if (seen.has(id)) problems.push(`runs: duplicate run id "${id}"`);
    seen.add(id);
  }
  if (input.queries.length === 0) problems.push('queries: a report needs at least one query');
  const strata = new Set(input.queries.map((q) => q.stratum));
  if (strata.size > 1 && strata.has(OVERALL)) {
    problems.push(`queries: stratum "${OVERALL}" is reserved for the overall row when there are several strata; rename it`);
  }
  const b = input.compare.baseline;
  if (b !== undefined && !seen.has(b)) problems.push(`compare.baseline: unknown run "${b}" (${known})`);
  if (input.gate) {
    const g = input.gate;
    if (g.baseline !== undefined && !seen.has(g.baseline)) problems.push(`gate.baseline: unknown run "${g.baseline}" (${known})`);
    if (!seen.has(g.candidate)) problems.push(`gate.candidate: unknown run "${g.candidate}" (${known})`);
    const gateMeasure = measures.find((m) => m.spelling === g.measure);
    if (!gateMeasure) {
      problems.push(`gate.measure: "${g.measure}" is not among the measures (${input.measures.join(', ')})`);
    } else if (!gateMeasure.tested) {
      problems.push(`gate.measure: "${g.measure}" is a coverage diagnostic, not a quality measure; gate on e.g. nDCG@10`);
    }
    const gateBaseline = g.baseline ?? b ?? runIds[0];
    if (gateBaseline === g.candidate) problems.push(`gate.candidate: "${g.candidate}" is also the gate's baseline`);
  }
  (input.compare.questions ?? []).forEach((q, i) => problems.push(...questionProblems(q, i, seen, known, measures)));
  for (const id of runIds) {
    const perRun = input.perQuery[id];
    if (!perRun) {
      problems.push(`perQuery.${id}: missing`);
      continue;
    }
    for (const m of input.measures) {
      const v: readonly number[] | undefined = perRun[m];
      if (!v) problems.push(`perQuery.${id}.${m}: missing`);
      else if (v.length !== input.queries.length) {
        problems.push(`perQuery.${id}.${m}: ${v.length} values for ${input.queries.length} queries`);
      } else {
        const bad = v.findIndex((x) => !Number.isFinite(x));
        if (bad >= 0) problems.push(`perQuery.${id}.${m}[${bad}]: ${v[bad]} is not a finite number (query ${input.queries[bad]?.id})`);
      }
    }
  }
  return problems;
}

/** A `compare.questions` entry whose runs are not in the report, or whose measure is not a tested one of it. */
function questionProblems(
  q: ReportInput['compare']['questions'][number],
  i: number,
  runs: ReadonlySet<string>,
  known: string,
  measures: readonly ReportedMeasure[],
): string[] {
  const at = `compare.questions[${i}]`;
  const out: string[] = [];
  for (const k of ['baseline', 'system'] as const) if (!runs.has(q[k])) out.push(`${at}.${k}: unknown run "${q[k]}" (${known})`);
  if (q.baseline === q.system) out.push(`${at}.system: "${q.system}" is also its baseline`);
  const m = q.measure === undefined ? undefined : measures.find((x) => x.spelling === q.measure);
  if (q.measure !== undefined && !m?.tested)
    out.push(
      `${at}.measure: "${q.measure}" is not a tested measure of this report (${measures
        .filter((x) => x.tested)
        .map((x) => x.spelling)
        .join(', ')})`,
    );
  return out;
}

/** Strata in order of first appearance, then the pooled overall row when there are two or more. */
export function stratumIndices(queries: ReportInput['queries']): StratumIndex[] {
  const order: string[] = [];
  const members = new Map<string, number[]>();
  queries.forEach((q, i) => {
    let list = members.get(q.stratum);
    if (!list) {
      list = [];
      members.set(q.stratum, list);
      order.push(q.stratum);
    }
    list.push(i);
  });
  const out: StratumIndex[] = order.map((id) => ({ id, indices: members.get(id) as number[] }));
  if (order.length > 1) out.push({ id: OVERALL, indices: queries.map((_, i) => i) });
  return out;
}

/** a, b, ..., z, then aa, ab, ...: the superscript letter of each run in significance marks. */
export function runLetter(i: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz';
  return i < 26 ? (alphabet[i] as string) : runLetter(Math.floor(i / 26) - 1) + (alphabet[i % 26] as string);
}

/** Mean of every run on every measure in every stratum, stratum by stratum, then run, then measure. */
function summaryRows(input: ReportInput, strata: readonly StratumIndex[], runIds: readonly string[]): SummaryRow[] {
  const summary: SummaryRow[] = [];
  for (const s of strata) {
    for (const run of runIds) {
      for (const measure of input.measures) {
        const v = input.perQuery[run]?.[measure] as readonly number[];
        let sum = 0;
        for (const i of s.indices) sum += v[i] as number;
        summary.push({ stratum: s.id, run, measure, n: s.indices.length, mean: sum / s.indices.length });
      }
    }
  }
  return summary;
}

/**
 * Report as data: from per-query scores to means, paired comparisons, warnings and the gate verdict. Pure and
 * deterministic (seeded draws, no clock), so `report.json` is byte-identical for the same input. `measures` are
 * `input.measures` read: a study passes the values its config loader read; an input from a file is read here.
 *
 * @throws ConfigError when the input is inconsistent (unknown baseline, missing per-query vectors, ...).
 */
export function buildReportData(input: ReportInput, measures: readonly ReportedMeasure[] = reportedMeasures(input.measures)): ReportData {
  const problems = checkReportInput(input, measures);
  if (problems.length > 0) throw new ConfigError(`report ${input.name}`, problems);
  const runIds = input.runs.map((r) => r.id);
  const baseline = input.compare.baseline ?? (runIds[0] as string);
  const strata = stratumIndices(input.queries);
  const testedMeasures = measures.filter((m) => m.tested).map((m) => m.spelling);
  const gateBaseline = input.gate ? (input.gate.baseline ?? baseline) : undefined;
  const pairs = comparisonPairs(
    runIds,
    baseline,
    input.compare.allPairs,
    input.gate && gateBaseline ? { baseline: gateBaseline, system: input.gate.candidate } : undefined,
    ...(input.compare.questions ?? []).map((q) => ({ baseline: q.baseline, system: q.system })),
  );
  const gateStrata =
    input.gate === undefined
      ? []
      : input.gate.rule === 'gain-overall' || strata.length === 1
        ? [(strata[strata.length - 1] as StratumIndex).id]
        : strata.map((s) => s.id);
  const { comparisons, families } = computeComparisons(
    input.perQuery,
    input.queries.map((q) => q.id),
    pairs,
    strata,
    measures,
    input.compare,
    input.gate && gateBaseline
      ? {
          pair: { baseline: gateBaseline, system: input.gate.candidate },
          measure: input.gate.measure,
          strata: gateStrata,
          ...(input.gate.rule === 'equivalent' ? { equivalence: true } : {}),
        }
      : undefined,
  );
  const summary = summaryRows(input, strata, runIds);
  const strataInfo: StratumInfo[] = strata.map((s) => ({ id: s.id, n: s.indices.length, overall: s.id === OVERALL && strata.length > 1 }));
  const letters: Record<string, string> = {};
  runIds.forEach((id, i) => (letters[id] = runLetter(i)));
  const partial = {
    version: REPORT_VERSION,
    ...input,
    baseline,
    letters,
    strata: strataInfo,
    testedMeasures,
    summary,
    comparisons,
    families,
  } satisfies Omit<ReportData, 'warnings' | 'gateResult' | 'decision' | 'answers'>;
  // Human labels add the PPI-corrected deltas (which `gate.judged: ppi` decides on) and the judge's validation.
  const core = input.humanLabels ? { ...partial, ppi: ppiRows(partial) } : partial;
  const gateResult = input.gate && gateBaseline ? evaluateGate(core, { ...input.gate, baseline: gateBaseline }) : undefined;
  const withGate = gateResult ? { ...core, gateResult } : core;
  const validation = validationOf(withGate, (labelled) => buildReportData(labelled, measures), measureTable(measures));
  const full = validation ? { ...withGate, validation } : withGate;
  const warnings = deriveWarnings(full, measures);
  return { ...full, warnings, ...(gateResult ? { decision: decide(full, gateResult, warnings) } : {}), answers: answersOf(full, measureTable(measures)) };
}
