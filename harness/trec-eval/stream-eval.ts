import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { HarnessError, InputError } from '../errors.js';
import { formatTrecQrels, parseScore, readTrecRun, scanTrecQrels, scanTrecRun, streamTrecRun, type RunLineSink } from '../../evalset/trec.js';
import type { Qrels } from '../../evalset/types.js';
import { fnv1a, lineAt, QrelsLines, scanTrecQrelsFast } from './qrels-lines.js';
import { QrelsBlocks, type StreamableQrels } from './qrels-stream.js';
import { compareIds, compareRanked, judgeRankingWithLevels, REL_NONPOOL, REL_UNJUDGED } from './ranking.js';
import { BOGUS_DOCNO, computeTrecRow, finishTrecSummary, summarizeTrec, type TrecEvalSettings, type TrecPlan } from './trec-eval.js';

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
 * The arrays behind a QrelsIndex. After QrelsIndex.share() they live in SharedArrayBuffers, so a worker
 * thread reads the index in place instead of re-reading and re-indexing the qrels file.
 */
export interface QrelsIndexParts {
  /** Query ids in trec_eval order (bytewise). */
  readonly qids: readonly string[];
  /** The qrels file's text; judged document ids are byte ranges of it. */
  readonly bytes: Uint8Array;
  /** Query q's per-grade counts are levels[levelStart[q] .. levelStart[q + 1]). */
  readonly levelStart: Int32Array;
  readonly levels: Int32Array;
  /** Per judgment: its document id's byte range and its grade. */
  readonly docStart: Int32Array;
  readonly docEnd: Int32Array;
  readonly grade: Int32Array;
  /**
   * Per query: its open-addressing table, slots tabBase[q] .. tabBase[q] + tabMask[q]; slot k is the pair
   * table[2k] (a judgment number, -1 empty) and table[2k + 1] (its document id's fnv1a, as an int32), so a
   * probe that meets another document is settled in the table's own cache line.
   */
  readonly tabBase: Int32Array;
  readonly tabMask: Int32Array;
  readonly table: Int32Array;
}

/** Parses a qrels file's bytes into the arrays of its index; a document judged twice for a query is an InputError. */
function indexQrels(bytes: Buffer, file: string): QrelsIndexParts {
  // Sized from the lines of the first 64 KB (10% over), not by counting every line first: a file of lines
  // of one length fills it without growing; the arrays the index keeps are cut to size below.
  const head = Math.min(bytes.length, 1 << 16);
  let headLines = 1;
  for (let i = bytes.indexOf(10); i >= 0 && i < head; i = bytes.indexOf(10, i + 1)) headLines++;
  let lines = new QrelsLines(Math.ceil((1.1 * headLines * bytes.length) / Math.max(1, head)) + 64);
  if (!scanTrecQrelsFast(bytes, lines)) {
    // A line the fast scanner does not take: start again with the full reader, which also names errors.
    lines = new QrelsLines(lines.n);
    scanTrecQrels(bytes, file, lines);
  }
  const n = lines.n;
  const { qs, qe, hash, same } = lines;
  // Kept by the index: copied to their length when the estimate left more than an eighth unused.
  const toLength = (a: Int32Array): Int32Array => (a.length - n > n >> 3 ? a.slice(0, n) : a.subarray(0, n));
  const dS = toLength(lines.ds);
  const dE = toLength(lines.de);
  const gr = toLength(lines.grade);
  // Each line's query in order of first appearance (a string and a map lookup only where the id changes:
  // once per block in a grouped file), with each query's judgments and highest grade counted on the way.
  const lineQ = new Int32Array(n);
  const firstSeen: string[] = [];
  const seenIndex = new Map<string, number>();
  let counts = new Int32Array(64);
  let maxGrade = new Int32Array(64);
  let q = -1;
  for (let i = 0; i < n; i++) {
    if (same[i] === 0) {
      const qid = bytes.toString('utf8', qs[i]!, qe[i]!);
      q = seenIndex.get(qid) ?? -1;
      if (q < 0) {
        q = firstSeen.length;
        firstSeen.push(qid);
        seenIndex.set(qid, q);
        if (q === counts.length) {
          const c2 = new Int32Array(2 * q);
          c2.set(counts);
          counts = c2;
          const m2 = new Int32Array(2 * q);
          m2.set(maxGrade);
          maxGrade = m2;
        }
        maxGrade[q] = -1;
      }
    }
    lineQ[i] = q;
    counts[q]! += 1;
    if (gr[i]! > maxGrade[q]!) maxGrade[q] = gr[i]!;
  }
  // Queries numbered in trec_eval's order: remap[first-seen number] is the query's rank among the ids.
  const qids = [...firstSeen].sort(compareIds);
  const nq = qids.length;
  const remap = new Int32Array(nq);
  for (let i = 0; i < nq; i++) remap[seenIndex.get(qids[i]!)!] = i;
  const tabBase = new Int32Array(nq);
  const tabMask = new Int32Array(nq);
  const levelStart = new Int32Array(nq + 1);
  let total = 0;
  for (let r = 0; r < nq; r++) {
    const f = seenIndex.get(qids[r]!)!;
    let size = 4;
    while (size < 2 * counts[f]!) size <<= 1;
    tabBase[r] = total;
    tabMask[r] = size - 1;
    total += size;
    levelStart[r + 1] = levelStart[r]! + Math.max(0, maxGrade[f]! + 1);
  }
  const levels = new Int32Array(levelStart[nq]!);
  const table = new Int32Array(2 * total).fill(-1);
  for (let i = 0; i < n; i++) {
    const q = remap[lineQ[i]!]!;
    const g = gr[i]!;
    if (g >= 0) levels[levelStart[q]! + g]! += 1;
    const s0 = dS[i]!;
    const len = dE[i]! - s0;
    const base = tabBase[q]!;
    const mask = tabMask[q]!;
    const h = hash[i]!;
    let slot = h & mask;
    for (;;) {
      const j = table[(base + slot) << 1]!;
      if (j === -1) break;
      if (table[((base + slot) << 1) + 1] === h && dE[j]! - dS[j]! === len && bytes.compare(bytes, s0, s0 + len, dS[j]!, dE[j]!) === 0) {
        throw new InputError(
          file,
          lineAt(bytes, s0),
          `document "${bytes.toString('utf8', s0, s0 + len)}" is judged twice for query "${qids[q]}" (first at line ${lineAt(bytes, dS[j]!)})`,
          {
            hint: 'keep one judgment per (query, document); trec_eval rejects duplicates too',
          },
        );
      }
      slot = (slot + 1) & mask;
    }
    table[(base + slot) << 1] = i;
    table[((base + slot) << 1) + 1] = h;
  }
  return { qids, bytes, levelStart, levels, docStart: dS, docEnd: dE, grade: gr, tabBase, tabMask, table };
}

