import { readFile } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { readStrataFile } from '../../evalset/strata.js';
import { bomNote, readTrecQrels, readTrecRun } from '../../evalset/trec.js';
import type { Qrels, Run } from '../../evalset/types.js';
import { canonicalJson, sha256Hex } from '../cache/index.js';
import { InputError, UsageError } from '../errors.js';
import { compareIds, formatMeasure, type Measure, parseMeasure } from '../metrics/index.js';
import { relevanceLevelProblem } from '../metrics/evaluate.js';
import { scoreRuns } from '../compare/score.js';
import { type CompareConfig, compareSchema, type CompareConfigInput } from '../compare/config.js';
import type { ReportInput, ReportRun } from '../decision/types.js';

/** Measures `harness compare` evaluates when `--measures` is not given. */
export const DEFAULT_COMPARE_MEASURES = ['nDCG@10', 'R@100', 'RR', 'Judged@10'] as const;

export interface CompareFiles {
  /** TREC run files, as the user wrote them (relative paths stay relative in the report). */
  readonly runs: readonly string[];
  readonly qrels: string;
  /** `queryId<TAB>stratum` per line; every qrels query must be listed. Absent: one stratum `all`. */
  readonly strata?: string;
  readonly measures?: readonly string[];
  readonly name?: string;
  readonly compare?: CompareConfigInput;
  /** Resolves a path as written to a path on disk (the CLI resolves against its cwd). */
  readonly resolvePath: (p: string) => string;
  /** The exact command that regenerates the report. */
  readonly command: string;
}

function shortHash(data: string | Uint8Array): string {
  return `sha256:${sha256Hex(data).slice(0, 16)}`;
}

/**
 * Run ids: the TREC run tags when they are distinct and non-empty (run ids are run tags, by convention), else
 * the file names without extension; two runs that still share an id are a usage error.
 */
function runIds(files: readonly string[], tags: readonly string[]): string[] {
  const distinct = (ids: readonly string[]) => new Set(ids).size === ids.length && ids.every((t) => t !== '');
  if (distinct(tags)) return [...tags];
  const names = files.map((f) => basename(f, extname(f)));
  if (distinct(names)) return names;
  throw new UsageError(`runs share a tag and a file name (${names.join(', ')}); give each run file a distinct name`);
}

/** The measures to score, read once: each parsed, and its canonical spelling, which must be listed once only. */
function compareMeasures(listed: readonly string[], qrels: Qrels, qrelsPath: string): { measures: Measure[]; names: string[] } {
  const measures = listed.map((m) => parseMeasure(m));
  const names = measures.map(formatMeasure);
  const dup = names.find((m, i) => names.indexOf(m) !== i);
  if (dup) throw new UsageError(`--measures lists ${dup} twice`);
  const levelProblem = relevanceLevelProblem(qrels, 1, measures);
  if (levelProblem) throw new InputError(qrelsPath, undefined, levelProblem);
  return { measures, names };
}

/** Each query's stratum from the strata file, which must list every judged query. */
async function readCompareStrata(files: CompareFiles, queryIds: readonly string[]): Promise<ReadonlyMap<string, string> | undefined> {
  if (files.strata === undefined) return undefined;
  const strataPath = files.resolvePath(files.strata);
  const strataOf = await readStrataFile(strataPath, new Set(queryIds));
  const unlisted = queryIds.filter((q) => !strataOf.has(q));
  if (unlisted.length > 0) {
    throw new InputError(
      strataPath,
      undefined,
      `${unlisted.length} qrels quer${unlisted.length === 1 ? 'y is' : 'ies are'} not listed (first: ${unlisted.slice(0, 3).join(', ')})`,
      {
        hint: 'list every judged query with its stratum, so no query silently leaves the comparison',
      },
    );
  }
  return strataOf;
}

/** Reads every run file in order, each under its run id, with the file's bytes as its fingerprint. */
async function loadRuns(files: CompareFiles, notes: string[]): Promise<{ runMap: Map<string, Run>; runs: ReportRun[] }> {
  const loaded = [];
  for (const f of files.runs) {
    const path = files.resolvePath(f);
    const [{ run, runTag }, bytes] = await Promise.all([readTrecRun(path, () => notes.push(bomNote(f))), readFile(path)]);
    // As harness eval: a run with no result would score 0 everywhere and enlarge the correction family.
    if (run.size === 0) throw new InputError(path, undefined, 'the run has no result lines', { hint: 'check that the file is the run you meant' });
    loaded.push({ file: f, run, runTag, fingerprint: shortHash(bytes) });
  }
  const ids = runIds(
    files.runs,
    loaded.map((l) => l.runTag),
  );
  const runMap = new Map<string, Run>();
  const runs: ReportRun[] = [];
  loaded.forEach((l, i) => {
    const id = ids[i] as string;
    runMap.set(id, l.run);
    runs.push({ id, kind: 'trec-file', fingerprint: l.fingerprint, label: l.file });
  });
  return { runMap, runs };
}

