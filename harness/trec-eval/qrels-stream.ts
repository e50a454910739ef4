import { closeSync, openSync, readSync } from 'node:fs';
import { compareIds, REL_NONPOOL, REL_UNJUDGED } from '../metrics/ranking.js';
import { QrelsLines, scanTrecQrelsFast } from './qrels-lines.js';

/**
 * A qrels file read one query block at a time, in chunks of the file, so that only one query's judgments
 * are in memory: the qrels side of the merge join that `harness eval` without -q uses when the qrels and
 * the run both list their queries in trec_eval's order (ADR 0023). Only the common file is read this way
 * (every line one scanTrecQrelsFast takes); for anything else `refused` is set and the caller indexes the
 * whole file with QrelsIndex, whose reader also names the errors.
 */
export class QrelsBlocks {
  /** The current block's query id, and its rank among the file's queries (0 for the first). */
  qid = '';
  qi = -1;
  /** Number of judged documents with each grade >= 0 (as QrelsIndex.relLevels). */
  levels = new Int32Array(0);
  /** The highest grade of the block, -1 when every grade is negative. */
  highest = -1;
  /** A document is judged twice in the current block (the full reader reports it). */
  duplicate = false;
  /** A line the one-pass scanner does not take, or a file that is not plain text: stop and fall back. */
  refused = false;

  private readonly fd: number;
  private pos = 0;
  private eof = false;
  private buf: Buffer;
  /** Bytes [tail, filled) of buf follow the last complete line scanned. */
  private tail = 0;
  private filled = 0;
  // The lines of the scanned chunk: field offsets into buf; consumed from `li`.
  private li = 0;
  private readonly lines = new QrelsLines(4096);
  // The block: its query id's bytes, its document ids copied into `arena`, an open-addressing table.
  private qidBytes = Buffer.alloc(256);
  private qidLen = 0;
  private n = 0;
  private arena = Buffer.alloc(1 << 16);
  private used = 0;
  private dStart = new Int32Array(256);
  private dEnd = new Int32Array(256);
  private grade = new Int32Array(256);
  private hash = new Int32Array(256);
  private table = new Int32Array(512);
  private tableGen = new Int32Array(512);
  private gen = 0;
  private counts = new Int32Array(16);

  /**
   * With `judgments` false only the query ids and grades are read (no document id is copied or hashed, so
   * `duplicate` stays false and lookup finds nothing): the cheap first pass of streamableQrels.
   */
  constructor(
    path: string,
    chunkBytes = 1 << 20,
    private readonly judgments = true,
  ) {
    this.fd = openSync(path, 'r');
    this.buf = Buffer.allocUnsafe(chunkBytes);
    const head = Buffer.alloc(3);
    const got = readSync(this.fd, head, 0, 3, 0);
    // gzip (1f 8b) and a UTF-8 byte order mark are left to readTrecFile, which also notes the mark.
    if ((got >= 2 && head[0] === 0x1f && head[1] === 0x8b) || (got === 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf)) this.refused = true;
  }

  close(): void {
    closeSync(this.fd);
  }

  /** Moves to the next query block; false at the end of the file or when `refused` was set. */
  next(): boolean {
    if (this.refused || (this.li === this.lines.n && !this.fill())) return false;
    const buf0 = this.buf;
    const qs = this.lines.qs[this.li]!;
    const qe = this.lines.qe[this.li]!;
    if (qe - qs > this.qidBytes.length) this.qidBytes = Buffer.alloc(2 * (qe - qs));
    buf0.copy(this.qidBytes, 0, qs, qe);
    this.qidLen = qe - qs;
    this.qid = buf0.toString('utf8', qs, qe);
    this.qi++;
    this.n = 0;
    this.used = 0;
    this.duplicate = false;
    this.highest = -1;
    this.counts.fill(0);
    if (++this.gen === 0x7fffffff) {
      this.tableGen.fill(0);
      this.gen = 1;
    }
    this.readBlock();
    // QrelsIndex's per-query array: one count per grade up to the highest.
    this.levels = this.counts.slice(0, this.highest + 1);
    return !this.refused;
  }

  /** Adds the lines of the current query, reading on into the next chunks while they continue it. */
  private readBlock(): void {
    for (;;) {
      const buf = this.buf;
      const qb = this.qidBytes;
      const len = this.qidLen;
      const { n, qs, qe, ds, de, grade, hash, same } = this.lines;
      // A line whose query id is the line before's (same) continues the block once the chunk's first did.
      for (let first = true; this.li < n; first = false) {
        if (first || same[this.li] === 0) {
          const s = qs[this.li]!;
          if (qe[this.li]! - s !== len) return;
          for (let k = 0; k < len; k++) if (buf[s + k] !== qb[k]) return;
        }
        this.add(buf, ds[this.li]!, de[this.li]!, grade[this.li]!, hash[this.li]!);
        this.li++;
      }
      if (!this.fill()) return;
    }
  }

  /** The hashes (fnv1a, as int32s) of the current block's judged documents: none when lookup() finds none. */
  judgedHashes(): Int32Array {
    return this.hash.subarray(0, this.judgments ? this.n : 0);
  }

