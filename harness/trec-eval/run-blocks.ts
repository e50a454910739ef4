import { InputError } from '../errors.js';
import { streamTrecRun, type RunLineSink } from '../../evalset/trec.js';
import { judgeRankingWithLevels, REL_NONPOOL } from '../metrics/ranking.js';
import { computeTrecRow, judgeOptions, type TrecPlan } from './plan.js';
import type { JudgmentSource, QrelsIndex } from './qrels-index.js';
import { fnv1a } from './qrels-lines.js';
import { scanTrecRunFast } from './run-scan.js';

/** How many bytes of a chunk BlockSink.scan hands scanTrecRunFast at a time. */
const SCAN_SLICE = 1 << 16;

/** Signals a query id seen again after its block ended: the run is not grouped by query. */
class NotGrouped extends Error {}

/**
 * Collects one query block at a time and scores it when the block ends. Document ids stay in the read
 * buffer (offsets only); at a chunk boundary the open block's ids are copied aside, since the buffer is
 * about to be reused.
 */
export class BlockSink implements RunLineSink {
  private qidBytes = Buffer.alloc(256);
  private qidLen = -1;
  private qi = -1;
  private qid = '';
  private n = 0;
  private scores = new Float64Array(1024);
  private grades = new Int32Array(1024);
  private docStart = new Int32Array(1024);
  private docEnd = new Int32Array(1024);
  private lines = new Int32Array(1024);
  private hashes = new Int32Array(1024);
  private ranked = new Int32Array(1024);
  /** A group of tied scores, sorted by document id. */
  private readonly tie = new Int32Array(16);
  /** Lines [0, relocated) of the block have their ids in `aside`; the rest in `chunk`. */
  private relocated = 0;
  private aside = Buffer.alloc(1 << 16);
  private chunk: Buffer = Buffer.alloc(0);
  /**
   * Open addressing over the block's lines: slot k is the pair dup[2k] (a generation: the slot is taken only
   * when it is the block's gen) and dup[2k + 1] (the line), one cache line per probe.
   */
  private dup = new Int32Array(2 * 4096);
  private gen = 1;
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

  line(buf: Buffer, lineNo: number, qs: number, qe: number, ds: number, de: number, score: number, ts: number, te: number, docHash?: number): void {
    this.chunk = buf;
    const ql = qe - qs;
    let same = ql === this.qidLen;
    if (same) {
      const qb = this.qidBytes;
      for (let k = 0; k < ql; k++) {
        if (qb[k] !== buf[qs + k]) {
          same = false;
          break;
        }
      }
    }
    if (!same) this.startBlock(buf, qs, qe);
    this.tagS = ts;
    this.tagE = te;
    const i = this.n;
    if (i === this.scores.length) this.grow();
    const h = docHash ?? fnv1a(buf, ds, de);
    this.checkDuplicate(i, h, buf, ds, de, lineNo);
    this.scores[i] = score;
    this.docStart[i] = ds;
    this.docEnd[i] = de;
    this.lines[i] = lineNo;
    this.hashes[i] = h;
    this.grades[i] = this.qi >= 0 ? this.index.lookup(this.qi, buf, ds, de, h) : REL_NONPOOL;
    this.n = i + 1;
  }

  /**
   * streamTrecRun hands whole chunks here (see scanTrecRunFast), scanned in slices of about SCAN_SLICE bytes.
   * One call per 8 MB chunk left the scanner running unoptimised code after each return: V8 compiles its loop
   * on the fly (OSR) before the function has ever returned, then throws that code away at the first compare
   * after the loop (no type feedback there yet) and deoptimised again on the next chunk (node --trace-deopt);
   * at 5k x 100 the scan cost 2.7x as much per line as at 5k x 1,000. Short calls give every part of the
   * function feedback within the first milliseconds, and one optimised version serves the rest of the run.
   */
  scan(buf: Buffer, start: number, end: number, firstLine: number, file: string): number {
    let lines = 0;
    for (let s = start; s < end; ) {
      // The slice ends just past a '\n' inside the chunk (bytes past `end` are not this chunk's), or at end.
      const nl = s + SCAN_SLICE < end ? buf.indexOf(10, s + SCAN_SLICE) : -1;
      const e = nl < 0 || nl >= end ? end : nl + 1;
      lines += scanTrecRunFast(buf, s, e, firstLine + lines, file, this);
      s = e;
    }
    return lines;
  }

  /** Called after each chunk: keep what still points into the read buffer. */
  chunkEnd(): void {
    if (this.tagS >= 0) this.runTag = this.chunk.toString('utf8', this.tagS, this.tagE);
    this.tagS = -1;
    let need = 0;
    for (let i = this.relocated; i < this.n; i++) need += this.docEnd[i]! - this.docStart[i]!;
    let at = this.relocated > 0 ? this.docEnd[this.relocated - 1]! : 0;
    if (at + need > this.aside.length) {
      const bigger = Buffer.alloc(Math.max(2 * this.aside.length, at + need));
      this.aside.copy(bigger, 0, 0, at);
      this.aside = bigger;
    }
    for (let i = this.relocated; i < this.n; i++) {
      const s0 = this.docStart[i]!;
      const e0 = this.docEnd[i]!;
      this.chunk.copy(this.aside, at, s0, e0);
      this.docStart[i] = at;
      at += e0 - s0;
      this.docEnd[i] = at;
    }
    this.relocated = this.n;
  }

