import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InputError } from '../errors.js';
import { writeFileAtomic } from '../cache/index.js';
import { buildReportData } from './build.js';
import { renderComparisonsCsv, renderPerQueryCsv, renderSummaryCsv } from './csv.js';
import { renderHtml } from './html.js';
import { renderLatex } from './latex.js';
import { renderMarkdown } from './markdown.js';
import { REPORT_VERSION, type ReportData, type ReportInput } from './types.js';

export const REPORT_JSON = 'report.json';

/** Every rendering of a report, by file name. Pure: the same data gives the same bytes. */
export function renderAll(data: ReportData): Record<string, string> {
  return {
    'report.md': renderMarkdown(data),
    'summary.csv': renderSummaryCsv(data),
    'comparisons.csv': renderComparisonsCsv(data),
    'per-query.csv': renderPerQueryCsv(data),
    'report.tex': renderLatex(data),
    'report.html': renderHtml(data),
  };
}

/** `report.json`'s exact bytes: two-space JSON, trailing newline. */
export function serializeReport(data: ReportData): string {
  return `${JSON.stringify(data, null, 2)}\n`;
}

async function writeRenderings(dir: string, data: ReportData): Promise<string[]> {
  const files = renderAll(data);
  for (const [name, text] of Object.entries(files)) await writeFileAtomic(join(dir, name), text);
  return Object.keys(files);
}

/**
 * Builds the report data from `input` and writes `report.json` plus every rendering into `dir`, each file
 * atomically (a reader never sees a torn file). Returns the data and the file names written.
 */
export async function writeReport(dir: string, input: ReportInput): Promise<{ data: ReportData; files: string[] }> {
  const data = buildReportData(input);
  await writeFileAtomic(join(dir, REPORT_JSON), serializeReport(data));
  const files = await writeRenderings(dir, data);
  return { data, files: [REPORT_JSON, ...files] };
}

const REQUIRED_KEYS = ['name', 'runs', 'measures', 'queries', 'perQuery', 'strata', 'summary', 'comparisons', 'families', 'warnings', 'compare', 'evalset', 'letters', 'command'] as const;

/**
 * Reads `dir/report.json`. Refuses a missing file, a file that is not JSON, and a report of another layout
 * version, each with what to do, rather than rendering something half-right.
 */
export async function readReport(dir: string): Promise<ReportData> {
  const file = join(dir, REPORT_JSON);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new InputError(file, undefined, 'no report.json here', {
      hint: 'point at a folder written by `harness ablate` or `harness compare --out DIR`',
      cause: err,
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new InputError(file, undefined, `not valid JSON (${(err as Error).message})`, { cause: err });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InputError(file, undefined, 'expected a JSON object');
  }
  const obj = parsed as Record<string, unknown>;
  if (obj['version'] !== REPORT_VERSION) {
    throw new InputError(file, undefined, `report.json version ${JSON.stringify(obj['version'])}; this harness reads version ${REPORT_VERSION}`, {
      hint: 'regenerate the report with the command recorded in it (its `command` field), using this version of harness',
    });
  }
  const missing = REQUIRED_KEYS.filter((k) => !(k in obj));
  if (missing.length > 0) throw new InputError(file, undefined, `missing field${missing.length === 1 ? '' : 's'} ${missing.join(', ')}`);
  return parsed as ReportData;
}

/** `harness report DIR`: re-renders every file from `DIR/report.json`, recomputing nothing. */
export async function rerenderReport(dir: string): Promise<{ data: ReportData; files: string[] }> {
  const data = await readReport(dir);
  return { data, files: await writeRenderings(dir, data) };
}
