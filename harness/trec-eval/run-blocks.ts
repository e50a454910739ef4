import { InputError } from '../errors.js';
import { scanTrecRun, streamTrecRun, type RunLineSink } from '../../evalset/trec.js';
import { judgeRankingWithLevels, REL_NONPOOL } from '../metrics/ranking.js';
import { computeTrecRow, judgeOptions, type TrecPlan } from './plan.js';
import type { JudgmentSource, QrelsIndex } from './qrels-index.js';
import { fnv1a } from './qrels-lines.js';
import { H, STOP } from './fast/run-scan-kernels.js';
import { GRADE_CHECK, RunScanMemory, scanTrecRunFast } from './run-scan.js';

/**
 * The chunk of run text streamTrecRun reads at a time for BlockSink: 1 MB stays in the core's caches from the
 * read through the copy into the scan kernel's memory to the scan (3-7% less CPU than 8 MB at 5k x 1,000;
 * 256 kB was no better: more chunk ends, each copying the open block's document ids aside).
 */
export const RUN_CHUNK_BYTES = 1 << 20;

/** Signals a query id seen again after its block ended: the run is not grouped by query. */
class NotGrouped extends Error {}

/**
 * Collects one query block at a time and scores it when the block ends. The byte loop runs in the scan
 * kernel (RunScanMemory, run-scan.ts), which writes each common line of the chunk's text into the block's
 * arrays and stops where JavaScript has work to do: a new query, a line it does not take (read here by
 * scanTrecRunFast or scanTrecRun, through line()), a possible duplicate. Document ids stay in the kernel's
 * copy of the chunk (offsets only); at a chunk boundary the open block's ids are copied aside, since that
 * text is about to be replaced.
 */
export class BlockSink implements RunLineSink {
  private qidBytes = Buffer.alloc(256);
  private qidLen = -1;
  private qi = -1;
  private qid = '';
  private readonly mem = new RunScanMemory();
  private ranked = new Int32Array(1024);
  /** A group of tied scores, sorted by document id. */
  private readonly tie = new Int32Array(16);
  /** Lines [0, relocated) of the block have their ids in `aside`; the rest in the kernel's text. */
  private relocated = 0;
  private aside = Buffer.alloc(1 << 16);
  private readonly seen = new Set<string>();
  /** Query blocks met (seen holds their ids unless the source checks the order itself). */
  blocks = 0;
  readonly dropped: string[] = [];
  runTag = '';
  private tagS = -1;
  private tagE = -1;

  constructor(
    private readonly file: string,
    private readonly index: JudgmentSource,
    private readonly onQuery: (qi: number, ranked: Int32Array) => void,
    /** False when the source throws at a query out of order (a recurring one among them): no id is kept. */
    private readonly keepSeen = true,
  ) {}

  /** Every query id met, in order. */
  get seenIds(): string[] {
    return [...this.seen];
  }

  /** The lines in the open block. */
  private get n(): number {
    return this.mem.header[H.N]!;
  }

  /** A line the kernel did not take, read by the JavaScript scanners from the kernel's text (buf is its view). */
  line(buf: Buffer, lineNo: number, qs: number, qe: number, ds: number, de: number, score: number, ts: number, te: number, docHash?: number): void {
    const ql = qe - qs;
    let same = ql === this.qidLen;
    for (let k = 0; same && k < ql; k++) same = this.qidBytes[k] === buf[qs + k];
    if (!same) this.startBlock(buf, qs, qe);
    this.tagS = ts;
    this.tagE = te;
    const h = docHash ?? fnv1a(buf, ds, de);
    this.mem.reserveLine();
    if (this.mem.kernels.dupAdd(h | 0)) this.checkDuplicate(h | 0, buf, ds, de, lineNo);
    const i = this.n;
    this.mem.push(score, ds, de, lineNo, h | 0);
    this.gradeLines(i, i + 1);
  }

  /**
   * streamTrecRun hands whole chunks here: copied into the kernel's memory, scanned there; at each of the
   * kernel's stops this does the JavaScript part (scores the block that ended, reads the line the kernel
   * did not take) and lets it go on.
   */
  scan(buf: Buffer, start: number, end: number, firstLine: number, file: string): number {
    const mem = this.mem;
    const text = mem.load(buf, start, end, firstLine);
    for (;;) {
      const from = this.n;
      mem.header[H.TE] = -1;
      const stop = mem.kernels.scan();
      this.gradeLines(from, this.n);
      if (mem.header[H.TE]! >= 0) {
        this.tagS = mem.header[H.TS]!;
        this.tagE = mem.header[H.TE]!;
      }
      if (stop === STOP.END) break;
      if (stop === STOP.FULL) mem.reserveLine();
      else if (stop === STOP.NEW_QUERY) this.startBlock(mem.view, mem.header[H.QS]!, mem.header[H.QE]!);
      else {
        // A line the kernel does not take (or a possible duplicate): that line alone through the JavaScript scanners.
        const at = mem.header[H.POS]!;
        const next = mem.view.indexOf(10, at) + 1;
        mem.header[H.LINE]! += scanTrecRunFast(mem.view, at, next, mem.header[H.LINE]!, file, this);
        mem.header[H.POS] = next;
      }
    }
    // The last line of a file without a '\n' at its end.
    if (text.stop < text.end) mem.header[H.LINE]! += scanTrecRun(mem.view, text.stop, text.end, mem.header[H.LINE]!, file, this);
    return mem.header[H.LINE]! - firstLine;
  }