/** What the run side of an evaluation asks of the qrels: a query's number, and a document's grade in it. */
export interface JudgmentSource {
  /** The number of query `qid` (its rank in trec_eval's order), or -1 when the qrels do not judge it. */
  queryIndex(qid: string): number;
  /** The ranking value of a document of query qi: its grade, REL_UNJUDGED if negative, REL_NONPOOL if absent. */
  lookup(qi: number, buf: Uint8Array, s: number, e: number, hash: number): number;
}

/**
 * The qrels of every query over the qrels file's bytes, with an open-addressing hash table per query;
 * built straight from the file, so no string or map entry exists per judgment.
 */
export class QrelsIndex implements JudgmentSource {
  /** Query ids in trec_eval order (bytewise). */
  readonly qids: readonly string[];
  readonly qidIndex = new Map<string, number>();
  /** Per query: number of judged documents with each grade >= 0. */
  readonly relLevels: Int32Array[] = [];
  private readonly bytes: Uint8Array;
  private readonly docStart: Int32Array;
  private readonly docEnd: Int32Array;
  private readonly grade: Int32Array;
  private readonly tabBase: Int32Array;
  private readonly tabMask: Int32Array;
  private readonly table: Int32Array;

  private constructor(private readonly parts: QrelsIndexParts) {
    this.qids = parts.qids;
    for (let i = 0; i < parts.qids.length; i++) this.qidIndex.set(parts.qids[i]!, i);
    for (let q = 0; q < parts.qids.length; q++) this.relLevels.push(parts.levels.subarray(parts.levelStart[q]!, parts.levelStart[q + 1]!));
    this.bytes = parts.bytes;
    this.docStart = parts.docStart;
    this.docEnd = parts.docEnd;
    this.grade = parts.grade;
    this.tabBase = parts.tabBase;
    this.tabMask = parts.tabMask;
    this.table = parts.table;
  }

  /** The index's arrays copied into SharedArrayBuffers, for fromParts() in a worker thread. */
  share(): QrelsIndexParts {
    const shared = <T extends Int32Array | Uint8Array>(a: T): T => {
      const sab = new SharedArrayBuffer(a.byteLength);
      const copy = (a instanceof Int32Array ? new Int32Array(sab) : new Uint8Array(sab)) as T;
      copy.set(a);
      return copy;
    };
    const p = this.parts;
    return {
      qids: p.qids,
      bytes: shared(p.bytes),
      levelStart: shared(p.levelStart),
      levels: shared(p.levels),
      docStart: shared(p.docStart),
      docEnd: shared(p.docEnd),
      grade: shared(p.grade),
      tabBase: shared(p.tabBase),
      tabMask: shared(p.tabMask),
      table: shared(p.table),
    };
  }

  /** An index over arrays from share() (or any index's parts). */
  static fromParts(parts: QrelsIndexParts): QrelsIndex {
    return new QrelsIndex(parts);
  }

  /** Indexes the bytes of a qrels file. */
  static fromBuffer(buf: Buffer, file: string): QrelsIndex {
    return new QrelsIndex(indexQrels(buf, file));
  }

  /** Indexes qrels given as maps (tests, API callers). */
  static fromQrels(qrels: Qrels): QrelsIndex {
    return QrelsIndex.fromBuffer(Buffer.from(formatTrecQrels(qrels), 'utf8'), '<qrels>');
  }

  queryIndex(qid: string): number {
    return this.qidIndex.get(qid) ?? -1;
  }

