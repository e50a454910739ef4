import { InputError } from '../errors.js';
import { formatTrecQrels, scanTrecQrels } from '../../evalset/trec.js';
import type { Qrels } from '../../evalset/types.js';
import { compareIds, REL_NONPOOL, REL_UNJUDGED } from '../metrics/ranking.js';
import { fnv1a, heapInt32, type Int32Alloc, lineAt, QrelsLines, scanTrecQrelsFast, sharedInt32 } from './qrels-lines.js';

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
function indexQrels(bytes: Buffer, file: string, int32: Int32Alloc): QrelsIndexParts {
  const lines = scanLines(bytes, file, int32);
  const n = lines.n;
  // Kept by the index: copied to their length when the estimate left more than an eighth unused.
  const toLength = (a: Int32Array): Int32Array => (a.length - n > n >> 3 ? copyOf(a.subarray(0, n), int32) : a.subarray(0, n));
  const judgments: Judgments = { bytes, docStart: toLength(lines.ds), docEnd: toLength(lines.de), grade: toLength(lines.grade), hash: lines.hash, n };
  const seen = numberQueries(bytes, lines, judgments.grade);
  const layout = layOut(seen, int32);
  const { levels, table } = fillTables(file, judgments, seen.lineQ, layout, int32);
  const { qids, levelStart, tabBase, tabMask } = layout;
  return { qids, bytes, levelStart, levels, docStart: judgments.docStart, docEnd: judgments.docEnd, grade: judgments.grade, tabBase, tabMask, table };
}

/** `a` copied into an array of its own length from `int32` (the heap or shared memory). */
function copyOf(a: Int32Array, int32: Int32Alloc): Int32Array {
  const out = int32(a.length);
  out.set(a);
  return out;
}

/** The lines of a qrels file, by the fast scanner or, at a line it does not take, the full reader (which also names errors). */
function scanLines(bytes: Buffer, file: string, int32: Int32Alloc): QrelsLines {
  // Sized from the lines of the first 64 KB (10% over), not by counting every line first: a file of lines
  // of one length fills it without growing; the arrays the index keeps are cut to size (indexQrels).
  const head = Math.min(bytes.length, 1 << 16);
  let headLines = 1;
  for (let i = bytes.indexOf(10); i >= 0 && i < head; i = bytes.indexOf(10, i + 1)) headLines++;
  const lines = new QrelsLines(Math.ceil((1.1 * headLines * bytes.length) / Math.max(1, head)) + 64, int32);
  if (scanTrecQrelsFast(bytes, lines)) return lines;
  const again = new QrelsLines(lines.n, int32);
  scanTrecQrels(bytes, file, again);
  return again;
}

/** The judgments of a qrels file, line by line: document id byte ranges, grades, document id hashes. */
interface Judgments {
  readonly bytes: Buffer;
  readonly docStart: Int32Array;
  readonly docEnd: Int32Array;
  readonly grade: Int32Array;
  readonly hash: Int32Array;
  readonly n: number;
}

/** Each line's query, numbered in order of first appearance, with each query's judgments and highest grade. */
interface SeenQueries {
  readonly lineQ: Int32Array;
  readonly firstSeen: readonly string[];
  readonly seenIndex: ReadonlyMap<string, number>;
  readonly counts: Int32Array;
  readonly maxGrade: Int32Array;
}

/** Numbers the queries of the lines; a string and a map lookup only where the id changes: once per block in a grouped file. */
function numberQueries(bytes: Buffer, lines: QrelsLines, gr: Int32Array): SeenQueries {
  const n = lines.n;
  const { qs, qe, same } = lines;
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
  return { lineQ, firstSeen, seenIndex, counts, maxGrade };
}

/** Where each query's grade counts and hash table go, the queries numbered in trec_eval's order. */
interface Layout {
  readonly qids: readonly string[];
  /** remap[first-seen number] is the query's rank among the ids. */
  readonly remap: Int32Array;
  readonly tabBase: Int32Array;
  readonly tabMask: Int32Array;
  readonly levelStart: Int32Array;
  /** Slots of all the tables. */
  readonly total: number;
}