/** How many distinct documents the qrels judge, and whether they judge any below the relevance level. */
function qrelsShape(qrels: Qrels): { judgedDocuments: number; judgesNonRelevant: boolean } {
  const judgedDocs = new Set<string>();
  // A grade below the relevance level (trec_eval's default 1) means the qrels judge non-relevant documents too.
  let judgesNonRelevant = false;
  for (const docs of qrels.values()) {
    for (const [d, grade] of docs) {
      judgedDocs.add(d);
      if (grade < 1) judgesNonRelevant = true;
    }
  }
  return { judgedDocuments: judgedDocs.size, judgesNonRelevant };
}

/** The `compare:` settings from the flags, with a baseline that must be one of the runs. */
function compareConfig(files: CompareFiles, ids: readonly string[]): CompareConfig {
  const parsed = compareSchema.safeParse(files.compare ?? {});
  if (!parsed.success) {
    throw new UsageError(parsed.error.issues.map((i) => `--${String(i.path[0] ?? 'compare')}: ${i.message}`).join('; '));
  }
  const compare = parsed.data;
  if (compare.baseline !== undefined && !ids.includes(compare.baseline)) {
    throw new UsageError(`--baseline ${compare.baseline} is not one of the runs (${ids.join(', ')})`);
  }
  return compare;
}

/**
 * `harness compare`: evaluates TREC runs against TREC qrels and assembles a ReportInput, the same shape
 * `harness ablate` produces, so the report, the gate and `harness adr` work on runs made by any tool.
 * Queries are the qrels queries (missing run queries score 0, extra run queries are dropped; both are
 * counted in the eval set's notes).
 */
export async function compareInput(files: CompareFiles): Promise<ReportInput> {
  if (files.runs.length < 2) throw new UsageError(`compare needs at least two runs, got ${files.runs.length}`);
  const qrelsPath = files.resolvePath(files.qrels);
  const notes: string[] = [];
  const qrels = await readTrecQrels(qrelsPath, () => notes.push(bomNote(files.qrels)));
  const { measures, names } = compareMeasures(files.measures ?? DEFAULT_COMPARE_MEASURES, qrels, qrelsPath);
  const queryIds = [...qrels.keys()].sort(compareIds);
  if (queryIds.length === 0) throw new InputError(qrelsPath, undefined, 'the qrels judge no query');
  const strataOf = await readCompareStrata(files, queryIds);
  const queries = queryIds.map((id) => ({ id, stratum: strataOf?.get(id) ?? 'all' }));
  const { runMap, runs } = await loadRuns(files, notes);
  const scored = scoreRuns(qrels, runMap, measures, queryIds);
  notes.push(...scored.notes);
  const strataCounts: Record<string, number> = {};
  for (const q of queries) strataCounts[q.stratum] = (strataCounts[q.stratum] ?? 0) + 1;
  const shape = qrelsShape(qrels);
  notes.push(`documents counts the ${shape.judgedDocuments} distinct judged documents (no corpus is read by compare)`);
  const qrelsFingerprint = shortHash(await readFile(qrelsPath));
  const compare = compareConfig(
    files,
    runs.map((r) => r.id),
  );
  const configHash = sha256Hex(
    canonicalJson({
      v: 1,
      qrels: qrelsFingerprint,
      runs: runs.map((r) => [r.id, r.fingerprint]),
      measures: names,
      strata: queries.map((q) => [q.id, q.stratum]),
      compare: compare as unknown as Record<string, string | number | boolean>,
    }),
  ).slice(0, 16);
  return {
    name: files.name ?? 'compare',
    configHash,
    evalset: {
      name: basename(files.qrels),
      format: 'trec-qrels',
      path: files.qrels,
      fingerprint: qrelsFingerprint,
      queries: queryIds.length,
      documents: shape.judgedDocuments,
      strata: strataCounts,
      notes,
      qrelsSource: 'gold',
      qrelsJudgesNonRelevant: shape.judgesNonRelevant,
      qrelsCompleteness: 'pooled',
    },
    runs,
    measures: names,
    queries,
    perQuery: scored.perQuery,
    compare,
    command: files.command,
  };
}