  /** The ranking value of a document of query qi: its grade, REL_UNJUDGED if negative, REL_NONPOOL if absent. */
  lookup(qi: number, buf: Uint8Array, s: number, e: number, hash: number): number {
    const base = this.tabBase[qi]!;
    const mask = this.tabMask[qi]!;
    const len = e - s;
    const bytes = this.bytes;
    const table = this.table;
    const h = hash | 0;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const at = (base + slot) << 1;
      const d = table[at]!;
      if (d === -1) return REL_NONPOOL;
      if (table[at + 1] !== h) continue;
      const ds = this.docStart[d]!;
      if (this.docEnd[d]! - ds !== len) continue;
      let k = 0;
      while (k < len && bytes[ds + k] === buf[s + k]) k++;
      if (k === len) {
        const g = this.grade[d]!;
        return g < 0 ? REL_UNJUDGED : g;
      }
    }
  }

  /** lookup() for a document id given as a string (the slow paths). */
  lookupId(qi: number, docId: string): number {
    const b = Buffer.from(docId, 'utf8');
    return this.lookup(qi, b, 0, b.length, fnv1a(b, 0, b.length));
  }
}

/** A RunLineSink that may also be given the document id's fnv1a hash (as an int32) with each line. */
export interface HashingRunLineSink extends RunLineSink {
  line(buf: Buffer, lineNo: number, qs: number, qe: number, ds: number, de: number, score: number, ts: number, te: number, docHash?: number): void;
}

/**
 * scanTrecRun(buf, start, end, firstLine, file, sink), faster: the common line (fields separated by spaces
 * or tabs, a plain decimal score) is split and its score parsed in one pass, with no bound test per byte
 * (a '\n' always ends the bytes scanned here). Any other line (blank, comment, another blank byte, too
 * few fields, a score with a sign or exponent) goes through scanTrecRun itself, so lines, values and
 * errors are scanTrecRun's. About half scanTrecRun's time at 5 M lines (stream-eval.test.ts checks
 * that they agree).
 */
export function scanTrecRunFast(buf: Buffer, start: number, end: number, firstLine: number, file: string, sink: HashingRunLineSink): number {
  // Lines up to the last '\n' run fast; a last line without one (end of file) through scanTrecRun.
  const stop = end > start && buf[end - 1] === 10 ? end : Math.max(start, buf.lastIndexOf(10, end - 1) + 1);
  let p = start;
  let lineNo = firstLine;
  let c = 0;
  while (p < stop) {
    let i = p;
    while ((c = buf[i]!) === 32 || c === 9) i++;
    const qs = i;
    // '#' opens a comment; anything at or below ' ' here is a blank line or another blank byte.
    if (c <= 32 || c === 35) {
      p = slowLine(buf, p, stop, lineNo++, file, sink);
      continue;
    }
    while ((c = buf[i]!) > 32) i++;
    const qe = i;
    if (c !== 32 && c !== 9) {
      p = slowLine(buf, p, stop, lineNo++, file, sink);
      continue;
    }
    while ((c = buf[++i]!) === 32 || c === 9);
    while ((c = buf[i]!) > 32) i++;
    if (c !== 32 && c !== 9) {
      p = slowLine(buf, p, stop, lineNo++, file, sink);
      continue;
    }
    while ((c = buf[++i]!) === 32 || c === 9);
    const ds = i;
    // The document id's FNV-1a hash (fnv1a's, as an int32) on the way, for the sink's lookups.
    let h = 0x811c9dc5 | 0;
    while ((c = buf[i]!) > 32) {
      h = Math.imul(h ^ c, 0x01000193);
      i++;
    }
    const de = i;
    if ((c !== 32 && c !== 9) || de === ds) {
      p = slowLine(buf, p, stop, lineNo++, file, sink);
      continue;
    }
    while ((c = buf[++i]!) === 32 || c === 9);
    const rs = i;
    while ((c = buf[i]!) > 32) i++;
    if ((c !== 32 && c !== 9) || i === rs) {
      p = slowLine(buf, p, stop, lineNo++, file, sink);
      continue;
    }
    while ((c = buf[++i]!) === 32 || c === 9);
    const ss = i;
    // digits[.digits] with at most 15 digits: the mantissa is exact and so is one division by 10^frac,
    // parseScore's own fast path; anything else is parsed by parseScore. Each part (at most 9 digits, so an
    // int32) is read in integer arithmetic: a double's multiply-add per digit was a fifth of the scan.
    // mant = whole * 10^frac + part is then the same exact integer parseScore builds digit by digit.
    let whole = 0;
    let wholeDigits = 0;
    while ((c = buf[i]! - 48) >= 0 && c <= 9) {
      whole = (whole * 10 + c) | 0;
      wholeDigits++;
      i++;
    }
    let part = 0;
    let frac = 0;
    if (c === -2) {
      i++;
      while ((c = buf[i]! - 48) >= 0 && c <= 9) {
        part = (part * 10 + c) | 0;
        frac++;
        i++;
      }
    }
    c = buf[i]!;
    let score: number;
    if ((c === 32 || c === 9) && wholeDigits + frac > 0 && wholeDigits <= 9 && frac <= 9 && wholeDigits + frac <= 15)
      score = frac === 0 ? whole : (whole * POW10[frac]! + part) / POW10[frac]!;
    else {
      while ((c = buf[i]!) > 32) i++;
      if ((c !== 32 && c !== 9) || i === ss) {
        p = slowLine(buf, p, stop, lineNo++, file, sink);
        continue;
      }
      score = parseScore(buf, ss, i);
      if (Number.isNaN(score)) {
        p = slowLine(buf, p, stop, lineNo++, file, sink);
        continue;
      }
    }
    while ((c = buf[++i]!) === 32 || c === 9);
    const ts = i;
    while ((c = buf[i]!) > 32) i++;
    const te = i;
    if (te === ts) {
      p = slowLine(buf, p, stop, lineNo++, file, sink);
      continue;
    }
    while (c !== 10) c = buf[++i]!;
    p = i + 1;
    sink.line(buf, lineNo++, qs, qe, ds, de, score, ts, te, h);
  }
  if (stop < end) lineNo += scanTrecRun(buf, stop, end, lineNo, file, sink);
  return lineNo - firstLine;
}

