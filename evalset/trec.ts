import { closeSync, openSync, readSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../harness/cache/index.js';
import { InputError, UsageError } from '../harness/errors.js';
import { compareIds, rankDocIds } from '../harness/metrics/ranking.js';
import type { Qrels, Run } from './types.js';

/**
 * TREC qrels and run files, read and written as trec_eval does.
 *
 * Qrels: `queryId iter docId grade` (4 whitespace-separated fields; iter ignored). Grades are integers;
 * negative means "in the pool, not judged" (trec_eval), 0 judged non-relevant. Runs:
 * `queryId iter docId rank score runTag [ignored...]` (6 or more fields); the rank column is ignored and
 * the ranking is rebuilt from the scores (ranking.ts), and the run tag is the last content line's, both
 * as trec_eval. In both, a line whose first non-blank character is `#` is a comment and blank lines are
 * skipped. Anything else that is malformed — too few fields, a grade that is not an integer, a score that
 * is not a decimal number, a (query, doc) pair seen twice — is an InputError naming the file and the
 * 1-based line; nothing is skipped silently.
 */

// ASCII whitespace as C isspace() sees it: space, \t, \n, \v, \f, \r.
function isSpace(b: number): boolean {
  return b === 32 || (b >= 9 && b <= 13);
}

/** Receives the fields of each content line of a run file, as byte offsets into `buf`. */
export interface RunLineSink {
  line(buf: Buffer, lineNo: number, qs: number, qe: number, ds: number, de: number, score: number, ts: number, te: number): void;
}

/**
 * Scans the complete lines of buf[start, end) (end just past a '\n', or the end of the file) and hands each
 * content line to `sink`. Returns the number of lines scanned. Allocation-free for well-formed input, so a
 * multi-gigabyte run streams through it.
 */
export function scanTrecRun(buf: Buffer, start: number, end: number, firstLine: number, file: string, sink: RunLineSink): number {
  const fs = FIELDS;
  let p = start;
  let lineNo = firstLine - 1;
  // Byte tests are written out rather than table lookups: bytes > 32 (the bulk of every id) exit on the
  // first comparison. Blank = C isspace minus '\n' (9, 11, 12, 13, 32); a field ends at any isspace byte.
  while (p < end) {
    lineNo++;
    let i = p;
    let c = 0;
    while (i < end && ((c = buf[i]!) === 32 || c === 9 || (c >= 11 && c <= 13))) i++;
    if (i === end || c === 10) {
      p = i + 1;
      continue;
    }
    if (c === 35 /* # */) {
      while (i < end && buf[i] !== 10) i++;
      p = i + 1;
      continue;
    }
    let n = 0;
    for (;;) {
      fs[2 * n] = i;
      while (i < end && ((c = buf[i]!) > 32 || (c !== 32 && (c < 9 || c > 13)))) i++;
      fs[2 * n + 1] = i;
      n++;
      while (i < end && ((c = buf[i]!) === 32 || c === 9 || (c >= 11 && c <= 13))) i++;
      if (n === 6 || i === end || c === 10) break;
    }
    while (i < end && buf[i] !== 10) i++;
    p = i + 1;
    if (n < 6) {
      throw new InputError(file, lineNo, `a run line needs 6 fields (queryId Q0 docId rank score runTag), found ${n}`, {
        hint: 'TREC run format: "301 Q0 FBIS3-10082 1 12.5 myrun"',
      });
    }
    const score = parseScore(buf, fs[8]!, fs[9]!);
    if (Number.isNaN(score)) {
      throw new InputError(file, lineNo, `score "${buf.toString('utf8', fs[8]!, fs[9]!)}" is not a decimal number`);
    }
    sink.line(buf, lineNo, fs[0]!, fs[1]!, fs[4]!, fs[5]!, score, fs[10]!, fs[11]!);
  }
  return lineNo - firstLine + 1;
}

const FIELDS = new Int32Array(12);

const POW10 = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

/**
 * Parses a decimal score (`[+-]digits[.digits][e[+-]digits]`) to the nearest double, as C strtod does;
 * NaN for anything else. Fast path (Clinger): an integer mantissa below 2^53 and a power of ten up to 1e22
 * are both exact, so one multiplication or division rounds correctly. Other inputs go through Number(),
 * which is also correctly rounded.
 */
export function parseScore(buf: Buffer, s: number, e: number): number {
  let i = s;
  let neg = false;
  if (buf[i] === 43 || buf[i] === 45) {
    neg = buf[i] === 45;
    i++;
  }
  let mant = 0;
  let digits = 0;
  let frac = 0;
  while (i < e && buf[i]! >= 48 && buf[i]! <= 57) {
    mant = mant * 10 + (buf[i]! - 48);
    digits++;
    i++;
  }
  if (i < e && buf[i] === 46) {
    i++;
    while (i < e && buf[i]! >= 48 && buf[i]! <= 57) {
      mant = mant * 10 + (buf[i]! - 48);
      digits++;
      frac++;
      i++;
    }
  }
  if (digits === 0) return NaN;
  let exp = 0;
  if (i < e && (buf[i] === 101 || buf[i] === 69)) {
    i++;
    let eneg = false;
    if (buf[i] === 43 || buf[i] === 45) {
      eneg = buf[i] === 45;
      i++;
    }
    let ed = 0;
    while (i < e && buf[i]! >= 48 && buf[i]! <= 57) {
      exp = exp * 10 + (buf[i]! - 48);
      ed++;
      i++;
    }
    if (ed === 0) return NaN;
    if (eneg) exp = -exp;
  }
  if (i !== e) return NaN;
  const e10 = exp - frac;
  let v: number;
  if (mant < 9007199254740992 && digits <= 16 && e10 >= -22 && e10 <= 22) {
    v = e10 < 0 ? mant / POW10[-e10]! : mant * POW10[e10]!;
  } else {
    v = Number(buf.toString('latin1', neg ? s + 1 : buf[s] === 43 ? s + 1 : s, e));
  }
  return neg ? -v : v;
}

/** A parsed run: queryId -> docId -> score, and the run tag of its last content line (trec_eval's runid). */
export interface TrecRun {
  readonly run: Run;
  readonly runTag: string;
}

class MapSink implements RunLineSink {
  readonly run = new Map<string, Map<string, number>>();
  readonly firstLine = new Map<string, Map<string, number>>();
  runTag = '';
  constructor(private readonly file: string) {}
  line(buf: Buffer, lineNo: number, qs: number, qe: number, ds: number, de: number, score: number, ts: number, te: number): void {
    const qid = buf.toString('utf8', qs, qe);
    const doc = buf.toString('utf8', ds, de);
    let docs = this.run.get(qid);
    let lines = this.firstLine.get(qid);
    if (!docs || !lines) {
      docs = new Map();
      lines = new Map();
      this.run.set(qid, docs);
      this.firstLine.set(qid, lines);
    }
    const seen = lines.get(doc);
    if (seen !== undefined) {
      throw new InputError(this.file, lineNo, `document "${doc}" appears twice for query "${qid}" (first at line ${seen})`, {
        hint: 'a run ranks each document at most once per query; deduplicate before evaluating',
      });
    }
    docs.set(doc, score);
    lines.set(doc, lineNo);
    this.runTag = buf.toString('utf8', ts, te);
  }
}

/** Parses TREC run text. `fileName` names the source in errors. */
export function parseTrecRun(text: string, fileName: string): TrecRun {
  const buf = Buffer.from(text, 'utf8');
  const sink = new MapSink(fileName);
  scanTrecRun(buf, 0, buf.length, 1, fileName, sink);
  return { run: sink.run, runTag: sink.runTag };
}

/** Reads a TREC run file. */
export async function readTrecRun(path: string): Promise<TrecRun> {
  const buf = await readTrecFile(path);
  const sink = new MapSink(path);
  scanTrecRun(buf, 0, buf.length, 1, path, sink);
  return { run: sink.run, runTag: sink.runTag };
}

/**
 * Streams a run file through `sink` in chunks of `chunkBytes`, never holding the whole file. Lines are
 * handed over complete; a chunk boundary inside a line carries the partial line into the next read.
 * `onChunkEnd` runs after each chunk's lines, before the buffer is reused (offsets into it expire then).
 * `range` restricts the read to bytes [start, end) of the file (line numbers then count from its start).
 */
export async function streamTrecRun(
  path: string,
  sink: RunLineSink,
  chunkBytes = 8 << 20,
  onChunkEnd?: () => void,
  range: { readonly start: number; readonly end: number } = { start: 0, end: Infinity },
): Promise<void> {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new InputError(path, undefined, err.code === 'ENOENT' ? 'file not found' : `cannot read: ${err.message}`);
  }
  try {
    let buf = Buffer.allocUnsafe(chunkBytes);
    let carry = 0;
    let lineNo = 1;
    let pos = range.start;
    for (;;) {
      if (carry === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, carry);
        buf = bigger;
      }
      // Synchronous reads: the data is usually in the page cache, and a thread-pool round trip per chunk
      // only adds idle time to a CPU-bound scan.
      const want = Math.min(buf.length - carry, range.end - pos);
      const bytesRead = want > 0 ? readSync(fd, buf, carry, want, pos) : 0;
      pos += bytesRead;
      const filled = carry + bytesRead;
      if (bytesRead === 0) {
        if (filled > 0) scanTrecRun(buf, 0, filled, lineNo, path, sink);
        onChunkEnd?.();
        return;
      }
      let last = filled - 1;
      while (last >= 0 && buf[last] !== 10) last--;
      if (last < 0) {
        carry = filled;
        continue;
      }
      lineNo += scanTrecRun(buf, 0, last + 1, lineNo, path, sink);
      onChunkEnd?.();
      carry = filled - (last + 1);
      buf.copy(buf, 0, last + 1, filled);
    }
  } finally {
    closeSync(fd);
  }
}