function layOut(seen: SeenQueries, int32: Int32Alloc): Layout {
  const qids = [...seen.firstSeen].sort(compareIds);
  const nq = qids.length;
  const remap = new Int32Array(nq);
  for (let i = 0; i < nq; i++) remap[seen.seenIndex.get(qids[i]!)!] = i;
  const tabBase = int32(nq);
  const tabMask = int32(nq);
  const levelStart = int32(nq + 1);
  let total = 0;
  for (let r = 0; r < nq; r++) {
    const f = seen.seenIndex.get(qids[r]!)!;
    let size = 4;
    while (size < 2 * seen.counts[f]!) size <<= 1;
    tabBase[r] = total;
    tabMask[r] = size - 1;
    total += size;
    levelStart[r + 1] = levelStart[r]! + Math.max(0, seen.maxGrade[f]! + 1);
  }
  return { qids, remap, tabBase, tabMask, levelStart, total };
}

/** Counts each query's grades and enters each judgment in its query's hash table, refusing a document judged twice. */
function fillTables(file: string, judged: Judgments, lineQ: Int32Array, layout: Layout, int32: Int32Alloc): { levels: Int32Array; table: Int32Array } {
  const { bytes, docStart: dS, docEnd: dE, grade: gr, hash, n } = judged;
  const { qids, remap, tabBase, tabMask, levelStart } = layout;
  const levels = int32(levelStart[qids.length]!);
  const table = int32(2 * layout.total).fill(-1);
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
  return { levels, table };
}

/** What the run side of an evaluation asks of the qrels: a query's number, and a document's grade in it. */
export interface JudgmentSource {
  /** The number of query `qid` (its rank in trec_eval's order), or -1 when the qrels do not judge it. */
  queryIndex(qid: string): number;
  /** The ranking value of a document of query qi: its grade, REL_UNJUDGED if negative, REL_NONPOOL if absent. */
  lookup(qi: number, buf: Uint8Array, s: number, e: number, hash: number): number;
  /**
   * Optional: the FNV-1a hashes (as int32s) of query qi's judged documents, for the run scan to rule out
   * the documents no judgment can match without a lookup; undefined when the source cannot tell.
   */
  judgedHashes?(qi: number): Int32Array | undefined;
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
  /** judgedHashes' answer, reused. */
  private scratch = new Int32Array(256);

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

  /**
   * The index's arrays in SharedArrayBuffers, for fromParts() in a worker thread: as they are when built there
   * (fromBuffer with `shared`), else copied.
   */
  share(): QrelsIndexParts {
    const shared = <T extends Int32Array | Uint8Array>(a: T): T => {
      if (a.buffer instanceof SharedArrayBuffer) return a;
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

  /**
   * Indexes the bytes of a qrels file. `shared`: the index's arrays go straight into SharedArrayBuffers, so
   * share() hands them to worker threads without a copy (give it bytes read with readTrecFile's `shared` too).
   */
  static fromBuffer(buf: Buffer, file: string, opts: { readonly shared?: boolean } = {}): QrelsIndex {
    return new QrelsIndex(indexQrels(buf, file, opts.shared ? sharedInt32 : heapInt32));
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

  /** The hashes of query qi's judged documents (its hash table's taken slots), valid until the next call. */
  judgedHashes(qi: number): Int32Array {
    const base = this.tabBase[qi]!;
    const size = this.tabMask[qi]! + 1;
    if (this.scratch.length < size) this.scratch = new Int32Array(Math.max(size, 2 * this.scratch.length));
    const out = this.scratch;
    let n = 0;
    for (let at = base << 1; at < (base + size) << 1; at += 2) if (this.table[at] !== -1) out[n++] = this.table[at + 1]!;
    return out.subarray(0, n);
  }

  /** lookup() for a document id given as a string (the slow paths). */
  lookupId(qi: number, docId: string): number {
    const b = Buffer.from(docId, 'utf8');
    return this.lookup(qi, b, 0, b.length, fnv1a(b, 0, b.length));
  }
}