/** One line at p, through scanTrecRun; returns where the next line starts. */
function slowLine(buf: Buffer, p: number, stop: number, lineNo: number, file: string, sink: RunLineSink): number {
  const eol = buf.indexOf(10, p);
  const next = eol < 0 || eol >= stop ? stop : eol + 1;
  scanTrecRun(buf, p, next, lineNo, file, sink);
  return next;
}

const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];

/** How many bytes of a chunk BlockSink.scan hands scanTrecRunFast at a time. */
const SCAN_SLICE = 1 << 16;

/** Signals a query id seen again after its block ended: the run is not grouped by query. */
class NotGrouped extends Error {}

/**
 * Collects one query block at a time and scores it when the block ends. Document ids stay in the read
 * buffer (offsets only); at a chunk boundary the open block's ids are copied aside, since the buffer is
 * about to be reused.
 */
class BlockSink implements RunLineSink {
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
    const r = judgeRankingWithLevels(ranked, index.relLevels[qi]!, s.relevanceLevel, {
      ...(s.maxDocs === undefined ? {} : { maxDocs: s.maxDocs }),
      judgedOnly: s.judgedOnly,
    });
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

/**
 * How a run file is split for parallel scoring: byte offsets where a new query's lines begin. The first
 * part gets `firstShare` of the bytes (the main thread, which also prints), the others equal shares.
 */
export function splitAtQueryBoundaries(runPath: string, parts: number, firstShare = 1 / parts): number[] {
  const size = statSync(runPath).size;
  const cuts = [0];
  if (parts < 2) return [0, size];
  const fd = openSync(runPath, 'r');
  try {
    // Query blocks are short (37 kB at depth 1,000): a small window finds the next one in a read or two.
    const win = Buffer.allocUnsafe(1 << 16);
    for (let k = 1; k < parts; k++) {
      const share = firstShare + ((k - 1) * (1 - firstShare)) / (parts - 1);
      let pos = Math.max(Math.floor(size * share), cuts[cuts.length - 1]!);
      let firstQid: Buffer | undefined;
      let cut = -1;
      // Scan forward line by line from the first line start after `pos` until the query id changes.
      let carry = Buffer.alloc(0);
      let skipPartial = pos > 0;
      while (cut < 0 && pos < size) {
        const got = readSync(fd, win, 0, win.length, pos);
        const data = carry.length ? Buffer.concat([carry, win.subarray(0, got)]) : win.subarray(0, got);
        const base = pos - carry.length;
        pos += got;
        let p = 0;
        if (skipPartial) {
          const nl = data.indexOf(10);
          if (nl < 0) {
            carry = Buffer.alloc(0);
            continue;
          }
          p = nl + 1;
          skipPartial = false;
        }
        for (;;) {
          const nl = data.indexOf(10, p);
          if (nl < 0 && pos < size) break;
          const lineEnd = nl < 0 ? data.length : nl;
          let a = p;
          while (a < lineEnd && (data[a] === 32 || data[a] === 9)) a++;
          let b = a;
          while (b < lineEnd && data[b] !== 32 && data[b] !== 9 && data[b] !== 13) b++;
          if (b > a && data[a] !== 35) {
            const qid = data.subarray(a, b);
            if (firstQid === undefined) firstQid = Buffer.from(qid);
            else if (!qid.equals(firstQid)) {
              cut = base + p;
              break;
            }
          }
          if (nl < 0) break;
          p = nl + 1;
        }
        carry = cut < 0 && p < data.length ? Buffer.from(data.subarray(p)) : Buffer.alloc(0);
      }
      if (cut < 0) break;
      cuts.push(cut);
    }
  } finally {
    closeSync(fd);
  }
  cuts.push(size);
  return [...new Set(cuts)];
}

const WORKER_URL = new URL('./stream-worker.js', import.meta.url);
/**
 * Below this size `--threads N` scores the run on the main thread alone. A worker must start a V8 isolate and
 * load the metrics modules before it reads a byte (0.1-0.2 s on an idle core, 0.7-0.9 s wall measured on a
 * 2-core machine at load 11), then runs cold (its JIT starts over: ~0.3 s of CPU), while one thread scores
 * ~50 MB of run per CPU second at depth 100-1,000 (bench/eval.ts).
 */
const PARALLEL_MIN_BYTES = 32 << 20;
/**
 * `--threads auto` adds a thread per this much run: twice PARALLEL_MIN_BYTES, so that the half of the run a
 * worker can take (over a second of scoring) is at least twice what the worker costs to start.
 */
const AUTO_BYTES_PER_THREAD = 64 << 20;
/** Never more threads than this: the main thread's merge and printing do not shrink with more workers. */
const MAX_THREADS = 4;
/**
 * A parallel run is cut into pieces of about this size, which the threads claim one at a time: a thread that
 * starts late (a worker's isolate and cold JIT) or runs slowly (a shared core) simply takes fewer, and the
 * last piece to finish keeps the others waiting for a few tens of milliseconds at most.
 */
const PIECE_BYTES = 4 << 20;
/** The read buffer of a piece (streamTrecRun grows it for longer lines). */
const PIECE_CHUNK = 1 << 20;

/**
 * One thread's scoring pace at `eval -q -m all_trec` (bench/eval.ts on the 2-core machine, ADR 0023 "auto by
 * the work"): reading, parsing and sorting a run byte, and computing one value of a query's row. 185 MB at
 * depth 1,000 (5,000 queries) scored in 1.1-1.35 s, the same bytes at depth 100 (50,000 queries) in 1.3 s
 * for one measure and 2.1 s for all_trec's 99 values.
 */
const SCORING_NS_PER_RUN_BYTE = 6;
const SCORING_NS_PER_VALUE = 160;
/**
 * `--threads auto` gives a run a worker only when one thread would score it for this long. A worker starts
 * ~0.2 s late and runs its first pieces cold, and on the 2-core machine two threads each score ~1.5x slower
 * than one alone (a single thread already keeps ~1.2 cores busy with its collector and compiler), so a worker
 * saves time only on long runs. Paired wall ratios of `--threads 2` against one thread, 2026-11-24: 5k x 1,000
 * (1.2 s estimated) 0.98-1.05; 50k x 100 (1.9 s) 0.93-1.13, median 0.99; 150k x 100 (5.8 s) 1.05-1.27,
 * median 1.14 (ADR 0023, "auto by the work").
 */
const AUTO_MIN_SCORING_SECONDS = 4;

/** What a run asks of its scoring: the queries with judgments and the values of each query's row (plan.width). */
export interface ScoringWork {
  readonly queries: number;
  readonly width: number;
}

/** The seconds one thread is expected to score a run in: runBytes x 6 ns + queries x width x 160 ns. */
export function scoringSeconds(runBytes: number, work: ScoringWork): number {
  return (runBytes * SCORING_NS_PER_RUN_BYTE + work.queries * work.width * SCORING_NS_PER_VALUE) / 1e9;
}

/**
 * How many threads `--threads auto` gives a run of `runBytes` bytes: one per AUTO_BYTES_PER_THREAD of run
 * (so one below 128 MB), up to MAX_THREADS and the cores no other thread is running on now (`cores - busy`).
 * A worker with no idle core only competes with the main thread for one and costs its start-up, memory and
 * cold JIT: then one thread. `busy` is what runs now (busyThreads), not the 1-minute load average, which
 * lags by a minute and counts this process's own previous runs. Given the `work` (known once the qrels are
 * read), one thread as well when its scoring is shorter than AUTO_MIN_SCORING_SECONDS (4 s).
 */
export function chooseThreads(runBytes: number, cores = availableParallelism(), busy: number | (() => number) = busyThreads, work?: ScoringWork): number {
  // The byte and work rules first: they need no reading of /proc, which most runs (one thread) then skip.
  if (!autoMayThread(runBytes) || cores < 2) return 1;
  if (work !== undefined && scoringSeconds(runBytes, work) < AUTO_MIN_SCORING_SECONDS) return 1;
  // A quarter core of slack for what a measurement over a short window calls busy (daemons, this process's GC).
  const idle = Math.floor(cores - (typeof busy === 'number' ? busy : busy()) + 0.25);
  return Math.max(1, Math.min(idle, MAX_THREADS, Math.floor(runBytes / AUTO_BYTES_PER_THREAD)));
}

/** Whether `--threads auto` may give a run of `runBytes` bytes more than one thread on any machine. */
export function autoMayThread(runBytes: number): boolean {
  return runBytes >= 2 * AUTO_BYTES_PER_THREAD;
}

/** The machine's CPU time counters (/proc/stat, clock ticks) and this process's CPU time, at one moment. */
export interface CpuSample {
  /** Ticks all cores spent idle (idle + iowait), and in all states. */
  readonly idle: number;
  readonly total: number;
  /** This process's CPU time (user + system, microseconds) and the monotonic clock (milliseconds). */
  readonly own: number;
  readonly at: number;
}

/**
 * The cores other processes kept busy between two CpuSamples: cores x (1 - idle ticks / all ticks), less this
 * process's CPU seconds per second of the window.
 */
export function busyBetween(since: CpuSample, now: CpuSample, cores: number): number {
  const machine = cores * (1 - (now.idle - since.idle) / (now.total - since.total));
  const own = (now.own - since.own) / 1000 / (now.at - since.at);
  return Math.max(0, machine - own);
}

/** A CpuSample, or undefined where /proc/stat is absent. */
export function cpuSample(): CpuSample | undefined {
  try {
    const text = readFileSync('/proc/stat', 'latin1');
    const f = text.slice(0, text.indexOf('\n')).trim().split(/\s+/);
    // cpu user nice system idle iowait irq softirq steal
    const v = f.slice(1, 9).map(Number);
    if (f[0] !== 'cpu' || v.length < 8 || !v.every(Number.isFinite)) return undefined;
    const own = process.cpuUsage();
    return { idle: v[3]! + v[4]!, total: v.reduce((a, b) => a + b, 0), own: own.user + own.system, at: performance.now() };
  } catch {
    return undefined;
  }
}

/**
 * The cores other processes keep busy. Measured when `since` is a CpuSample taken long enough ago (20 clock
 * ticks, ~100 ms on 2 cores; harness eval takes it before reading the qrels): the cores not idle since then,
 * less the ones this process used. Otherwise a snapshot: the threads runnable right now (the fourth field of
 * /proc/loadavg, `runnable/total`) less this one, or the 1-minute load average where /proc is absent.
 */
export function busyThreads(since?: CpuSample, cores = availableParallelism()): number {
  const now = since && cpuSample();
  if (since && now && now.total - since.total >= 20 && now.at > since.at) return busyBetween(since, now, cores);
  try {
    const runnable = Number.parseInt(readFileSync('/proc/loadavg', 'latin1').split(' ')[3]!, 10);
    if (Number.isInteger(runnable)) return Math.max(0, runnable - 1);
  } catch {
    // Not Linux: the load average is what there is.
  }
  return loadavg()[0]!;
}

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
  const parallel = threads > 1 && size >= minBytes && existsSync(fileURLToPath(WORKER_URL));
  const s = plan.settings;
  if (!s.perQuery && !parallel) {
    const summed = await sumInOrder(index, runPath, plan);
    if (summed !== undefined) return summed;
  }
  const nq = index.qids.length;
  const w = plan.width;
  const slots = new Float64Array(nq * w);
  const slotRel: (string | undefined)[] = new Array(nq);
  const done = new Uint8Array(nq);
  const score = (qi: number, ranked: Int32Array, bogus = false): void => {
    const r = judgeRankingWithLevels(ranked, index.relLevels[qi]!, s.relevanceLevel, {
      ...(s.maxDocs === undefined ? {} : { maxDocs: s.maxDocs }),
      judgedOnly: s.judgedOnly,
    });
    slotRel[qi] = computeTrecRow(plan, r, slots, qi * w, bogus);
    done[qi] = 1;
  };

