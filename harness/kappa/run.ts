import { resolve } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { loadEvalSet } from '../../evalset/load.js';
import { readTrecQrels } from '../../evalset/trec.js';
import type { Document, Query } from '../../evalset/types.js';
import { writeFileAtomic } from '../cache/index.js';
import { InputError, UsageError } from '../errors.js';
import { readJudgments, type Judgments } from '../judge/store.js';
import type { Logger } from '../log.js';
import { type KappaKind, type KappaReport, kappaReport, type LabelledPair } from './report.js';
import { type KappaItem, kappaSample } from './sample.js';
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
  readonly oversample?: Readonly<Record<string, number>>;
  readonly seed: number;
  readonly on: KappaKind;
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
function sessionPairs(s: SessionState, llm: ReadonlyMap<string, number>): LabelledPair[] {
  const out: LabelledPair[] = [];
  s.items.forEach((it, i) => {
    const h = s.labels[i];
    const l = llm.get(`${it.queryId}\t${it.docId}`);
    if (typeof h === 'number' && l !== undefined) out.push({ ...it, human: h, llm: l });
  });
  return out;
}

/** Pairs from a labels file: every labelled pair must be one the judge graded. */
async function filePairs(file: string, j: Judgments): Promise<LabelledPair[]> {
  const human = await readTrecQrels(file);
  const judged = new Map(j.records.filter((r) => r.status === 'judged').map((r) => [`${r.queryId}\t${r.docId}`, r] as const));
  const out: LabelledPair[] = [];
  for (const [queryId, docs] of human) {
    for (const [docId, g] of docs) {
      const r = judged.get(`${queryId}\t${docId}`);
      if (!r)
        throw new InputError(
          file,
          undefined,
          `query ${queryId}, document ${docId}: the judge has no grade for this pair (not pooled, a parse failure or skipped)`,
        );
      if (!Number.isInteger(g) || g < 0 || g > 3) throw new InputError(file, undefined, `query ${queryId}, document ${docId}: grade ${g} is not 0-3`);
      out.push({ queryId, docId, stratum: r.stratum, human: g, llm: r.grade as number });
    }
  }
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

/**
 * `harness kappa`: hand-verify a stratified sample of the judge's grades, blind to them, in a resumable session
 * (or read the labels from a file), then report agreement and the kappa check, tied to the qrels version.
 */
export async function runKappa(opts: KappaOptions, io: KappaIo): Promise<KappaOutcome> {
  const j = await readJudgments(opts.judgments);
  const llm = llmGrades(j);
  const report = (pairs: LabelledPair[]) =>
    kappaReport(pairs, {
      qrelsVersion: j.manifest.qrelsVersion,
      on: opts.on,
      threshold: opts.threshold,
      resamples: opts.resamples,
      seed: opts.seed,
      level: opts.level,
    });
  const finish = async (pairs: LabelledPair[]) => {
    if (opts.disagreements !== undefined) await writeFileAtomic(opts.disagreements, disagreementsCsv(pairs));
    return report(pairs);
  };
  if (opts.labels !== undefined) return { report: await finish(await filePairs(opts.labels, j)), complete: true };

  const sessionFile = opts.session ?? resolve(opts.judgments, 'kappa-session.json');
  let s = await loadSession(sessionFile, j.manifest.qrelsVersion);
  if (opts.reportOnly) {
    if (!s) throw new UsageError(`no session at ${sessionFile} to report on`, { hint: 'label some pairs first: harness kappa --judgments J' });
    const pairs = sessionPairs(s, llm);
    if (pairs.length === 0) throw new UsageError(`${sessionFile} holds no labels yet`);
    return { report: await finish(pairs), complete: s.position >= s.items.length, session: s };
  }
  if (!s) {
    const items = kappaSample(judgedItems(j), {
      seed: opts.seed,
      ...(opts.size === undefined ? {} : { size: opts.size }),
      ...(opts.oversample === undefined ? {} : { oversample: opts.oversample }),
    });
    if (items.length === 0) throw new UsageError(`${opts.judgments} holds no judged pairs to verify`);
    s = newSession(j.manifest.qrelsVersion, opts.seed, items);
    await saveSession(sessionFile, s);
    io.log.info(`kappa: new session of ${items.length} pairs in ${sessionFile}`);
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
