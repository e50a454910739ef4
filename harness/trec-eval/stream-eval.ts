import { statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { HarnessError, InputError } from '../errors.js';
import { readTrecRun, streamTrecRun } from '../../evalset/trec.js';
import { compareIds, compareRanked, judgeRankingWithLevels } from '../metrics/ranking.js';
import { evaluatePieces, PIECE_BYTES, splitAtQueryBoundaries, withAbsoluteLine, workersPresent } from './pieces.js';
import { BOGUS_DOCNO, computeTrecRow, finishTrecSummary, judgeOptions, summarizeTrec, type TrecPlan } from './plan.js';
import type { JudgmentSource, QrelsIndex } from './qrels-index.js';
import { fnv1a } from './qrels-lines.js';
import { QrelsBlocks, type StreamableQrels } from './qrels-stream.js';
import { BlockSink, evaluateRunRange, RUN_CHUNK_BYTES, type RangeResult } from './run-blocks.js';
import { busyThreads, chooseThreads, type CpuSample, PARALLEL_MIN_BYTES } from './threads.js';

/**
 * Evaluates a run file against qrels for a TrecPlan the way trec_eval does, streaming: the run is read in
 * chunks and each query is scored as soon as its block of lines ends, from typed arrays, with byte-level
 * hashing of document ids (no string or object per run line). A run whose lines for one query are not
 * contiguous is re-read through the map-based reader instead, with the same results.
 */

/** Per-query values of an evaluation, in qrels query order (the order trec_eval prints and sums them). */
export interface TrecEvaluation {
  readonly plan: TrecPlan;
  /**
   * Evaluated query ids, in trec_eval order (qrels ids sorted bytewise). Empty when the qrels were streamed
   * (evaluateStreamed) without -q or with a PerQuerySink: their number is `evaluated`.
   */
  readonly queryIds: readonly string[];
  /** How many queries were evaluated. */
  readonly evaluated: number;
  /**
   * Row q holds query q's values: rows[q * plan.width + j]. Empty without -q (settings.perQuery), or when the
   * rows went to a PerQuerySink: only the summary is kept.
   */
  readonly rows: Float64Array;
  /** relstring per evaluated query, when requested (empty without -q). */
  readonly relstrings: readonly (string | undefined)[];
  readonly summary: Float64Array;
  readonly runTag: string;
  /** Qrels queries absent from the run: zero-filled under -c, otherwise left out. */
  readonly missingQueries: readonly string[];
  /** Run queries without qrels: not evaluated. */
  readonly droppedRunQueries: readonly string[];
}

/**
 * Takes one evaluated query's values as soon as they are computed, in trec_eval's order: row[off .. off +
 * plan.width) and its relstring (when requested). The row is reused for the next query: copy what you keep.
 */
export type PerQuerySink = (qid: string, row: Float64Array, off: number, relstring: string | undefined) => void;

/**
 * Evaluates `runPath` against the qrels for `plan`, as trec_eval would print it. With `threads` > 1 (or
 * 'auto', see chooseThreads) a run of at least 32 MB is cut at query boundaries into pieces of about 4 MB,
 * which this thread and the workers claim in turn (evaluatePieces); the workers read the qrels index in place
 * (SharedArrayBuffer) and send back typed arrays; results are identical to one thread's.
 */
export async function evaluateTrecRunFile(
  index: QrelsIndex,
  runPath: string,
  plan: TrecPlan,
  opts: { readonly threads?: number | 'auto'; readonly minParallelBytes?: number; readonly cpuSince?: CpuSample } = {},
): Promise<TrecEvaluation> {
  const size = statSync(runPath, { throwIfNoEntry: false })?.size;
  if (size === undefined) throw new InputError(runPath, undefined, 'file not found');
  const minBytes = opts.minParallelBytes ?? PARALLEL_MIN_BYTES;
  const threads =
    opts.threads === 'auto'
      ? chooseThreads(size, availableParallelism(), () => busyThreads(opts.cpuSince), { queries: index.qids.length, width: plan.width })
      : Math.min(opts.threads ?? 1, availableParallelism());
  const parallel = threads > 1 && size >= minBytes && workersPresent();
  if (!plan.settings.perQuery && !parallel) {
    const summed = await sumInOrder(index, runPath, plan);
    if (summed !== undefined) return summed;
  }
  const slots = new QuerySlots(index, plan);
  const cuts = parallel ? splitAtQueryBoundaries(runPath, Math.max(4 * threads, Math.ceil(size / PIECE_BYTES))) : [0, size];
  let results: RangeResult[];
  try {
    results =
      cuts.length > 2
        ? await evaluatePieces(index, runPath, plan, cuts, threads - 1, slots.score)
        : [await evaluateRunRange(index, runPath, plan, 0, cuts[1]!, (qi, ranked) => slots.score(qi, ranked))];
  } catch (e) {
    throw await withAbsoluteLine(e, runPath, cuts);
  }
  const merged = grouped(results) ? slots.take(results) : await slots.rescoreWhole(runPath);
  if (merged.seen === 0) throw new InputError(runPath, undefined, 'the run has no result lines');
  return slots.evaluation(runPath, merged.runTag, merged.dropped);
}

/** Whether every query's lines were one block of one range: no range gave up, no query id recurs across them. */
function grouped(results: readonly RangeResult[]): boolean {
  const seen = new Set<string>();
  for (const r of results) {
    if (r.notGrouped) return false;
    for (const q of r.seen) {
      if (seen.has(q)) return false;
      seen.add(q);
    }
  }
  return true;
}

/** What the ranges of a run gave besides rows: its tag, the run queries without qrels, how many query ids it holds. */
interface Merged {
  readonly runTag: string;
  readonly dropped: string[];
  readonly seen: number;
}

/**
 * A row per qrels query in trec_eval's order, filled as the run's queries are scored in whatever order the
 * file lists them (by this thread through `score`, by workers through take()), then compacted to the
 * evaluated queries.
 */
class QuerySlots {
  private readonly rows: Float64Array;
  private readonly relstrings: (string | undefined)[];
  private readonly done: Uint8Array;
  private readonly judge: ReturnType<typeof judgeOptions>;

  constructor(
    private readonly index: QrelsIndex,
    private readonly plan: TrecPlan,
  ) {
    const nq = index.qids.length;
    this.rows = new Float64Array(nq * plan.width);
    this.relstrings = new Array(nq);
    this.done = new Uint8Array(nq);
    this.judge = judgeOptions(plan.settings);
  }

  /** Scores qrels query qi from its ranking values in rank order into its slot. */
  readonly score = (qi: number, ranked: Int32Array, bogus = false): void => {
    const r = judgeRankingWithLevels(ranked, this.index.relLevels[qi]!, this.plan.settings.relevanceLevel, this.judge);
    this.relstrings[qi] = computeTrecRow(this.plan, r, this.rows, qi * this.plan.width, bogus);
    this.done[qi] = 1;
  };

  /** Puts the rows the ranges sent back (workers' pieces; this thread's went through `score`) in their slots. */
  take(results: readonly RangeResult[]): Merged {
    const w = this.plan.width;
    let runTag = '';
    let dropped: string[] = [];
    let seen = 0;
    for (const r of results) {
      for (let k = 0; k < r.qis.length; k++) {
        const qi = r.qis[k]!;
        this.rows.set(r.rows.subarray(k * w, (k + 1) * w), qi * w);
        this.relstrings[qi] = r.relstrings[k];
        this.done[qi] = 1;
      }
      if (r.runTag) runTag = r.runTag;
      dropped = dropped.concat(r.dropped);
      seen += r.seen.length;
    }
    return { runTag, dropped, seen };
  }

  /** Rare: a query's lines are split across the file. Re-read it whole and score every query again; the scores are the same. */
  async rescoreWhole(runPath: string): Promise<Merged> {
    const { run, runTag } = await readTrecRun(runPath);
    const index = this.index;
    const dropped = [...run.keys()].filter((q) => !index.qidIndex.has(q));
    for (const [qid, docs] of run) {
      const qi = index.qidIndex.get(qid);
      if (qi !== undefined)
        this.score(
          qi,
          rankedGradesOf(docs, (id) => index.lookupId(qi, id)),
        );
    }
    return { runTag, dropped, seen: run.size };
  }

  /**
   * The evaluation once every query of the run is scored: the qrels queries it lacks are missing (under -c
   * scored as trec_eval's filler ranking), the rows of the evaluated ones compacted in trec_eval's order.
   */
  evaluation(runPath: string, runTag: string, dropped: string[]): TrecEvaluation {
    const { index, plan } = this;
    const nq = index.qids.length;
    const w = plan.width;
    const missing: string[] = [];
    for (let qi = 0; qi < nq; qi++) {
      if (this.done[qi]) continue;
      missing.push(index.qids[qi]!);
      if (plan.settings.averageComplete) this.score(qi, Int32Array.of(index.lookupId(qi, BOGUS_DOCNO)), true);
    }
    const order: number[] = [];
    for (let qi = 0; qi < nq; qi++) if (this.done[qi]) order.push(qi);
    const queryIds = order.map((qi) => index.qids[qi]!);
    if (queryIds.length === 0) throw noJudgedQuery(runPath);
    // Compacted in place (order is ascending, so row k never overwrites a later query's slot): a second
    // array of every row would double the peak memory of a large run.
    order.forEach((qi, k) => {
      if (qi !== k) this.rows.copyWithin(k * w, qi * w, qi * w + w);
    });
    const rows = this.rows.subarray(0, order.length * w);
    const relstrings = order.map((qi) => this.relstrings[qi]);
    const summary = summarizeTrec(plan, rows, order.length, nq);
    const evaluated = queryIds.length;
    if (!plan.settings.perQuery)
      return { plan, queryIds, evaluated, rows: new Float64Array(0), relstrings: [], summary, runTag, missingQueries: missing, droppedRunQueries: dropped };
    return { plan, queryIds, evaluated, rows, relstrings, summary, runTag, missingQueries: missing, droppedRunQueries: dropped };
  }
}

function noJudgedQuery(runPath: string): InputError {
  return new InputError(runPath, undefined, 'no query of the run has relevance judgments in the qrels', {
    hint: 'check that the qrels and the run use the same query ids',
  });
}

/** Signals a query that comes before one already summed, in trec_eval's order (or another reason to stop a merge join). */
class OutOfOrder extends Error {}

/**
 * The evaluation without per-query output (no -q), holding one row and the running sums, not a row per
 * query: each query is added as its block ends, in trec_eval's order (qrels ids sorted bytewise), which is
 * also the order trec_eval sums in, so the sums are the same to the last bit. That needs the run to list
 * its queries in that order; at the first query out of it (a run in numeric order, q9 then q10) this gives
 * up and returns undefined, and the caller evaluates the run keeping every row.
 */
async function sumInOrder(index: QrelsIndex, runPath: string, plan: TrecPlan): Promise<TrecEvaluation | undefined> {
  const nq = index.qids.length;
  const w = plan.width;
  const s = plan.settings;
  const judge = judgeOptions(s);
  const row = new Float64Array(w);
  const acc = new Float64Array(w);
  const queryIds: string[] = [];
  const missing: string[] = [];
  let last = -1;
  const add = (qi: number, ranked: Int32Array, bogus: boolean): void => {
    const r = judgeRankingWithLevels(ranked, index.relLevels[qi]!, s.relevanceLevel, judge);
    computeTrecRow(plan, r, row, 0, bogus);
    for (let j = 0; j < w; j++) acc[j] = acc[j]! + row[j]!;
    queryIds.push(index.qids[qi]!);
  };
  // Queries skipped between two of the run are missing from it for good (a later one would be out of order).
  const missingUpTo = (end: number): void => {
    for (let m = last + 1; m < end; m++) {
      missing.push(index.qids[m]!);
      if (s.averageComplete) add(m, Int32Array.of(index.lookupId(m, BOGUS_DOCNO)), true);
    }
  };
  let result: RangeResult;
  try {
    result = await evaluateRunRange(index, runPath, plan, 0, Infinity, (qi, ranked) => {
      if (qi <= last) throw new OutOfOrder();
      missingUpTo(qi);
      add(qi, ranked, false);
      last = qi;
    });
  } catch (e) {
    if (e instanceof OutOfOrder) return undefined;
    throw e;
  }
  if (result.notGrouped) return undefined;
  if (result.seen.length === 0) throw new InputError(runPath, undefined, 'the run has no result lines');
  missingUpTo(nq);
  if (queryIds.length === 0) throw noJudgedQuery(runPath);
  const summary = finishTrecSummary(plan, acc, queryIds.length, nq);
  return {
    plan,
    queryIds,
    evaluated: queryIds.length,
    rows: new Float64Array(0),
    relstrings: [],
    summary,
    runTag: result.runTag,
    missingQueries: missing,
    droppedRunQueries: result.dropped,
  };
}

/**
 * The evaluation as a merge join of the qrels file and the run, both read in chunks: a query's judgments are
 * read (QrelsBlocks) when the run reaches it and dropped when the run moves on, so without -q memory does not
 * grow with the number of queries, and with -q only by the rows kept for printing (ADR 0023). Needs what streamableQrels checked of the qrels (their
 * queries grouped in trec_eval's order), and a run in the same order: at its first query out of order (or
 * recurring), or at a document the qrels judge twice, this returns why it gave up, and the caller indexes the
 * whole qrels (whose reader reports the duplicate). Queries are added to the running
 * sums in trec_eval's order, the missing ones (-c) at their place, so the summary is sumInOrder's to the bit.
 * With -q and `perQuery`, each query's row goes to it as soon as the query is scored (in trec_eval's order,
 * the caller formats and spools it) and is not kept: the result's rows, queryIds and relstrings are empty, and
 * memory stays flat with -q too. The caller must drop what it was given when this returns a string.
 */
export async function evaluateStreamed(
  qrelsPath: string,
  runPath: string,
  plan: TrecPlan,
  qrels: StreamableQrels,
  perQuery?: PerQuerySink,
): Promise<TrecEvaluation | string> {
  const join = new MergeJoin(new QrelsBlocks(qrelsPath), plan, perQuery);
  const sink = new BlockSink(runPath, join, (_qi, ranked) => join.add(ranked, false), false);
  try {
    join.start();
    await streamTrecRun(runPath, sink, RUN_CHUNK_BYTES, () => sink.chunkEnd());
    sink.finish();
    join.end();
  } catch (e) {
    if (e instanceof OutOfOrder) return e.message || "its queries are not in trec_eval's order";
    // The index reads the whole qrels before the run: a run error must not hide a duplicate judgment it reports.
    if (e instanceof InputError) {
      const duplicate = join.laterDuplicate();
      if (duplicate !== undefined) return duplicate;
    }
    throw e;
  } finally {
    join.blocks.close();
  }
  const { blocks } = join;
  if (blocks.refused || blocks.qi + 1 !== qrels.queries) throw new HarnessError(`${qrelsPath} changed while it was being read; run harness eval again`);
  if (sink.blocks === 0) throw new InputError(runPath, undefined, 'the run has no result lines');
  if (join.evaluated === 0) throw noJudgedQuery(runPath);
  return join.evaluation(qrels.queries, sink.runTag, sink.dropped);
}

/**
 * The qrels side of evaluateStreamed, and the judgments its run side reads: the qrels query the run is at
 * (QrelsBlocks), the queries the run passed by (missing; under -c trec_eval's filler ranking), and the
 * running sums, or a row per query when -q output is kept for printing.
 */
class MergeJoin implements JudgmentSource {
  evaluated = 0;
  private readonly judge: ReturnType<typeof judgeOptions>;
  private readonly row: Float64Array;
  private readonly acc: Float64Array;
  private readonly missing: string[] = [];
  /** With -q and no perQuery sink, a row per query (and its id and relstring) until printed; else running sums only. */
  private readonly keep: boolean;
  private rows: Float64Array;
  private readonly queryIds: string[] = [];
  private readonly relstrings: (string | undefined)[] = [];
  private readonly bogus = Buffer.from(BOGUS_DOCNO, 'utf8');
  private readonly bogusHash = fnv1a(this.bogus, 0, this.bogus.length) | 0;
  /** Whether blocks is at a qrels query; whether the run has reached it; the run's last query id. */
  private current = false;
  private used = false;
  private last: string | undefined;

  constructor(
    readonly blocks: QrelsBlocks,
    private readonly plan: TrecPlan,
    private readonly perQuery: PerQuerySink | undefined,
  ) {
    const w = plan.width;
    this.judge = judgeOptions(plan.settings);
    this.row = new Float64Array(w);
    this.acc = new Float64Array(w);
    this.keep = plan.settings.perQuery && perQuery === undefined;
    this.rows = new Float64Array(this.keep ? 64 * w : 0);
  }

  /** Reads the first qrels query. */
  start(): void {
    this.current = this.blocks.next();
    if (this.blocks.duplicate) throw new OutOfOrder(`a document is judged twice for query "${this.blocks.qid}"`);
  }

  /** After the run's last line: the qrels queries after its last query are missing from it. */
  end(): void {
    while (this.current) this.skip();
  }

  /** Adds the current qrels query, scored from its ranking values in rank order. */
  add(ranked: Int32Array, bogus: boolean): void {
    const { plan, blocks } = this;
    const w = plan.width;
    const r = judgeRankingWithLevels(ranked, blocks.levels, plan.settings.relevanceLevel, this.judge);
    if (this.keep) {
      if ((this.evaluated + 1) * w > this.rows.length) {
        const bigger = new Float64Array(2 * this.rows.length);
        bigger.set(this.rows);
        this.rows = bigger;
      }
      this.relstrings.push(computeTrecRow(plan, r, this.rows, this.evaluated * w, bogus));
      this.queryIds.push(blocks.qid);
    } else {
      const row = this.row;
      const acc = this.acc;
      const relstring = computeTrecRow(plan, r, row, 0, bogus);
      for (let j = 0; j < w; j++) acc[j] = acc[j]! + row[j]!;
      if (plan.settings.perQuery) this.perQuery!(blocks.qid, row, 0, relstring);
    }
    this.evaluated++;
  }

  queryIndex(qid: string): number {
    // Increasing ids are also grouped ones: the run side keeps no set of the ids it met.
    if (this.last !== undefined && compareIds(qid, this.last) <= 0) throw new OutOfOrder();
    this.last = qid;
    while (this.current) {
      const c = compareIds(this.blocks.qid, qid);
      if (c > 0) return -1;
      if (c === 0) {
        this.used = true;
        return this.blocks.qi;
      }
      this.skip();
    }
    return -1;
  }

  lookup(_qi: number, buf: Uint8Array, s: number, e: number, hash: number): number {
    return this.blocks.lookup(buf, s, e, hash);
  }

  /** The hashes of the current qrels query's judged documents. */
  judgedHashes(_qi: number): Int32Array {
    return this.blocks.judgedHashes();
  }

  /** After an error of the run: the duplicate judgment further on in the qrels, which the index path would report first. */
  laterDuplicate(): string | undefined {
    const blocks = this.blocks;
    while (!blocks.duplicate && blocks.next());
    return blocks.duplicate ? `a document is judged twice for query "${blocks.qid}"` : undefined;
  }

  /** The evaluation of `numQueries` qrels queries once the run is read. */
  evaluation(numQueries: number, runTag: string, dropped: string[]): TrecEvaluation {
    const { plan, evaluated } = this;
    // summarizeTrec adds the rows in the order the running sums are added: the same bits either way.
    const rows = this.rows.subarray(0, evaluated * plan.width);
    const summary = this.keep ? summarizeTrec(plan, rows, evaluated, numQueries) : finishTrecSummary(plan, this.acc, evaluated, numQueries);
    const { queryIds, relstrings, missing } = this;
    return { plan, queryIds, evaluated, rows, relstrings, summary, runTag, missingQueries: missing, droppedRunQueries: dropped };
  }

  /** Moves past the current qrels query; one the run did not reach is missing from it: under -c, trec_eval's empty ranking. */
  private skip(): void {
    const blocks = this.blocks;
    if (!this.used) {
      this.missing.push(blocks.qid);
      if (this.plan.settings.averageComplete) this.add(Int32Array.of(blocks.lookup(this.bogus, 0, this.bogus.length, this.bogusHash)), true);
    }
    this.used = false;
    this.current = blocks.next();
    if (blocks.duplicate) throw new OutOfOrder(`a document is judged twice for query "${blocks.qid}"`);
  }
}

/** The ranking values (see QrelsIndex.lookup) of one query's run entries in trec_eval rank order. */
function rankedGradesOf(docs: ReadonlyMap<string, number>, gradeOf: (docId: string) => number): Int32Array {
  const ids = [...docs.keys()];
  ids.sort((a, b) => compareRanked(docs.get(a)!, a, docs.get(b)!, b));
  const out = new Int32Array(ids.length);
  ids.forEach((id, i) => (out[i] = gradeOf(id)));
  return out;
}