  /** Grades of the block's lines [from, to) that the kernel could not rule out: their ranking values from the judgments. */
  private gradeLines(from: number, to: number): void {
    const { docStart, docEnd, hashes, grades, view } = this.mem;
    const qi = this.qi;
    for (let i = from; i < to; i++) {
      if (grades[i] !== GRADE_CHECK) continue;
      grades[i] = qi < 0 ? REL_NONPOOL : this.index.lookup(qi, view, docStart[i]!, docEnd[i]!, hashes[i]!);
    }
  }

  /** Called after each chunk: keep what still points into the kernel's text. */
  chunkEnd(): void {
    const chunk = this.mem.view;
    if (this.tagS >= 0) this.runTag = chunk.toString('utf8', this.tagS, this.tagE);
    this.tagS = -1;
    const { docStart, docEnd } = this.mem;
    const n = this.n;
    let need = 0;
    for (let i = this.relocated; i < n; i++) need += docEnd[i]! - docStart[i]!;
    let at = this.relocated > 0 ? docEnd[this.relocated - 1]! : 0;
    if (at + need > this.aside.length) {
      const bigger = Buffer.alloc(Math.max(2 * this.aside.length, at + need));
      this.aside.copy(bigger, 0, 0, at);
      this.aside = bigger;
    }
    for (let i = this.relocated; i < n; i++) {
      const s0 = docStart[i]!;
      const e0 = docEnd[i]!;
      chunk.copy(this.aside, at, s0, e0);
      docStart[i] = at;
      at += e0 - s0;
      docEnd[i] = at;
    }
    this.relocated = n;
  }

  /** Call at the end of the file (after the last chunkEnd). */
  finish(): void {
    this.endBlock();
  }

  private bufOf(i: number): Buffer {
    return i < this.relocated ? this.aside : this.mem.view;
  }

  private startBlock(buf: Buffer, qs: number, qe: number): void {
    this.endBlock();
    const qid = buf.toString('utf8', qs, qe);
    if (this.keepSeen) {
      if (this.seen.has(qid)) throw new NotGrouped();
      this.seen.add(qid);
    }
    this.blocks++;
    if (qe - qs > this.qidBytes.length) this.qidBytes = Buffer.alloc(2 * (qe - qs));
    buf.copy(this.qidBytes, 0, qs, qe);
    this.qidLen = qe - qs;
    this.qid = qid;
    this.qi = this.index.queryIndex(qid);
    if (this.qi < 0) this.dropped.push(qid);
    this.relocated = 0;
    this.mem.startBlock(buf, qs, qe, this.qi < 0 ? null : this.index.judgedHashes?.(this.qi));
  }

  private endBlock(): void {
    if (this.qidLen < 0 || this.qi < 0) return;
    this.onQuery(this.qi, this.rankedGrades());
  }

  /** Line i of the block has the hash of an earlier line: an error if it also has its document id. */
  private checkDuplicate(h: number, buf: Buffer, s: number, e: number, lineNo: number): void {
    const { docStart, docEnd, hashes, lines } = this.mem;
    const len = e - s;
    for (let j = 0; j < this.n; j++) {
      if (hashes[j] !== h || docEnd[j]! - docStart[j]! !== len) continue;
      const jb = this.bufOf(j);
      const js = docStart[j]!;
      let k = 0;
      while (k < len && jb[js + k] === buf[s + k]) k++;
      if (k === len) {
        throw new InputError(this.file, lineNo, `document "${buf.toString('utf8', s, e)}" appears twice for query "${this.qid}" (first at line ${lines[j]})`, {
          hint: 'a run ranks each document at most once per query; deduplicate before evaluating',
        });
      }
    }
  }

  /** Document ids of lines a and b compared bytewise (negative: a's sorts first). */
  private cmpDoc(a: number, b: number): number {
    const { docStart, docEnd } = this.mem;
    const ab = this.bufOf(a);
    const bb = this.bufOf(b);
    const as = docStart[a]!;
    const bs = docStart[b]!;
    const al = docEnd[a]! - as;
    const bl = docEnd[b]! - bs;
    const m = al < bl ? al : bl;
    for (let k = 0; k < m; k++) {
      const d = ab[as + k]! - bb[bs + k]!;
      if (d !== 0) return d;
    }
    return al - bl;
  }