  const cuts = parallel ? splitAtQueryBoundaries(runPath, Math.max(4 * threads, Math.ceil(size / PIECE_BYTES))) : [0, size];
  let results: RangeResult[];
  try {
    results =
      cuts.length > 2
        ? await evaluatePieces(index, runPath, plan, cuts, threads - 1, score)
        : [await evaluateRunRange(index, runPath, plan, 0, cuts[1]!, (qi, ranked) => score(qi, ranked))];
  } catch (e) {
    throw await withAbsoluteLine(e, runPath, cuts);
  }

  let runTag = '';
  let dropped: string[] = [];
  const seenAll = new Set<string>();
  let grouped = results.every((r) => !r.notGrouped);
  for (const r of results) {
    for (const q of r.seen) {
      if (seenAll.has(q)) grouped = false;
      seenAll.add(q);
    }
  }
  if (grouped) {
    for (const r of results) {
      for (let k = 0; k < r.qis.length; k++) {
        const qi = r.qis[k]!;
        slots.set(r.rows.subarray(k * w, (k + 1) * w), qi * w);
        slotRel[qi] = r.relstrings[k];
        done[qi] = 1;
      }
      if (r.runTag) runTag = r.runTag;
      dropped = dropped.concat(r.dropped);
    }
  } else {
    // Rare: a query's lines are split across the file. Re-read it whole; scores are the same.
    const { run, runTag: tag } = await readTrecRun(runPath);
    runTag = tag;
    seenAll.clear();
    for (const q of run.keys()) seenAll.add(q);
    dropped = [...run.keys()].filter((q) => !index.qidIndex.has(q));
    for (const [qid, docs] of run) {
      const qi = index.qidIndex.get(qid);
      if (qi !== undefined)
        score(
          qi,
          rankedGradesOf(docs, (id) => index.lookupId(qi, id)),
        );
    }
  }
  if (seenAll.size === 0) throw new InputError(runPath, undefined, 'the run has no result lines');

