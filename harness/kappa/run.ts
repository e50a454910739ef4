import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { loadEvalSet } from '../../evalset/load.js';
import type { Document, Query } from '../../evalset/types.js';
import { writeFileAtomic } from '../cache/index.js';
import { InputError, InputProblems, UsageError } from '../errors.js';
import { readJudgments, type Judgments } from '../judge/store.js';
import type { Logger } from '../log.js';
import { type KappaKind, type KappaReport, kappaReport, type LabelledPair } from './report.js';
import { queryCoverage } from './coverage.js';
import type { KappaRelevance } from './relevance.js';
import { type KappaItem, kappaSample, querySample } from './sample.js';
import { keysOf, loadSession, newSession, runSession, type SessionState, saveSession } from './session.js';

export interface KappaOptions {
  readonly judgments: string;
  /** The session file; default `<judgments>/kappa-session.json`. */
  readonly session?: string;
  /** Human labels from a file (TREC qrels or `queryId docId grade`) instead of a session. */
  readonly labels?: string;
  /** Only print the report of the labels so far. */
  readonly reportOnly: boolean;
  readonly size?: number;
  /** `query`: a new session samples queries and labels every judged pair of each (see querySample). */
  readonly by?: 'pair' | 'query';
  /** Queries to sample by query; default defaultQuerySampleSize. */
  readonly queries?: number;
  /** Exact query counts for some strata, by query. */
  readonly perStratum?: Readonly<Record<string, number>>;
  readonly oversample?: Readonly<Record<string, number>>;
  readonly seed: number;
  readonly on: KappaKind;
  /** Where the binary kappa splits, and why there (kappaRelevance). */
  readonly relevance: KappaRelevance;
  readonly threshold: number;
  readonly resamples: number;
  readonly level: number;
  readonly disagreements?: string;
}

export interface KappaIo {
  readonly input: AsyncIterable<Buffer | string>;
  readonly write: (text: string) => void;
  readonly log: Logger;
}

export interface KappaOutcome {
  /** Undefined when the session stopped before the end and no report was asked for. */
  readonly report?: KappaReport;
  readonly complete: boolean;
  readonly session?: SessionState;
}

function judgedItems(j: Judgments): KappaItem[] {
  return j.records.filter((r) => r.status === 'judged').map((r) => ({ queryId: r.queryId, docId: r.docId, stratum: r.stratum }));
}

function llmGrades(j: Judgments): Map<string, number> {
  return new Map(j.records.filter((r) => r.status === 'judged').map((r) => [`${r.queryId}\t${r.docId}`, r.grade as number] as const));
}

/** The labelled pairs of a session: items with a grade (skips and unreached items are left out). */
export function sessionPairs(s: SessionState, llm: ReadonlyMap<string, number>): LabelledPair[] {
  const out: LabelledPair[] = [];
  s.items.forEach((it, i) => {
    const h = s.labels[i];
    const l = llm.get(`${it.queryId}\t${it.docId}`);
    if (typeof h === 'number' && l !== undefined) out.push({ ...it, human: h, llm: l });
  });
  return out;
}

/** One line of a labels file as its fields: `queryId docId grade` or TREC qrels `queryId iter docId grade`. */
function labelFields(line: string): { queryId: string; docId: string; grade: string } | undefined {
  const f = line.trim().split(/\s+/);
  if (f.length === 4) return { queryId: f[0] as string, docId: f[2] as string, grade: f[3] as string };
  if (f.length === 3) return { queryId: f[0] as string, docId: f[1] as string, grade: f[2] as string };
  return undefined;
}

/**
 * Pairs from a labels file, every line checked: a grade 0-3, a pair the judge graded, each pair once. Every
 * bad line is reported at its `file:line` (up to 50 at once), never dropped.
 */
export async function filePairs(file: string, j: Judgments): Promise<LabelledPair[]> {
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new InputError(file, undefined, `cannot be read (${err.code ?? err.message})`, { hint: 'give --labels the path of a labels file' });
  });
  const judged = new Map<string, (typeof j.records)[number]>(j.records.filter((r) => r.status === 'judged').map((r) => [`${r.queryId}\t${r.docId}`, r]));
  const out: LabelledPair[] = [];
  const problems: InputError[] = [];
  const seen = new Map<string, number>();
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '' || line.trimStart().startsWith('#')) return;
    const n = i + 1;
    const f = labelFields(line);
    if (f === undefined) return void problems.push(new InputError(file, n, 'not a label line: write queryId docId grade, or queryId 0 docId grade'));
    const key = `${f.queryId}\t${f.docId}`;
    const r = judged.get(key);
    const pair = `query ${f.queryId}, document ${f.docId}`;
    if (!/^[0-3]$/.test(f.grade)) problems.push(new InputError(file, n, `${pair}: grade ${JSON.stringify(f.grade)} is not 0-3`));
    else if (!r) problems.push(new InputError(file, n, `${pair}: the judge has no grade for this pair (not pooled, a parse failure or skipped)`));
    else if (seen.has(key)) problems.push(new InputError(file, n, `${pair}: labelled twice (first at line ${seen.get(key)})`));
    else out.push({ queryId: f.queryId, docId: f.docId, stratum: r.stratum, human: Number(f.grade), llm: r.grade as number });
    if (!seen.has(key)) seen.set(key, n);
  });
  if (problems.length > 0)
    throw problems.length === 1 ? (problems[0] as InputError) : new InputProblems(problems.slice(0, 50), { truncated: problems.length > 50 });
  if (out.length === 0) throw new InputError(file, undefined, 'no labels');
  return out;
}