  /**
   * The block's grades in trec_eval rank order (score descending, then document id descending). Runs are
   * usually written best-first with ties in any order: then the grades are copied as they are (or not at
   * all, without ties: the kernel's array is handed on) and only each group of equal scores is sorted.
   * Anything else gets a full sort.
   */
  private rankedGrades(): Int32Array {
    const n = this.n;
    const { scores: sc, grades, header } = this.mem;
    // The kernel (and push) counted the lines out of order and the ties as they came.
    const byScore = header[H.DISORDER] === 0;
    const ties = header[H.TIES]! > 0;
    // Consumed (scored) before the next block starts, as the reused `ranked` is.
    if (byScore && !ties) return grades.subarray(0, n);
    if (this.ranked.length < n) this.ranked = new Int32Array(Math.max(n, 2 * this.ranked.length));
    const out = this.ranked.subarray(0, n);
    if (!byScore) {
      const idx = new Array<number>(n);
      for (let i = 0; i < n; i++) idx[i] = i;
      idx.sort((a, b) => (sc[a]! > sc[b]! ? -1 : sc[a]! < sc[b]! ? 1 : this.cmpDoc(b, a)));
      for (let i = 0; i < n; i++) out[i] = grades[idx[i]!]!;
      return out;
    }
    out.set(grades.subarray(0, n));
    for (let i = 1; i < n; i++) {
      if (sc[i] !== sc[i - 1]) continue;
      let j = i + 1;
      while (j < n && sc[j] === sc[i]) j++;
      this.sortTies(i - 1, j, out);
      i = j;
    }
    return out;
  }

  /** Lines [i, j) share a score: their grades in out[i, j) by document id descending. */
  private sortTies(i: number, j: number, out: Int32Array): void {
    const grades = this.mem.grades;
    if (j - i <= 16) {
      // Ties are short (a 5% tie rate gives pairs): insertion sort in a reused array, no sort callback.
      const tie = this.tie;
      for (let k = i; k < j; k++) {
        let m = k - i - 1;
        while (m >= 0 && this.cmpDoc(tie[m]!, k) < 0) {
          tie[m + 1] = tie[m]!;
          m--;
        }
        tie[m + 1] = k;
      }
      for (let k = i; k < j; k++) out[k] = grades[tie[k - i]!]!;
      return;
    }
    const group: number[] = [];
    for (let k = i; k < j; k++) group.push(k);
    group.sort((a, b) => this.cmpDoc(b, a));
    for (let k = i; k < j; k++) out[k] = grades[group[k - i]!]!;
  }
}

/** What one byte range of a run file yields: values of the qrels queries it holds, in file order. */
export interface RangeResult {
  /** A query's lines continue in another part of the file (or recur within this range). */
  readonly notGrouped: boolean;
  readonly qis: Int32Array;
  /** Row k (plan.width values) belongs to qrels query qis[k]. */
  readonly rows: Float64Array;
  readonly relstrings: (string | undefined)[];
  /** Every query id of the range, qrels or not, in order of appearance. */
  readonly seen: string[];
  readonly dropped: string[];
  readonly runTag: string;
}

/**
 * Scores the query blocks in bytes [start, end) of a run file (boundaries must fall between queries). With
 * `score`, each query's ranking goes to it as its block ends and the result's qis and rows stay empty: the
 * main thread then keeps what it needs (a row per query in its slot, or running sums), not a second copy
 * in file order.
 */
export async function evaluateRunRange(
  index: QrelsIndex,
  runPath: string,
  plan: TrecPlan,
  start: number,
  end: number,
  score?: (qi: number, ranked: Int32Array) => void,
  chunkBytes?: number,
): Promise<RangeResult> {
  const w = plan.width;
  const s = plan.settings;
  const judge = judgeOptions(s);
  let rows = new Float64Array(score ? 0 : 64 * w);
  let qis = new Int32Array(score ? 0 : 64);
  const relstrings: (string | undefined)[] = [];
  let n = 0;
  const sink = new BlockSink(runPath, index, (qi, ranked) => {
    if (score) {
      score(qi, ranked);
      return;
    }
    if (n === qis.length) {
      const q2 = new Int32Array(2 * n);
      q2.set(qis);
      qis = q2;
      const r2 = new Float64Array(2 * n * w);
      r2.set(rows);
      rows = r2;
    }
    const r = judgeRankingWithLevels(ranked, index.relLevels[qi]!, s.relevanceLevel, judge);
    relstrings.push(computeTrecRow(plan, r, rows, n * w, false));
    qis[n++] = qi;
  });
  try {
    await streamTrecRun(runPath, sink, chunkBytes ?? RUN_CHUNK_BYTES, () => sink.chunkEnd(), { start, end });
    sink.finish();
  } catch (e) {
    if (!(e instanceof NotGrouped)) throw e;
    return { notGrouped: true, qis: new Int32Array(0), rows: new Float64Array(0), relstrings: [], seen: [], dropped: [], runTag: '' };
  }
  return {
    notGrouped: false,
    qis: qis.subarray(0, n),
    rows: rows.subarray(0, n * w),
    relstrings,
    seen: sink.seenIds,
    dropped: sink.dropped,
    runTag: sink.runTag,
  };
}