/** A whole TREC file's bytes; a missing or unreadable file is an InputError. */
export async function readTrecFile(path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    throw new InputError(path, undefined, err.code === 'ENOENT' ? 'file not found' : `cannot read: ${err.message}`);
  }
}

/** Receives the fields of each content line of a qrels file, as byte offsets into `buf`. */
export interface QrelsLineSink {
  line(buf: Buffer, lineNo: number, qs: number, qe: number, ds: number, de: number, grade: number): void;
}

/** Scans a whole qrels buffer, handing each content line to `sink`. Allocation-free for well-formed input. */
export function scanTrecQrels(buf: Buffer, file: string, sink: QrelsLineSink): void {
  const end = buf.length;
  const fs = new Int32Array(8);
  let p = 0;
  let lineNo = 0;
  while (p < end) {
    lineNo++;
    let eol = p;
    while (eol < end && buf[eol] !== 10) eol++;
    let i = p;
    while (i < eol && isSpace(buf[i]!)) i++;
    if (i === eol || buf[i] === 35 /* # */) {
      p = eol + 1;
      continue;
    }
    let n = 0;
    while (i < eol) {
      if (n < 4) fs[2 * n] = i;
      while (i < eol && !isSpace(buf[i]!)) i++;
      if (n < 4) fs[2 * n + 1] = i;
      n++;
      while (i < eol && isSpace(buf[i]!)) i++;
    }
    if (n !== 4) {
      throw new InputError(file, lineNo, `a qrels line needs 4 fields (queryId iter docId grade), found ${n}`, {
        hint: 'TREC qrels format: "301 0 FBIS3-10082 1"',
      });
    }
    const grade = parseGrade(buf, fs[6]!, fs[7]!);
    if (grade === undefined) {
      throw new InputError(file, lineNo, `grade "${buf.toString('utf8', fs[6]!, fs[7]!)}" is not an integer`, {
        hint: 'grades are integers: negative = in the pool but unjudged, 0 = not relevant, 1+ = relevant',
      });
    }
    sink.line(buf, lineNo, fs[0]!, fs[1]!, fs[4]!, fs[5]!, grade);
    p = eol + 1;
  }
}