/** The CSV of the pairs where human and judge disagree (ids and grades only: no text, so nothing sensitive). */
export function disagreementsCsv(pairs: readonly LabelledPair[]): string {
  return stringify(
    pairs.filter((p) => p.human !== p.llm).map((p) => [p.queryId, p.docId, p.stratum, p.human, p.llm]),
    { header: true, columns: ['queryId', 'docId', 'stratum', 'human', 'judge'] },
  );
}

/** A new session: a sample of pairs, or by query every judged pair of a sample of queries. */
async function startSession(opts: KappaOptions, j: Judgments, sessionFile: string): Promise<SessionState> {
  const oversample = opts.oversample === undefined ? {} : { oversample: opts.oversample };
  const items =
    opts.by === 'query'
      ? querySample(judgedItems(j), {
          seed: opts.seed,
          ...(opts.queries === undefined ? {} : { queries: opts.queries }),
          ...(opts.perStratum === undefined ? {} : { perStratum: opts.perStratum }),
          ...oversample,
        })
      : kappaSample(judgedItems(j), { seed: opts.seed, ...(opts.size === undefined ? {} : { size: opts.size }), ...oversample });
  if (items.length === 0) throw new UsageError(`${opts.judgments} holds no judged pairs to verify`);
  const s = newSession(j.manifest.qrelsVersion, opts.seed, items, opts.by === 'query' ? 'query' : undefined);
  await saveSession(sessionFile, s);
  return s;
}

/**
 * `harness kappa`: hand-verify a stratified sample of the judge's grades, blind to them, in a resumable session
 * (or read the labels from a file), then report agreement and the kappa check, tied to the qrels version.
 */
export async function runKappa(opts: KappaOptions, io: KappaIo): Promise<KappaOutcome> {
  const j = await readJudgments(opts.judgments);
  const llm = llmGrades(j);
  const report = (pairs: LabelledPair[]) => ({
    ...kappaReport(pairs, {
      qrelsVersion: j.manifest.qrelsVersion,
      on: opts.on,
      ...opts.relevance,
      threshold: opts.threshold,
      resamples: opts.resamples,
      seed: opts.seed,
      level: opts.level,
      judged: llm.size,
      judge: { model: j.manifest.judge.model, servedModels: j.manifest.servedModels ?? [] },
    }),
    queries: ((c) => ({ complete: c.complete.length, incomplete: c.incomplete.length }))(queryCoverage(pairs, j.records)),
  });
  const finish = async (pairs: LabelledPair[]) => {
    if (opts.disagreements !== undefined) await writeFileAtomic(opts.disagreements, disagreementsCsv(pairs));
    return report(pairs);
  };
  if (opts.labels !== undefined) return { report: await finish(await filePairs(opts.labels, j)), complete: true };

  const sessionFile = opts.session ?? resolve(opts.judgments, 'kappa-session.json');
  const strata = new Map(j.records.filter((r) => r.status === 'judged').map((r) => [`${r.queryId}\t${r.docId}`, r.stratum] as const));
  let s = await loadSession(sessionFile, { qrelsVersion: j.manifest.qrelsVersion, judged: strata });
  if (opts.reportOnly) {
    if (!s) throw new UsageError(`no session at ${sessionFile} to report on`, { hint: 'label some pairs first: harness kappa --judgments J' });
    const pairs = sessionPairs(s, llm);
    if (pairs.length === 0) throw new UsageError(`${sessionFile} holds no labels yet`);
    return { report: await finish(pairs), complete: s.position >= s.items.length, session: s };
  }
  if (!s) {
    s = await startSession(opts, j, sessionFile);
    io.log.info(
      `kappa: new session of ${s.items.length} pairs${s.by === 'query' ? ` (${new Set(s.items.map((it) => it.queryId)).size} queries, every judged pair of each)` : ''} in ${sessionFile}`,
    );
  } else io.log.info(`kappa: resuming ${sessionFile} at pair ${Math.min(s.position + 1, s.items.length)} of ${s.items.length}`);

  const es = await loadEvalSet(
    {
      format: j.manifest.evalset.format,
      path: resolve(opts.judgments, j.manifest.evalset.path),
      source: `${opts.judgments}/manifest.json`,
      ...(j.manifest.evalset.split === undefined ? {} : { split: j.manifest.evalset.split }),
    },
    io.log,
  );
  const queries = new Map<string, Query>(es.queries.map((q) => [q.id, q] as const));
  const docs = new Map<string, Document>(es.documents.map((d) => [d.id, d] as const));
  const state = s;
  const complete = await runSession(state, {
    keys: keysOf(io.input),
    write: io.write,
    view: (it) => ({
      queryText: queries.get(it.queryId)?.text ?? '(query not in the eval set)',
      docText: ((d) => (d === undefined ? '(document not in the corpus)' : d.title ? `${d.title}\n${d.text}` : d.text))(docs.get(it.docId)),
    }),
    save: (x) => saveSession(sessionFile, x),
  });
  if (!complete) return { complete, session: state };
  const pairs = sessionPairs(state, llm);
  if (pairs.length === 0) throw new UsageError('every pair was skipped: no labels to compare');
  return { report: await finish(pairs), complete, session: state };
}
