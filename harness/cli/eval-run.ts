import { statSync } from 'node:fs';
import { bomNote, peekTrecFile, readTrecFile } from '../../evalset/trec.js';
import { UsageError } from '../errors.js';
import type { CliIo } from './io.js';
import { OutputSpool, type SpoolOptions } from './output-spool.js';
import type { EvalArgs, EvalFormat } from './eval-args.js';
import { formatFixed, formatLong } from '../metrics/printf.js';
import { relevanceLevelProblemOfGrade } from '../metrics/evaluate.js';
import { formatMeasure, measureOf } from '../metrics/measure.js';
import { FAST_KERNELS } from '../trec-eval/fast/kernels.js';
import { canonicalValueNames, compileTrecPlan, type TrecPlan } from '../trec-eval/plan.js';
import { formatTrecSummary, TrecQueryWriter } from '../trec-eval/print.js';
import { QrelsIndex } from '../trec-eval/qrels-index.js';
import { streamableQrels } from '../trec-eval/qrels-stream.js';
import { evaluateStreamed, evaluateTrecRunFile, type TrecEvaluation } from '../trec-eval/stream-eval.js';
import { autoMayThread, busyThreads, chooseThreads, cpuSample, PARALLEL_MIN_BYTES } from '../trec-eval/threads.js';

/** A CliIo whose output may also take bytes (the process's stdout): the -q lines then skip a string. */
export interface EvalIo extends CliIo {
  readonly outBytes?: (bytes: Uint8Array) => void;
}

/** The implementation behind `harness eval` (lazy-loaded by the command module). */
export async function runEval(
  args: EvalArgs,
  format: EvalFormat,
  io: EvalIo,
  threads: number | 'auto' = 'auto',
  /** Where and beyond how many bytes the -q lines spill to a file (OutputSpool); tests set a small budget. */
  spoolOptions: SpoolOptions = {},
): Promise<void> {
  const runBytes = statSync(args.runPath, { throwIfNoEntry: false })?.size ?? 0;
  // `--threads auto` on a run too small to ever get a worker is `--threads 1`, path and all: nothing sampled,
  // the same streams tried (goal 30.1: the default is never slower than one thread).
  const chosen = threads === 'auto' && !autoMayThread(runBytes) ? 1 : threads;
  // What the machine does while the qrels are read tells `--threads auto` whether a core is free.
  const cpuSince = chosen === 'auto' ? cpuSample() : undefined;
  const plan = compileTrecPlan(args.settings, FAST_KERNELS);
  const note = (text: string) => io.log.info(`harness eval: ${text}`);
  const level = args.settings.relevanceLevel;
  const peekRun = async () => {
    const peeked = await peekTrecFile(args.runPath);
    if (peeked.bom) note(bomNote(args.runPath));
    return peeked;
  };
  // With -q in trec format the streamed path formats each query's lines as it is scored into a spool, printed
  // once everything has succeeded (a late input error prints nothing partial), so memory stays bounded.
  const spool = args.settings.perQuery && format === 'trec' ? new OutputSpool(spoolOptions) : undefined;
  try {
    // Qrels and run in trec_eval's order are merged as two streams: memory stays flat in the number of queries
    // (ADR 0023). Anything else indexes the whole qrels, as before; so does a run that `--threads auto` gives
    // more than one thread with -q, unless the qrels are STREAM_Q_BYTES or more.
    const qrelsBytes = statSync(args.qrelsPath, { throwIfNoEntry: false })?.size ?? 0;
    // Auto weighs the run's scoring work (its queries, counted by the qrels scan) as the index path would.
    const autoThreads = (queries: number) => chooseThreads(runBytes, undefined, () => busyThreads(cpuSince), { queries, width: plan.width });
    const streams = (queries: number) => triesStreams(chosen, args.settings.perQuery, qrelsBytes, () => autoThreads(queries));
    const tried = chosen === 'auto' || chosen === 1 ? await tryStreams(args, plan, spool, peekRun, streams) : { spooled: false };
    let ev = tried.ev;
    if (ev === undefined) {
      // An index worker threads may read is built in shared memory: share() then copies nothing (ADR 0043).
      const shared = chosen === 'auto' || (chosen > 1 && runBytes >= PARALLEL_MIN_BYTES);
      const qrels = QrelsIndex.fromBuffer(await readTrecFile(args.qrelsPath, note, { shared }), args.qrelsPath, { shared });
      // Said once the qrels are read: a file that does not stream for an error gets the error alone.
      const said = indexNote(tried.indexed, qrelsBytes);
      if (said !== undefined) note(said);
      const problem = relevanceLevelProblemOfGrade(highestGrade(qrels), level);
      if (problem) throw new UsageError(`-l ${level}: ${problem}`, { hint: `${args.qrelsPath} sets the grades; -l (default 1) the level` });
      const run = tried.run ?? (await peekRun());
      // A gzip run is one stream that cannot be cut at byte offsets, so it is read on this thread.
      ev = await evaluateTrecRunFile(qrels, args.runPath, plan, { threads: run.gzip ? 1 : chosen, ...(cpuSince ? { cpuSince } : {}) });
    }
    noteQueries(ev, io, args.settings.averageComplete);
    if (format === 'trec') writeTrec(ev, io, tried.spooled ? spool : undefined);
    else await writeCanonical(ev, format, io);
  } finally {
    spool?.dispose();
  }
}