  const missing: string[] = [];
  for (let qi = 0; qi < nq; qi++) {
    if (done[qi]) continue;
    missing.push(index.qids[qi]!);
    if (s.averageComplete) score(qi, Int32Array.of(index.lookupId(qi, BOGUS_DOCNO)), true);
  }
  const queryIds: string[] = [];
  const order: number[] = [];
  for (let qi = 0; qi < nq; qi++) {
    if (done[qi]) {
      queryIds.push(index.qids[qi]!);
      order.push(qi);
    }
  }
  if (queryIds.length === 0) {
    throw new InputError(runPath, undefined, 'no query of the run has relevance judgments in the qrels', {
      hint: 'check that the qrels and the run use the same query ids',
    });
  }
  // Compacted in place (order is ascending, so row k never overwrites a later query's slot): a second
  // array of every row would double the peak memory of a large run.
  order.forEach((qi, k) => {
    if (qi !== k) slots.copyWithin(k * w, qi * w, qi * w + w);
  });
  const rows = slots.subarray(0, order.length * w);
  const relstrings = order.map((qi) => slotRel[qi]);
  const summary = summarizeTrec(plan, rows, order.length, nq);
  const evaluated = queryIds.length;
  if (!s.perQuery)
    return { plan, queryIds, evaluated, rows: new Float64Array(0), relstrings: [], summary, runTag, missingQueries: missing, droppedRunQueries: dropped };
  return { plan, queryIds, evaluated, rows, relstrings, summary, runTag, missingQueries: missing, droppedRunQueries: dropped };
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
  const row = new Float64Array(w);
  const acc = new Float64Array(w);
  const queryIds: string[] = [];
  const missing: string[] = [];
  let last = -1;
  const add = (qi: number, ranked: Int32Array, bogus: boolean): void => {
    const r = judgeRankingWithLevels(ranked, index.relLevels[qi]!, s.relevanceLevel, {
      ...(s.maxDocs === undefined ? {} : { maxDocs: s.maxDocs }),
      judgedOnly: s.judgedOnly,
    });
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
  if (queryIds.length === 0) {
    throw new InputError(runPath, undefined, 'no query of the run has relevance judgments in the qrels', {
      hint: 'check that the qrels and the run use the same query ids',
    });
  }
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
  const w = plan.width;
  const s = plan.settings;
  const judge = { ...(s.maxDocs === undefined ? {} : { maxDocs: s.maxDocs }), judgedOnly: s.judgedOnly };
  const row = new Float64Array(w);
  const acc = new Float64Array(w);
  const missing: string[] = [];
  let evaluated = 0;
  // With -q and no perQuery sink, a row per query (and its id and relstring) until printed; else running sums only.
  const keep = s.perQuery && perQuery === undefined;
  let rows = new Float64Array(keep ? 64 * w : 0);
  const queryIds: string[] = [];
  const relstrings: (string | undefined)[] = [];
  const blocks = new QrelsBlocks(qrelsPath);
  const add = (ranked: Int32Array, bogus: boolean): void => {
    const r = judgeRankingWithLevels(ranked, blocks.levels, s.relevanceLevel, judge);
    if (keep) {
      if ((evaluated + 1) * w > rows.length) {
        const bigger = new Float64Array(2 * rows.length);
        bigger.set(rows);
        rows = bigger;
      }
      relstrings.push(computeTrecRow(plan, r, rows, evaluated * w, bogus));
      queryIds.push(blocks.qid);
    } else {
      const relstring = computeTrecRow(plan, r, row, 0, bogus);
      for (let j = 0; j < w; j++) acc[j] = acc[j]! + row[j]!;
      if (s.perQuery) perQuery!(blocks.qid, row, 0, relstring);
    }
    evaluated++;
  };
  const bogus = Buffer.from(BOGUS_DOCNO, 'utf8');
  const bogusHash = fnv1a(bogus, 0, bogus.length) | 0;
  let current = false;
  let used = false;
  let last: string | undefined;
  // The qrels query the run did not reach is missing from it: under -c, trec_eval's empty ranking.
  const skip = (): void => {
    if (!used) {
      missing.push(blocks.qid);
      if (s.averageComplete) add(Int32Array.of(blocks.lookup(bogus, 0, bogus.length, bogusHash)), true);
    }
    used = false;
    current = blocks.next();
    if (blocks.duplicate) throw new OutOfOrder(`a document is judged twice for query "${blocks.qid}"`);
  };
  const source: JudgmentSource = {
    queryIndex(qid) {
      // Increasing ids are also grouped ones: the run side keeps no set of the ids it met.
      if (last !== undefined && compareIds(qid, last) <= 0) throw new OutOfOrder();
      last = qid;
      while (current) {
        const c = compareIds(blocks.qid, qid);
        if (c > 0) return -1;
        if (c === 0) {
          used = true;
          return blocks.qi;
        }
        skip();
      }
      return -1;
    },
    lookup: (_qi, buf, s0, e0, h) => blocks.lookup(buf, s0, e0, h),
  };
  const sink = new BlockSink(runPath, source, (_qi, ranked) => add(ranked, false), false);
  try {
    current = blocks.next();
    if (blocks.duplicate) throw new OutOfOrder(`a document is judged twice for query "${blocks.qid}"`);
    await streamTrecRun(runPath, sink, undefined, () => sink.chunkEnd());
    sink.finish();
    while (current) skip();
  } catch (e) {
    if (e instanceof OutOfOrder) return e.message || "its queries are not in trec_eval's order";
    // The index reads the whole qrels before the run: a run error must not hide a duplicate judgment it reports.
    if (e instanceof InputError) {
      while (!blocks.duplicate && blocks.next());
      if (blocks.duplicate) return `a document is judged twice for query "${blocks.qid}"`;
    }
    throw e;
  } finally {
    blocks.close();
  }
  if (blocks.refused || blocks.qi + 1 !== qrels.queries) throw new HarnessError(`${qrelsPath} changed while it was being read; run harness eval again`);
  if (sink.blocks === 0) throw new InputError(runPath, undefined, 'the run has no result lines');
  if (evaluated === 0) {
    throw new InputError(runPath, undefined, 'no query of the run has relevance judgments in the qrels', {
      hint: 'check that the qrels and the run use the same query ids',
    });
  }
  // summarizeTrec adds the rows in the order the running sums are added: the same bits either way.
  rows = rows.subarray(0, evaluated * w);
  const summary = keep ? summarizeTrec(plan, rows, evaluated, qrels.queries) : finishTrecSummary(plan, acc, evaluated, qrels.queries);
  return {
    plan,
    queryIds,
    evaluated,
    rows,
    relstrings,
    summary,
    runTag: sink.runTag,
    missingQueries: missing,
    droppedRunQueries: sink.dropped,
  };
}

/** The messages a worker sends back: one per piece it scored, then `done`. */
export type WorkerReply =
  | { readonly ok: true; readonly piece: number; readonly result: RangeResult }
  | {
      readonly ok: false;
      readonly piece: number;
      readonly input?: { file: string; line: number | undefined; message: string; hint: string | undefined };
      readonly message: string;
    }
  | { readonly done: true };

/** Input of a worker (see stream-worker.ts). */
export interface WorkerTask {
  /** The qrels index, from QrelsIndex.share(). */
  readonly index: QrelsIndexParts;
  readonly runPath: string;
  readonly settings: TrecEvalSettings;
  /** Piece k is bytes [cuts[k], cuts[k + 1]) of the run. */
  readonly cuts: readonly number[];
  /** The next piece to claim (Atomics.add), shared by every thread; set past the last piece after an error. */
  readonly next: Int32Array;
}

/**
 * Scores the pieces of a run on this thread and `workers` worker threads, each claiming the next piece from
 * a shared counter until none is left (so the work divides itself by how fast each thread turns out to be).
 * This thread scores its pieces through `score`; the workers send rows back per piece (transferred typed
 * arrays, no copy). After an error no further piece is claimed, the pieces already claimed finish, and the
 * error of the earliest piece is thrown: the one a single thread would have met first.
 */
async function evaluatePieces(
  index: QrelsIndex,
  runPath: string,
  plan: TrecPlan,
  cuts: readonly number[],
  workers: number,
  score: (qi: number, ranked: Int32Array) => void,
): Promise<RangeResult[]> {
  const pieces = cuts.length - 1;
  const next = new Int32Array(new SharedArrayBuffer(4));
  const results = new Array<RangeResult | undefined>(pieces);
  const errors = new Array<unknown>(pieces);
  const task: WorkerTask = { index: index.share(), runPath, settings: plan.settings, cuts, next };
  const started = Array.from({ length: workers }, () => startWorker(task, results, errors));
  for (;;) {
    const k = Atomics.add(next, 0, 1);
    if (k >= pieces) break;
    try {
      results[k] = await evaluateRunRange(index, runPath, plan, cuts[k]!, cuts[k + 1]!, score, PIECE_CHUNK);
    } catch (e) {
      if (e instanceof InputError) (e as InputError & { rangeStart?: number }).rangeStart = cuts[k]!;
      errors[k] = e;
      Atomics.store(next, 0, pieces);
      break;
    }
  }
  try {
    await Promise.all(started.map((x) => x.done));
  } catch (e) {
    for (const x of started) void x.worker.terminate();
    throw e;
  }
  for (let k = 0; k < pieces; k++) if (errors[k] !== undefined) throw errors[k];
  return results as RangeResult[];
}

function startWorker(task: WorkerTask, results: (RangeResult | undefined)[], errors: unknown[]): { readonly worker: Worker; readonly done: Promise<void> } {
  const worker = new Worker(WORKER_URL, { workerData: task });
  const done = new Promise<void>((resolve, reject) => {
    worker.on('message', (reply: WorkerReply) => {
      if ('done' in reply) {
        void worker.terminate();
        resolve();
      } else if (reply.ok) results[reply.piece] = reply.result;
      else if (reply.input) {
        const err = new InputError(reply.input.file, reply.input.line, reply.input.message, reply.input.hint === undefined ? {} : { hint: reply.input.hint });
        (err as InputError & { rangeStart?: number }).rangeStart = task.cuts[reply.piece]!;
        errors[reply.piece] = err;
      } else errors[reply.piece] = new HarnessError(`evaluation worker failed: ${reply.message}`);
    });
    worker.once('error', (e) => reject(e));
    worker.once('exit', (code) => reject(new HarnessError(`evaluation worker exited (code ${code}) before it finished`)));
  });
  // A failure on this thread abandons the workers; their rejections must not surface as unhandled.
  done.catch(() => {});
  return { worker, done };
}

/** Errors from a range that does not start the file carry line numbers relative to it; make them absolute. */
async function withAbsoluteLine(e: unknown, runPath: string, cuts: readonly number[]): Promise<unknown> {
  const start = (e as { rangeStart?: number }).rangeStart;
  if (!(e instanceof InputError) || e.file !== runPath || start === undefined || start === 0 || e.line === undefined || !cuts.includes(start)) return e;
  let before = 0;
  const fd = openSync(runPath, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    for (let pos = 0; pos < start; ) {
      const got = readSync(fd, buf, 0, Math.min(buf.length, start - pos), pos);
      if (got === 0) break;
      for (let i = buf.indexOf(10, 0); i >= 0 && i < got; i = buf.indexOf(10, i + 1)) before++;
      pos += got;
    }
  } finally {
    closeSync(fd);
  }
  const prefix = `${e.file}:${e.line}: `;
  const raw = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
  return new InputError(e.file, e.line + before, raw, e.hint === undefined ? {} : { hint: e.hint });
}

/** The ranking values (see QrelsIndex.lookup) of one query's run entries in trec_eval rank order. */
function rankedGradesOf(docs: ReadonlyMap<string, number>, gradeOf: (docId: string) => number): Int32Array {
  const ids = [...docs.keys()];
  ids.sort((a, b) => compareRanked(docs.get(a)!, a, docs.get(b)!, b));
  const out = new Int32Array(ids.length);
  ids.forEach((id, i) => (out[i] = gradeOf(id)));
  return out;
}