function parseGrade(buf: Buffer, s: number, e: number): number | undefined {
  let i = s;
  const neg = buf[i] === 45;
  if (neg || buf[i] === 43) i++;
  if (i === e || e - i > 9) return undefined;
  let v = 0;
  for (; i < e; i++) {
    const b = buf[i]!;
    if (b < 48 || b > 57) return undefined;
    v = v * 10 + (b - 48);
  }
  return neg ? -v : v;
}

/** The InputError for a (query, doc) pair judged twice, naming both lines. */
function duplicateJudgment(buf: Buffer, file: string, lineNo: number, qid: string, doc: string): InputError {
  let first = 0;
  try {
    scanTrecQrels(buf, file, {
      line(b, ln, qs, qe, ds, de) {
        if (first === 0 && b.toString('utf8', qs, qe) === qid && b.toString('utf8', ds, de) === doc) {
          first = ln;
          throw new Error('found');
        }
      },
    });
  } catch {
    // stops the scan at the first occurrence
  }
  return new InputError(file, lineNo, `document "${doc}" is judged twice for query "${qid}" (first at line ${first})`, {
    hint: 'keep one judgment per (query, document); trec_eval rejects duplicates too',
  });
}

function qrelsFromBuffer(buf: Buffer, fileName: string): Qrels {
  const qrels = new Map<string, Map<string, number>>();
  scanTrecQrels(buf, fileName, {
    line(b, lineNo, qs, qe, ds, de, grade) {
      const qid = b.toString('utf8', qs, qe);
      const doc = b.toString('utf8', ds, de);
      let docs = qrels.get(qid);
      if (!docs) {
        docs = new Map();
        qrels.set(qid, docs);
      }
      if (docs.has(doc)) throw duplicateJudgment(b, fileName, lineNo, qid, doc);
      docs.set(doc, grade);
    },
  });
  return qrels;
}