  /** Call at the end of the file (after the last chunkEnd). */
  finish(): void {
    this.endBlock();
  }

  private bufOf(i: number): Buffer {
    return i < this.relocated ? this.aside : this.chunk;
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
    this.n = 0;
    this.relocated = 0;
    // A new generation empties the table without touching its slots.
    if (++this.gen === 0x7fffffff) {
      this.dup.fill(0);
      this.gen = 1;
    }
  }

  private endBlock(): void {
    if (this.qidLen < 0 || this.qi < 0) return;
    this.onQuery(this.qi, this.rankedGrades());
  }

  private grow(): void {
    const m = this.scores.length * 2;
    const f = new Float64Array(m);
    f.set(this.scores);
    this.scores = f;
    for (const k of ['grades', 'docStart', 'docEnd', 'lines', 'hashes'] as const) {
      const a = new Int32Array(m);
      a.set(this[k]);
      this[k] = a;
    }
    this.dup = new Int32Array(this.dup.length * 2);
    const dup = this.dup;
    const mask = (dup.length >> 1) - 1;
    for (let i = 0; i < this.n; i++) {
      let slot = this.hashes[i]! & mask;
      while (dup[slot << 1] === this.gen) slot = (slot + 1) & mask;
      dup[slot << 1] = this.gen;
      dup[(slot << 1) + 1] = i;
    }
  }

  private checkDuplicate(i: number, h: number, buf: Buffer, s: number, e: number, lineNo: number): void {
    const dup = this.dup;
    const gen = this.gen;
    const mask = (dup.length >> 1) - 1;
    const len = e - s;
    let slot = h & mask;
    for (;;) {
      if (dup[slot << 1] !== gen) break;
      const j = dup[(slot << 1) + 1]!;
      if (this.hashes[j] === (h | 0) && this.docEnd[j]! - this.docStart[j]! === len) {
        const jb = this.bufOf(j);
        const js = this.docStart[j]!;
        let k = 0;
        while (k < len && jb[js + k] === buf[s + k]) k++;
        if (k === len) {
          throw new InputError(
            this.file,
            lineNo,
            `document "${buf.toString('utf8', s, e)}" appears twice for query "${this.qid}" (first at line ${this.lines[j]})`,
            {
              hint: 'a run ranks each document at most once per query; deduplicate before evaluating',
            },
          );
        }
      }
      slot = (slot + 1) & mask;
    }
    dup[slot << 1] = gen;
    dup[(slot << 1) + 1] = i;
  }

  /** The block's grades in trec_eval rank order; sorts only when the file is not already in that order. */
  private rankedGrades(): Int32Array {
    const n = this.n;
    const sc = this.scores;
    const dsA = this.docStart;
    const deA = this.docEnd;
    const cmpDoc = (a: number, b: number): number => {
      const ab = this.bufOf(a);
      const bb = this.bufOf(b);
      const as = dsA[a]!;
      const bs = dsA[b]!;
      const al = deA[a]! - as;
      const bl = deA[b]! - bs;
      const m = al < bl ? al : bl;
      for (let k = 0; k < m; k++) {
        const d = ab[as + k]! - bb[bs + k]!;
        if (d !== 0) return d;
      }
      return al - bl;
    };
    const before = (a: number, b: number): number => {
      if (sc[a]! > sc[b]!) return -1;
      if (sc[a]! < sc[b]!) return 1;
      return cmpDoc(b, a);
    };
    // Runs are usually written best-first, with ties in arbitrary order: then only each group of equal
    // scores needs sorting (by docId descending). Anything else gets a full sort.
    let byScore = true;
    for (let i = 1; i < n; i++) {
      if (!(sc[i - 1]! >= sc[i]!)) {
        byScore = false;
        break;
      }
    }
    // Reused across blocks: the ranking is consumed (scored) before the next block starts.
    if (this.ranked.length < n) this.ranked = new Int32Array(Math.max(n, 2 * this.ranked.length));
    const out = this.ranked.subarray(0, n);
    const grades = this.grades;
    const tie = this.tie;
    if (byScore) {
      let i = 0;
      while (i < n) {
        let j = i + 1;
        while (j < n && sc[j] === sc[i]) j++;
        if (j - i === 1) out[i] = grades[i]!;
        else if (j - i <= 16) {
          // Ties are short (a 5% tie rate gives pairs): insertion sort in a reused array, no sort callback.
          for (let k = i; k < j; k++) {
            const x = k;
            let m = k - i - 1;
            while (m >= 0 && cmpDoc(tie[m]!, x) < 0) {
              tie[m + 1] = tie[m]!;
              m--;
            }
            tie[m + 1] = x;
          }
          for (let k = i; k < j; k++) out[k] = grades[tie[k - i]!]!;
        } else {
          const group: number[] = [];
          for (let k = i; k < j; k++) group.push(k);
          group.sort((a, b) => cmpDoc(b, a));
          for (let k = i; k < j; k++) out[k] = grades[group[k - i]!]!;
        }
        i = j;
      }
      return out;
    }
    const idx = new Array<number>(n);
    for (let i = 0; i < n; i++) idx[i] = i;
    idx.sort(before);
    for (let i = 0; i < n; i++) out[i] = grades[idx[i]!]!;
    return out;
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
    await streamTrecRun(runPath, sink, chunkBytes, () => sink.chunkEnd(), { start, end });
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