  /** The ranking value of a document of the current block: its grade, REL_UNJUDGED if negative, REL_NONPOOL if absent. */
  lookup(buf: Uint8Array, s: number, e: number, hash: number): number {
    const mask = this.table.length - 1;
    const len = e - s;
    const arena = this.arena;
    for (let slot = hash & mask; this.tableGen[slot] === this.gen; slot = (slot + 1) & mask) {
      const d = this.table[slot]!;
      const ds = this.dStart[d]!;
      if (this.hash[d] !== hash || this.dEnd[d]! - ds !== len) continue;
      let k = 0;
      while (k < len && arena[ds + k] === buf[s + k]) k++;
      if (k === len) {
        const g = this.grade[d]!;
        return g < 0 ? REL_UNJUDGED : g;
      }
    }
    return REL_NONPOOL;
  }

  private add(buf: Buffer, ds: number, de: number, g: number, h: number): void {
    if (!this.judgments) {
      if (g > this.highest) this.highest = g;
      return;
    }
    const i = this.n;
    if (i === this.dStart.length) this.growBlock();
    if (2 * (i + 1) > this.table.length) this.growTable();
    const len = de - ds;
    if (this.used + len > this.arena.length) {
      const bigger = Buffer.alloc(Math.max(2 * this.arena.length, this.used + len));
      this.arena.copy(bigger, 0, 0, this.used);
      this.arena = bigger;
    }
    buf.copy(this.arena, this.used, ds, de);
    if (this.lookup(buf, ds, de, h) !== REL_NONPOOL) this.duplicate = true;
    this.dStart[i] = this.used;
    this.used += len;
    this.dEnd[i] = this.used;
    this.grade[i] = g;
    this.hash[i] = h;
    this.insert(i);
    this.n = i + 1;
    if (g >= 0) {
      if (g >= this.counts.length) {
        const c = new Int32Array(Math.max(g + 1, 2 * this.counts.length));
        c.set(this.counts);
        this.counts = c;
      }
      this.counts[g]! += 1;
      if (g > this.highest) this.highest = g;
    }
  }

  private insert(i: number): void {
    const mask = this.table.length - 1;
    let slot = this.hash[i]! & mask;
    while (this.tableGen[slot] === this.gen) slot = (slot + 1) & mask;
    this.table[slot] = i;
    this.tableGen[slot] = this.gen;
  }

  private growTable(): void {
    this.table = new Int32Array(2 * this.table.length);
    this.tableGen = new Int32Array(this.table.length);
    this.gen = 1;
    for (let i = 0; i < this.n; i++) this.insert(i);
  }

  private growBlock(): void {
    const m = 2 * this.dStart.length;
    for (const k of ['dStart', 'dEnd', 'grade', 'hash'] as const) {
      const a = new Int32Array(m);
      a.set(this[k]);
      this[k] = a;
    }
  }

  /** Scans the next chunk's complete lines into the line arrays; false at the end of the file (or refused). */
  private fill(): boolean {
    this.li = 0;
    this.lines.n = 0;
    while (!this.eof) {
      // The lines before `tail` were all consumed (their document ids copied into the arena): keep the rest.
      const carry = this.filled - this.tail;
      if (carry === this.buf.length) {
        const bigger = Buffer.allocUnsafe(2 * this.buf.length);
        this.buf.copy(bigger, 0, this.tail, this.filled);
        this.buf = bigger;
      } else this.buf.copy(this.buf, 0, this.tail, this.filled);
      const got = readSync(this.fd, this.buf, carry, this.buf.length - carry, this.pos);
      this.pos += got;
      this.filled = carry + got;
      let last: number;
      if (got === 0) {
        this.eof = true;
        last = this.filled - 1;
      } else last = this.buf.lastIndexOf(10, this.filled - 1);
      this.tail = last + 1;
      if (last < 0) continue;
      if (!scanTrecQrelsFast(this.buf.subarray(0, last + 1), this.lines)) {
        this.refused = true;
        return false;
      }
      if (this.lines.n > 0) return true;
    }
    return false;
  }
}

/** What a first pass over a qrels file found: it can be merged with a run (see QrelsBlocks). */
export interface StreamableQrels {
  readonly queries: number;
  /** The highest non-negative grade, -1 when every judgment is negative (as the index's highestGrade). */
  readonly highestGrade: number;
}

/**
 * Reads the qrels file once, keeping one query id at a time, and says whether QrelsBlocks can stream it in a
 * merge join: every line the common format, query ids grouped and in trec_eval's order (sorted as strings by
 * compareIds, each once). Otherwise returns the reason, and the file is indexed whole (whose reader reports
 * any error). A document judged twice is found by the join itself (QrelsBlocks.duplicate), which then gives
 * the file to the index too. The scan alone: about a third of the index's time, in constant memory.
 */
export function streamableQrels(path: string): StreamableQrels | string {
  let blocks: QrelsBlocks;
  try {
    // 64 KB reads, not 1 MB: a file out of order (q9 before q10) is refused within its first queries, and
    // each read is scanned whole before its lines are looked at (1 MB of qrels: about 20 ms of CPU).
    blocks = new QrelsBlocks(path, 1 << 16, false);
  } catch {
    return 'unreadable';
  }
  try {
    let prev: string | undefined;
    let highest = -1;
    while (blocks.next()) {
      if (prev !== undefined && compareIds(prev, blocks.qid) >= 0) return `query "${blocks.qid}" comes after "${prev}"`;
      prev = blocks.qid;
      if (blocks.highest > highest) highest = blocks.highest;
    }
    if (blocks.refused) return 'not in the plain four-field format throughout';
    if (prev === undefined) return 'no judgments';
    return { queries: blocks.qi + 1, highestGrade: highest };
  } finally {
    blocks.close();
  }
}