/** Parses TREC qrels text. `fileName` names the source in errors. */
export function parseTrecQrels(text: string, fileName: string): Qrels {
  return qrelsFromBuffer(Buffer.from(text, 'utf8'), fileName);
}

/** Reads a TREC qrels file. */
export async function readTrecQrels(path: string): Promise<Qrels> {
  return qrelsFromBuffer(await readTrecFile(path), path);
}

function checkToken(what: string, s: string): void {
  if (s === '' || /\s/.test(s)) throw new UsageError(`${what} ${JSON.stringify(s)} cannot be written to a TREC file: it is empty or contains whitespace`);
}

/**
 * TREC run text: queries in id order, each ranked in trec_eval order with rank = 1-based position, scores
 * in the shortest text that reads back as the same double.
 */
export function formatTrecRun(run: Run, tag: string): string {
  checkToken('run tag', tag);
  const lines: string[] = [];
  for (const qid of [...run.keys()].sort(compareIds)) {
    checkToken('query id', qid);
    const docs = run.get(qid)!;
    rankDocIds(docs).forEach((doc, i) => {
      checkToken('document id', doc);
      lines.push(`${qid} Q0 ${doc} ${i + 1} ${String(docs.get(doc)!)} ${tag}`);
    });
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}

/** Writes a TREC run file atomically. */
export async function writeTrecRun(path: string, run: Run, tag: string): Promise<void> {
  await writeFileAtomic(path, formatTrecRun(run, tag));
}

/** TREC qrels text: queries and documents in id order, iter column 0. */
export function formatTrecQrels(qrels: Qrels): string {
  const lines: string[] = [];
  for (const qid of [...qrels.keys()].sort(compareIds)) {
    checkToken('query id', qid);
    const docs = qrels.get(qid)!;
    for (const doc of [...docs.keys()].sort(compareIds)) {
      checkToken('document id', doc);
      const g = docs.get(doc)!;
      if (!Number.isInteger(g)) throw new UsageError(`grade ${g} of (${qid}, ${doc}) is not an integer`);
      lines.push(`${qid} 0 ${doc} ${g}`);
    }
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}

/** Writes a TREC qrels file atomically. */
export async function writeTrecQrels(path: string, qrels: Qrels): Promise<void> {
  await writeFileAtomic(path, formatTrecQrels(qrels));
}
