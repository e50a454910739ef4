import type { QrelsLineSink } from '../../evalset/trec.js';

/**
 * The lines of a qrels text, scanned into typed arrays: what the qrels index (qrels-index.ts, QrelsIndex) and
 * the streamed qrels (qrels-stream.ts, QrelsBlocks) both read.
 */

/** FNV-1a (32 bits) of buf[s, e): the hash of document ids in the qrels tables and the run scanner. */
export function fnv1a(buf: Uint8Array, s: number, e: number): number {
  let h = 0x811c9dc5;
  for (let i = s; i < e; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
  return h >>> 0;
}

/** Allocates the Int32Arrays an index keeps: on the heap, or in SharedArrayBuffers for an index worker threads will read. */
export type Int32Alloc = (n: number) => Int32Array;
export const heapInt32: Int32Alloc = (n) => new Int32Array(n);
export const sharedInt32: Int32Alloc = (n) => new Int32Array(new SharedArrayBuffer(4 * n));

/**
 * The lines of a qrels text as typed arrays (line k: its query and document ids' byte ranges, its grade, its
 * document id's fnv1a, whether its query id is the line before's; no line number, which only an error needs:
 * see lineAt), which scanTrecQrelsFast
 * fills in one loop while the line's bytes are in cache: no call per line, so the scanner stays monomorphic
 * whichever reader (QrelsIndex, QrelsBlocks) uses it. Also a QrelsLineSink, for scanTrecQrels.
 */
export class QrelsLines implements QrelsLineSink {
  n = 0;
  qs: Int32Array;
  qe: Int32Array;
  ds: Int32Array;
  de: Int32Array;
  grade: Int32Array;
  /** fnv1a of the document id, as an int32. */
  hash: Int32Array;
  /** 1 when the query id is byte for byte the previous line's (of the same scan). */
  same: Uint8Array;

  /** `int32` allocates the arrays an index keeps (ds, de, grade): in shared memory when the index will be shared. */
  constructor(
    capacity: number,
    private readonly int32: Int32Alloc = heapInt32,
  ) {
    const c = Math.max(16, capacity);
    this.qs = new Int32Array(c);
    this.qe = new Int32Array(c);
    this.ds = int32(c);
    this.de = int32(c);
    this.grade = int32(c);
    this.hash = new Int32Array(c);
    this.same = new Uint8Array(c);
  }

  line(buf: Buffer, _lineNo: number, qs: number, qe: number, ds: number, de: number, grade: number): void {
    const k = this.n;
    if (k === this.qs.length) this.grow();
    this.qs[k] = qs;
    this.qe[k] = qe;
    this.ds[k] = ds;
    this.de[k] = de;
    this.grade[k] = grade;
    this.hash[k] = fnv1a(buf, ds, de) | 0;
    this.same[k] = k > 0 && qe - qs === this.qe[k - 1]! - this.qs[k - 1]! && buf.compare(buf, qs, qe, this.qs[k - 1]!, this.qe[k - 1]!) === 0 ? 1 : 0;
    this.n = k + 1;
  }

  /** Doubles the capacity, keeping lines [0, n). */
  grow(): void {
    const m = 2 * this.qs.length;
    for (const k of ['qs', 'qe', 'ds', 'de', 'grade', 'hash'] as const) {
      const a = k === 'ds' || k === 'de' || k === 'grade' ? this.int32(m) : new Int32Array(m);
      a.set(this[k].subarray(0, this.n));
      this[k] = a;
    }
    const same = new Uint8Array(m);
    same.set(this.same.subarray(0, this.n));
    this.same = same;
  }
}

/** The 1-based line of a text at byte `at`: the line numbers of scanTrecQrels (lines end at '\n'). */
export function lineAt(bytes: Uint8Array, at: number): number {
  let line = 1;
  for (let i = bytes.indexOf(10); i >= 0 && i < at; i = bytes.indexOf(10, i + 1)) line++;
  return line;
}

/**
 * scanTrecQrels(buf, file, sink) for the common file, in one pass with no bound test per byte: every line
 * `qid iter docid grade` with fields separated by spaces or tabs, an integer grade, an optional '\r'
 * before the '\n', or blank, or a comment. Appends each line of buf to `out`. Returns false at the first other line (BEIR's TSV, another
 * blank byte, too few or too many fields, a grade that is not an integer), having appended the lines before
 * it: the caller then starts again with scanTrecQrels. A third of scanTrecQrels' time on 250,000 judgments.
 */
export function scanTrecQrelsFast(buf: Buffer, out: QrelsLines): boolean {
  const end = buf.length;
  let p = 0;
  let c = 0;
  let k = out.n;
  let cap = out.qs.length;
  // The previous line's query id (start, length), for out.same.
  let prevS = -1;
  let prevL = -1;
  try {
    while (p < end) {
      let i = p;
      while ((c = buf[i]!) === 32 || c === 9) i++;
      const qs = i;
      if (i >= end) break;
      if (c === 10 || c === 35) {
        const eol = buf.indexOf(10, i);
        p = eol < 0 ? end : eol + 1;
        continue;
      }
      if (c <= 32) return false;
      while ((c = buf[i]!) > 32) i++;
      const qe = i;
      if (c !== 32 && c !== 9) return false;
      while ((c = buf[++i]!) === 32 || c === 9);
      while ((c = buf[i]!) > 32) i++;
      if (c !== 32 && c !== 9) return false;
      while ((c = buf[++i]!) === 32 || c === 9);
      const ds = i;
      let h = 0x811c9dc5 | 0;
      while ((c = buf[i]!) > 32) {
        h = Math.imul(h ^ c, 0x01000193);
        i++;
      }
      const de = i;
      if ((c !== 32 && c !== 9) || de === ds) return false;
      while ((c = buf[++i]!) === 32 || c === 9);
      // parseGrade's rule: an optional sign, then 1 to 9 digits.
      const neg = c === 45;
      if (neg || c === 43) c = buf[++i]!;
      const gs = i;
      let grade = 0;
      while ((c = buf[i]! - 48) >= 0 && c <= 9) {
        grade = grade * 10 + c;
        i++;
      }
      if (i === gs || i - gs > 9) return false;
      while ((c = buf[i]!) === 32 || c === 9 || c === 13) i++;
      if (i < end && c !== 10) return false;
      if (k === cap) {
        out.n = k;
        out.grow();
        cap = out.qs.length;
      }
      out.qs[k] = qs;
      out.qe[k] = qe;
      out.ds[k] = ds;
      out.de[k] = de;
      out.grade[k] = neg ? -grade : grade;
      out.hash[k] = h;
      const l = qe - qs;
      let same = l === prevL ? 1 : 0;
      for (let m = 0; same === 1 && m < l; m++) if (buf[qs + m] !== buf[prevS + m]) same = 0;
      out.same[k] = same;
      prevS = qs;
      prevL = l;
      k++;
      p = i + 1;
    }
    return true;
  } finally {
    out.n = k;
  }
}
