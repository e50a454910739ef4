import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InputError, UsageError } from '../errors.js';
import { readFolderFiles, recoverFolder, tempWriterPid, writeFolderAtomic } from '../cache/index.js';
import { buildReportData } from '../decision/build.js';
import { renderComparisonsCsv, renderPerQueryCsv, renderSummaryCsv } from './csv.js';
import { renderAnswersCsv } from './answer-level.js';
import { renderHtml } from './html.js';
import { renderLatex } from './latex.js';
import { renderMarkdown } from './markdown.js';
import { REPORT_VERSION, type ReportData, type ReportInput } from '../decision/types.js';

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
    ...(data.answerLevel === undefined ? {} : { 'answers.csv': renderAnswersCsv(data) as string }),
  };
}

/** `report.json`'s exact bytes: two-space JSON, trailing newline. */
export function serializeReport(data: ReportData): string {
  return `${JSON.stringify(data, null, 2)}\n`;
}

/** The manifest `harness ablate` writes beside the report; the only file with timestamps. */
export const MANIFEST_JSON = 'manifest.json';

/** The names a report folder may hold; a folder with anything else is not replaced (it is not ours). */
function isReportFileName(name: string): boolean {
  return (
    name === REPORT_JSON ||
    name === MANIFEST_JSON ||
    name === 'runs' ||
    name === 'answers' ||
    name === 'qrels.trec' ||
    name === 'strata.tsv' ||
    name === 'screenshot.png' ||
    /^report\.(md|tex|html)$/.test(name) ||
    name.endsWith('.csv') ||
    tempWriterPid(name) !== undefined
  );
}

/**
 * Refuses to replace an existing folder that holds files a report never has (`--out .` or a typo), since a
 * whole-folder write deletes whatever was there.
 */
async function assertReplaceable(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const foreign = names.filter((n) => !isReportFileName(n));
  if (foreign.length > 0) {
    throw new UsageError(
      `${dir} exists and holds files that are not part of a report (${foreign.slice(0, 3).join(', ')}${foreign.length > 3 ? ', ...' : ''}); writing the report would replace them`,
      {
        hint: 'choose a new or empty folder for the report',
      },
    );
  }
}

/**
 * Builds the report data from `input` and writes the whole folder `dir` at once: `report.json`, every rendering
 * and `extra` (runs, the manifest), replacing what was there through {@link writeFolderAtomic}, so a reader or
 * a crash sees the old folder or the new one, never a mix. Returns the data and the file names written.
 */
export async function writeReport(
  dir: string,
  input: ReportInput,
  extra: ReadonlyMap<string, string | Uint8Array> | (() => ReadonlyMap<string, string | Uint8Array>) = new Map(),
): Promise<{ data: ReportData; files: string[] }> {
  return writeReportData(dir, buildReportData(input), extra);
}

/**
 * {@link writeReport} for data already built. `extra` may be a function, called once report.json and the
 * renderings exist, so a manifest can record how long building and rendering took.
 */
export async function writeReportData(
  dir: string,
  data: ReportData,
  extra: ReadonlyMap<string, string | Uint8Array> | (() => ReadonlyMap<string, string | Uint8Array>) = new Map(),
): Promise<{ data: ReportData; files: string[] }> {
  await assertReplaceable(dir);
  const files = new Map<string, string | Uint8Array>([[REPORT_JSON, serializeReport(data)], ...Object.entries(renderAll(data))]);
  for (const [name, content] of typeof extra === 'function' ? extra() : extra) files.set(name, content);
  await writeFolderAtomic(dir, files);
  return { data, files: [...files.keys()] };
}

const REQUIRED_KEYS = [
  'name',
  'runs',
  'measures',
  'queries',
  'perQuery',
  'strata',
  'summary',
  'comparisons',
  'families',
  'warnings',
  'compare',
  'evalset',
  'letters',
  'command',
] as const;

/**
 * Reads `dir/report.json`. Refuses a missing file, a file that is not JSON, and a report of another layout
 * version, each with what to do, rather than rendering something half-right.
 */
export async function readReport(dir: string): Promise<ReportData> {
  const file = join(dir, REPORT_JSON);
  const state = await recoverFolder(dir);
  if (state.busy) {
    throw new InputError(dir, undefined, `the report folder is being replaced by process ${state.pid} right now`, {
      hint: 'try again when that run has finished',
    });
  }
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
  const data = parsed as ReportData;
  await assertSameRun(dir, data);
  return data;
}

/**
 * A folder written before whole-folder writes could hold a report.json of one run beside the manifest of
 * another (a rerun killed half-way). The eval-set fingerprint both record tells them apart.
 */
async function assertSameRun(dir: string, data: ReportData): Promise<void> {
  const file = join(dir, MANIFEST_JSON);
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return;
  let manifest: { evalset?: { fingerprint?: unknown }; configHash?: unknown };
  try {
    manifest = JSON.parse(text) as typeof manifest;
  } catch (err) {
    throw new InputError(file, undefined, 'not valid JSON: the report folder is incomplete', {
      hint: `rerun the command recorded in report.json: ${data.command}`,
      cause: err,
    });
  }
  const fp = manifest.evalset?.fingerprint;
  if (fp !== undefined && fp !== data.evalset.fingerprint) {
    throw new InputError(
      dir,
      undefined,
      `report.json and manifest.json come from different runs (eval-set fingerprint ${String(fp).slice(0, 12)} in the manifest, ${data.evalset.fingerprint.slice(0, 12)} in report.json): the folder is incomplete`,
      {
        hint: `rerun the command recorded in report.json: ${data.command}`,
      },
    );
  }
}

/** `harness report DIR`: re-renders every file from `DIR/report.json`, recomputing nothing. */
export async function rerenderReport(dir: string): Promise<{ data: ReportData; files: string[] }> {
  const data = await readReport(dir);
  const renderings = renderAll(data);
  const files = new Map<string, string | Uint8Array>(await readFolderFiles(dir));
  for (const [name, text] of Object.entries(renderings)) files.set(name, text);
  await writeFolderAtomic(dir, files);
  return { data, files: Object.keys(renderings) };
}
