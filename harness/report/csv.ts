import { stringify } from 'csv-stringify/sync';
import { answerComparisonRows } from './answer-level.js';
import { findComparison } from '../decision/select.js';
import type { Comparison, ReportData } from '../decision/types.js';

/** Full-precision numbers (shortest round-trip form); CSV is data, rounding belongs to the readable renderings. */
function num(x: number | null | undefined): string {
  return x === null || x === undefined ? '' : String(x);
}

/** An unbounded interval end is written the way spreadsheets and pandas read infinity. */
function ciBound(x: number | null, unbounded: string): string {
  return x === null ? unbounded : String(x);
}

const COMPARISON_COLUMNS = [
  'delta',
  'role',
  'ciLo',
  'ciHi',
  'ciLevel',
  'test',
  'p',
  'permutations',
  'pMcse',
  'pAdjusted',
  'nearAlpha',
  'family',
  'significant',
  'dz',
  'wins',
  'ties',
  'losses',
  'mde',
] as const;

function comparisonCells(c: Comparison | undefined): string[] {
  if (!c) return COMPARISON_COLUMNS.map(() => '');
  return [
    num(c.delta),
    c.role,
    ciBound(c.ci[0], '-Infinity'),
    ciBound(c.ci[1], 'Infinity'),
    num(c.ciLevel),
    c.test,
    num(c.p),
    num(c.permutations),
    num(c.pMcse),
    num(c.pAdjusted),
    String(c.nearAlpha),
    c.family,
    String(c.significant),
    num(c.dz),
    String(c.wins),
    String(c.ties),
    String(c.losses),
    num(c.mde),
  ];
}

/**
 * `summary.csv`: one row per stratum x run x measure with the mean and, for runs other than the baseline, the
 * comparison against the baseline (empty cells for the baseline itself and for untested measures).
 */
export function renderSummaryCsv(data: ReportData): string {
  const rows: string[][] = [['stratum', 'n', 'run', 'measure', 'mean', 'baseline', ...COMPARISON_COLUMNS]];
  for (const r of data.summary) {
    const c = r.run === data.baseline ? undefined : findComparison(data, r.stratum, r.measure, data.baseline, r.run);
    rows.push([r.stratum, String(r.n), r.run, r.measure, num(r.mean), data.baseline, ...comparisonCells(c)]);
  }
  return stringify(rows);
}

/** `comparisons.csv`: every comparison of the report, including all pairs and the gate's pair. */
export function renderComparisonsCsv(data: ReportData): string {
  const rows: string[][] = [['stratum', 'n', 'measure', 'system', 'baseline', 'systemMean', 'baselineMean', ...COMPARISON_COLUMNS]];
  for (const c of data.comparisons) {
    rows.push([c.stratum, String(c.n), c.measure, c.system, c.baseline, num(c.systemMean), num(c.baselineMean), ...comparisonCells(c)]);
  }
  rows.push(...answerComparisonRows(data, rows[0] as string[])); // answer level (issue 43): exact McNemar rows
  return stringify(rows);
}

/** `per-query.csv`: long format, one row per query x run x measure, in query order. */
export function renderPerQueryCsv(data: ReportData): string {
  const rows: string[][] = [['queryId', 'stratum', 'run', 'measure', 'value']];
  data.queries.forEach((q, i) => {
    for (const run of data.runs) {
      for (const m of data.measures) rows.push([q.id, q.stratum, run.id, m, num(data.perQuery[run.id]?.[m]?.[i])]);
    }
  });
  return stringify(rows);
}