/** What trying the streams gave: the evaluation, or why the qrels are indexed instead; the run, once peeked. */
interface StreamAttempt {
  readonly ev?: TrecEvaluation;
  readonly indexed?: string;
  readonly run?: { readonly gzip: boolean };
  /** The -q lines are in the spool. */
  readonly spooled: boolean;
}

/** Evaluates qrels and run as two streams (evaluateStreamed) when the qrels stream; says why not otherwise. */
async function tryStreams(
  args: EvalArgs,
  plan: TrecPlan,
  spool: OutputSpool | undefined,
  peekRun: () => Promise<{ readonly gzip: boolean }>,
  /** Whether to stream qrels of this many queries (triesStreams); false: the index path, without a note. */
  streams: (queries: number) => boolean,
): Promise<StreamAttempt> {
  const streamable = streamableQrels(args.qrelsPath);
  if (typeof streamable === 'string') return { indexed: `${args.qrelsPath}: ${streamable}; its queries are indexed in memory${STREAM_HINT}`, spooled: false };
  if (!streams(streamable.queries)) return { spooled: false };
  // A bad -l is reported by the index path, after any error of the qrels themselves (a duplicate), as before.
  if (relevanceLevelProblemOfGrade(streamable.highestGrade, args.settings.relevanceLevel) !== undefined) return { spooled: false };
  const run = await peekRun();
  const writer = spool && new TrecQueryWriter(plan, (text) => spool.write(text));
  const streamed = await evaluateStreamed(args.qrelsPath, args.runPath, plan, streamable, writer && ((qid, row, off, rel) => writer.query(qid, row, off, rel)));
  if (typeof streamed !== 'string') {
    writer?.flush();
    return { ev: streamed, run, spooled: writer !== undefined };
  }
  // The queries spooled before the streams gave up are scored again from the index.
  spool?.dispose();
  if (streamed.startsWith('a document'))
    return { indexed: `${args.qrelsPath}: ${streamed}; its queries are indexed in memory${STREAM_HINT}`, run, spooled: false };
  return { indexed: `${args.runPath}: ${streamed}; the qrels are indexed in memory${STREAM_HINT}`, run, spooled: false };
}

/** The stderr notes on run queries without qrels and qrels queries missing from the run. */
function noteQueries(ev: TrecEvaluation, io: CliIo, averageComplete: boolean): void {
  if (ev.droppedRunQueries.length > 0) {
    io.log.info(
      `harness eval: ${ev.droppedRunQueries.length} run quer${ev.droppedRunQueries.length === 1 ? 'y has' : 'ies have'} no qrels and ${ev.droppedRunQueries.length === 1 ? 'was' : 'were'} not evaluated`,
    );
  }
  if (ev.missingQueries.length > 0) {
    io.log.info(
      `harness eval: ${ev.missingQueries.length} qrels quer${ev.missingQueries.length === 1 ? 'y is' : 'ies are'} missing from the run; ` +
        (averageComplete ? 'scored as empty rankings (-c)' : 'left out of the averages (use -c to count them as 0)'),
    );
  }
}

/**
 * `--threads auto -q` streams qrels of this size or more when they and the run are in trec_eval's order (one
 * thread), instead of indexing them for several: the index path keeps the index and a row per query (7.2 kB a
 * query with all_trec: 3.5 GB at 500k x 100), which at 32 MB of qrels (about 25,000 queries of 50 judgments)
 * is already some 300 MB against the streams' flat 70 MB and the spool's 8 MB. Inputs out of trec_eval's
 * order are refused after their first 64 kB, so the bench's 5k x 1,000 and 50k x 100 (unpadded ids, 4.5 and
 * 45 MB of qrels) keep the index path and its threads.
 */
export const STREAM_Q_BYTES = 32 * 2 ** 20;

/**
 * Whether harness eval streams qrels and run, asked once the qrels scan found them in trec_eval's order (the
 * index takes them otherwise): on one thread, without -q under `--threads auto`, and with -q when auto would
 * give one thread (`autoThreads`, asked only then, knowing the queries) or the qrels are STREAM_Q_BYTES or
 * more; never for `--threads N`, N > 1.
 */
export function triesStreams(threads: number | 'auto', perQuery: boolean, qrelsBytes: number, autoThreads: () => number): boolean {
  if (threads !== 'auto') return threads === 1;
  return !perQuery || qrelsBytes >= STREAM_Q_BYTES || autoThreads() === 1;
}

/** Qrels this large take hundreds of MB once indexed: below it, reading them into memory is not worth a note. */
export const INDEX_NOTE_BYTES = 64 * 2 ** 20;

/** The stderr note that the qrels were indexed in memory, and why; only for qrels of {@link INDEX_NOTE_BYTES} or more. */
export function indexNote(reason: string | undefined, qrelsBytes: number): string | undefined {
  return reason !== undefined && qrelsBytes >= INDEX_NOTE_BYTES ? reason : undefined;
}

const STREAM_HINT = ' (a qrels file and a run that both list their queries sorted bytewise, as trec_eval sorts them, are read as streams)';

/** The highest non-negative grade in the qrels; -1 when every judgment is negative (in the pool, unjudged). */
function highestGrade(qrels: QrelsIndex): number {
  if (qrels.qids.length === 0) return -Infinity;
  let highest = -1;
  for (const counts of qrels.relLevels) for (let g = counts.length - 1; g > highest; g--) if (counts[g]! > 0) highest = g;
  return highest;
}

/** Prints the spooled -q lines (the streamed path) or the rows the evaluation kept, then the summary. */
function writeTrec(ev: TrecEvaluation, io: EvalIo, spool: OutputSpool | undefined): void {
  const { plan } = ev;
  if (spool !== undefined) spool.drain((text) => io.out(text));
  else if (plan.settings.perQuery) {
    const w = new TrecQueryWriter(plan, (text) => io.out(text), io.outBytes);
    ev.queryIds.forEach((qid, q) => w.query(qid, ev.rows, q * plan.width, ev.relstrings[q]));
    w.flush();
  }
  io.out(formatTrecSummary(plan, ev.summary, ev.runTag));
}

async function writeCanonical(ev: TrecEvaluation, format: Exclude<EvalFormat, 'trec'>, io: CliIo): Promise<void> {
  const { plan } = ev;
  const names = canonicalValueNames(plan, (name, params, cutoff) => formatMeasure(measureOf(name, params, cutoff)));
  const perQueryCols: number[] = [];
  const summaryCols: number[] = [];
  const isCount = new Set<number>();
  for (const inst of plan.instances) {
    inst.valueNames.forEach((_, j) => {
      const k = inst.offset + j;
      if (names[k] === undefined) return;
      if (inst.kind === 'count') isCount.add(k);
      summaryCols.push(k);
      if (inst.perQuery) perQueryCols.push(k);
    });
  }
  const showQueries = plan.settings.perQuery;
  if (format === 'json') {
    const summary: Record<string, number> = {};
    for (const k of summaryCols) summary[names[k]!] = ev.summary[k]!;
    const out: Record<string, unknown> = {
      runTag: ev.runTag,
      relevanceLevel: plan.settings.relevanceLevel,
      queries: ev.evaluated,
      missingQueries: ev.missingQueries,
      droppedRunQueries: ev.droppedRunQueries,
      summary,
    };
    if (showQueries) {
      const pq: Record<string, Record<string, number>> = {};
      ev.queryIds.forEach((qid, q) => {
        const row: Record<string, number> = {};
        for (const k of perQueryCols) row[names[k]!] = ev.rows[q * plan.width + k]!;
        pq[qid] = row;
      });
      out['perQuery'] = pq;
    }
    io.out(`${JSON.stringify(out, null, 2)}\n`);
    return;
  }
  if (format === 'csv') {
    const cols = showQueries ? perQueryCols : summaryCols;
    const rows: (string | number)[][] = [['query', ...cols.map((k) => names[k]!)]];
    if (showQueries) ev.queryIds.forEach((qid, q) => rows.push([qid, ...cols.map((k) => ev.rows[q * plan.width + k]!)]));
    rows.push(['all', ...cols.map((k) => ev.summary[k]!)]);
    // Loaded here: the CSV writer is start-up cost for every other format.
    const { stringify } = await import('csv-stringify/sync');
    io.out(stringify(rows));
    return;
  }
  const header = ['measure', 'all', ...(showQueries ? ev.queryIds : [])];
  const cell = (k: number, x: number) => (isCount.has(k) ? formatLong(x) : formatFixed(x, 4));
  const body = summaryCols.map((k) => {
    const isPerQuery = perQueryCols.includes(k);
    return [names[k]!, cell(k, ev.summary[k]!), ...(showQueries ? ev.queryIds.map((_, q) => (isPerQuery ? cell(k, ev.rows[q * plan.width + k]!) : '')) : [])];
  });
  const all = [header, ...body];
  const widths = header.map((_, c) => Math.max(...all.map((r) => r[c]!.length)));
  const line = (r: string[]) =>
    r
      .map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
      .join('  ')
      .trimEnd();
  io.out(`${[line(header), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n')}\n`);
}
