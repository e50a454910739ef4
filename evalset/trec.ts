import { closeSync, createReadStream, fstatSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { createGunzip, gunzipSync } from 'node:zlib';
import { HarnessError, InputError, UsageError } from '../harness/errors.js';
import { compareIds, rankDocIds } from './rank-order.js';
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
 *
 * Also read, wherever these files are read (`harness eval`, `harness compare`): gzip-compressed files
 * (recognised by their magic bytes, whatever the name), a UTF-8 byte-order mark at the start of a file
 * (dropped with a note: left in, it would become part of the first query id), and BEIR's qrels TSV
 * (`qrels/<split>.tsv`: the header line `query-id<TAB>corpus-id<TAB>score`, then 3 tab-separated fields).
 */

/** Receives a note about how a file was read (a byte-order mark dropped), for the user to see. */
export type NoteSink = (note: string) => void;

const BOM = [0xef, 0xbb, 0xbf] as const;

function hasBom(buf: Uint8Array): boolean {
  return buf[0] === BOM[0] && buf[1] === BOM[1] && buf[2] === BOM[2];
}

function isGzip(buf: Uint8Array): boolean {
  return buf[0] === 0x1f && buf[1] === 0x8b;
}

/** The note given when a byte-order mark is dropped. */
export function bomNote(file: string): string {
  return `${file}: a UTF-8 byte-order mark at the start of the file was ignored`;
}

// ASCII whitespace as C isspace() sees it: space, \t, \n, \v, \f, \r.
function isSpace(b: number): boolean {
  return b === 32 || (b >= 9 && b <= 13);
}

/** Receives the fields of each content line of a run file, as byte offsets into `buf`. */
export interface RunLineSink {
  line(buf: Buffer, lineNo: number, qs: number, qe: number, ds: number, de: number, score: number, ts: number, te: number): void;
  /**
   * Optional: scans buf[start, end) itself, as scanTrecRun(buf, start, end, firstLine, file, this) would
   * (same lines, same errors), returning the number of lines. streamTrecRun then hands it whole chunks.
   */
  scan?(buf: Buffer, start: number, end: number, firstLine: number, file: string): number;
}

function scanWith(sink: RunLineSink, buf: Buffer, start: number, end: number, firstLine: number, file: string): number {
  return sink.scan ? sink.scan(buf, start, end, firstLine, file) : scanTrecRun(buf, start, end, firstLine, file, sink);
}

/**
 * Scans the complete lines of buf[start, end) (end just past a '\n', or the end of the file) and hands each
 * content line to `sink`. Returns the number of lines scanned. Allocation-free for well-formed input, so a
 * multi-gigabyte run streams through it.
 */
export function scanTrecRun(buf: Buffer, start: number, end: number, firstLine: number, file: string, sink: RunLineSink): number {
  let p = start;
  let lineNo = firstLine - 1;
  // The six fields are read one after the other into locals (no field array, no per-field loop test):
  // ~8% fewer instructions per line than a loop over the fields (cachegrind, 1 M lines).
  while (p < end) {
    lineNo++;
    let i = blankEnd(buf, p, end);
    if (i === end || buf[i] === 10) {
      p = i + 1;
      continue;
    }
    if (buf[i] === 35 /* # */) {
      while (i < end && buf[i] !== 10) i++;
      p = i + 1;
      continue;
    }
    const qs = i;
    const qe = fieldEnd(buf, i, end);
    i = blankEnd(buf, qe, end);
    if (i === end || buf[i] === 10) throw tooFewFields(file, lineNo, 1);
    i = blankEnd(buf, fieldEnd(buf, i, end), end);
    if (i === end || buf[i] === 10) throw tooFewFields(file, lineNo, 2);
    const ds = i;
    const de = fieldEnd(buf, i, end);
    i = blankEnd(buf, de, end);
    if (i === end || buf[i] === 10) throw tooFewFields(file, lineNo, 3);
    i = blankEnd(buf, fieldEnd(buf, i, end), end);
    if (i === end || buf[i] === 10) throw tooFewFields(file, lineNo, 4);
    const ss = i;
    const se = fieldEnd(buf, i, end);
    i = blankEnd(buf, se, end);
    if (i === end || buf[i] === 10) throw tooFewFields(file, lineNo, 5);
    const ts = i;
    const te = fieldEnd(buf, i, end);
    i = te;
    while (i < end && buf[i] !== 10) i++;
    p = i + 1;
    const score = parseScore(buf, ss, se);
    if (Number.isNaN(score)) {
      throw new InputError(file, lineNo, `score "${buf.toString('utf8', ss, se)}" is not a decimal number`);
    }
    sink.line(buf, lineNo, qs, qe, ds, de, score, ts, te);
  }
  return lineNo - firstLine + 1;
}

// Byte tests are written out rather than table lookups: bytes > 32 (the bulk of every id) exit on the
// first comparison. Blank = C isspace minus '\n' (9, 11, 12, 13, 32); a field ends at any isspace byte.

/** The end of the field starting at i: the first isspace byte (or `end`). */
function fieldEnd(buf: Buffer, i: number, end: number): number {
  let c = 0;
  while (i < end && ((c = buf[i]!) > 32 || (c !== 32 && (c < 9 || c > 13)))) i++;
  return i;
}

/** The first byte from i on that is not blank (a newline is not blank). */
function blankEnd(buf: Buffer, i: number, end: number): number {
  let c = 0;
  while (i < end && ((c = buf[i]!) === 32 || c === 9 || (c >= 11 && c <= 13))) i++;
  return i;
}

function tooFewFields(file: string, lineNo: number, found: number): InputError {
  return new InputError(file, lineNo, `a run line needs 6 fields (queryId Q0 docId rank score runTag), found ${found}`, {
    hint: 'TREC run format: "301 Q0 FBIS3-10082 1 12.5 myrun"',
  });
}

const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

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
  const buf = withoutBom(Buffer.from(text, 'utf8'));
  const sink = new MapSink(fileName);
  scanTrecRun(buf, 0, buf.length, 1, fileName, sink);
  return { run: sink.run, runTag: sink.runTag };
}

/** Reads a TREC run file (gzip and a byte-order mark allowed; see the top of this file). */
export async function readTrecRun(path: string, onNote?: NoteSink): Promise<TrecRun> {
  const buf = await readTrecFile(path, onNote);
  const sink = new MapSink(path);
  scanTrecRun(buf, 0, buf.length, 1, path, sink);
  return { run: sink.run, runTag: sink.runTag };
}

/**
 * Streams a run file through `sink` in chunks of `chunkBytes`, never holding the whole file. Lines are
 * handed over complete; a chunk boundary inside a line carries the partial line into the next read.
 * `onChunkEnd` runs after each chunk's lines, before the buffer is reused (offsets into it expire then).
 * `range` restricts the read to bytes [start, end) of the file (line numbers then count from its start).
 * A gzip file is decompressed as it streams; it cannot be read from an offset, so only a range that starts
 * at 0 is accepted for one (and its end is the end of the decompressed text).
 */
export async function streamTrecRun(
  path: string,
  sink: RunLineSink,
  chunkBytes = 8 << 20,
  onChunkEnd?: () => void,
  range: { readonly start: number; readonly end: number } = { start: 0, end: Infinity },
  onNote?: NoteSink,
): Promise<void> {
  const fd = openTrecFile(path);
  let head: Buffer;
  try {
    head = Buffer.alloc(3);
    readSync(fd, head, 0, 3, 0);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  if (isGzip(head)) {
    closeSync(fd);
    if (range.start !== 0) throw new HarnessError(`${path}: a gzip file cannot be read from byte ${range.start}; decompress it to split it`);
    await streamGzipRun(path, sink, onChunkEnd, onNote);
    return;
  }
  try {
    let buf = Buffer.allocUnsafe(chunkBytes);
    let carry = 0;
    let lineNo = 1;
    let pos = range.start;
    if (pos === 0 && hasBom(head)) {
      pos = 3;
      onNote?.(bomNote(path));
    }
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
        if (filled > 0) scanWith(sink, buf, 0, filled, lineNo, path);
        onChunkEnd?.();
        return;
      }
      let last = filled - 1;
      while (last >= 0 && buf[last] !== 10) last--;
      if (last < 0) {
        carry = filled;
        continue;
      }
      lineNo += scanWith(sink, buf, 0, last + 1, lineNo, path);
      onChunkEnd?.();
      carry = filled - (last + 1);
      buf.copy(buf, 0, last + 1, filled);
    }
  } finally {
    closeSync(fd);
  }
}

/** streamTrecRun() for a gzip file: the same line hand-over, over the decompressed stream. */
async function streamGzipRun(path: string, sink: RunLineSink, onChunkEnd: (() => void) | undefined, onNote: NoteSink | undefined): Promise<void> {
  let carry = Buffer.alloc(0);
  let lineNo = 1;
  let first = true;
  try {
    for await (const chunk of createReadStream(path).pipe(createGunzip()) as AsyncIterable<Buffer>) {
      let buf = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
      if (first && buf.length >= 3) {
        first = false;
        if (hasBom(buf)) {
          buf = buf.subarray(3);
          onNote?.(bomNote(path));
        }
      }
      const last = buf.lastIndexOf(10);
      if (last < 0) {
        carry = Buffer.from(buf);
        continue;
      }
      // Past the first line, three bytes that look like a byte-order mark are content.
      first = false;
      lineNo += scanWith(sink, buf, 0, last + 1, lineNo, path);
      onChunkEnd?.();
      carry = Buffer.from(buf.subarray(last + 1));
    }
  } catch (e) {
    if (e instanceof HarnessError) throw e;
    throw new InputError(path, undefined, `cannot decompress: ${(e as Error).message}`, { hint: 'the file starts like gzip but is not a valid gzip stream' });
  }
  // A file shorter than a byte-order mark has none to drop.
  if (carry.length > 0) scanWith(sink, carry, 0, carry.length, lineNo, path);
  onChunkEnd?.();
}

/** Opens a TREC file for reading; a missing file or a directory is an InputError (exit 2). */
function openTrecFile(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    throw unreadable(path, e);
  }
  if (fstatSync(fd).isDirectory()) {
    closeSync(fd);
    throw new InputError(path, undefined, 'is a directory, not a TREC file', { hint: 'name the run or qrels file itself' });
  }
  return fd;
}

function unreadable(path: string, e: unknown): InputError {
  const err = e as NodeJS.ErrnoException;
  if (err.code === 'EISDIR') return new InputError(path, undefined, 'is a directory, not a TREC file', { hint: 'name the run or qrels file itself' });
  return new InputError(path, undefined, err.code === 'ENOENT' ? 'file not found' : `cannot read: ${err.message}`);
}

function withoutBom(buf: Buffer, file?: string, onNote?: NoteSink): Buffer {
  if (!hasBom(buf)) return buf;
  if (file !== undefined) onNote?.(bomNote(file));
  return buf.subarray(3);
}

/**
 * What the first bytes of a TREC file say about how it must be read: gzip-compressed, and whether its text
 * starts with a byte-order mark. For callers that stream the file themselves and want to tell the user.
 */
export async function peekTrecFile(path: string): Promise<{ readonly gzip: boolean; readonly bom: boolean }> {
  const fd = openTrecFile(path);
  const head = Buffer.alloc(3);
  try {
    readSync(fd, head, 0, 3, 0);
  } finally {
    closeSync(fd);
  }
  if (!isGzip(head)) return { gzip: false, bom: hasBom(head) };
  let text = Buffer.alloc(0);
  const stream = createReadStream(path).pipe(createGunzip());
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      text = Buffer.concat([text, chunk]);
      if (text.length >= 3) break;
    }
  } catch (e) {
    throw new InputError(path, undefined, `cannot decompress: ${(e as Error).message}`, { hint: 'the file starts like gzip but is not a valid gzip stream' });
  } finally {
    stream.destroy();
  }
  return { gzip: true, bom: hasBom(text) };
}

/**
 * A whole TREC file's text bytes: decompressed when it is gzip, without a leading byte-order mark (reported
 * through `onNote`). A missing file, a directory or a broken gzip stream is an InputError. `shared`: in a
 * SharedArrayBuffer, for an index that worker threads will read in place.
 */
export async function readTrecFile(path: string, onNote?: NoteSink, opts: { readonly shared?: boolean } = {}): Promise<Buffer> {
  let raw: Buffer;
  try {
    // Synchronous: the file is needed before anything else can run, and readFile's 512 KB thread-pool round
    // trips left the main thread idle (43 ms of a 0.3 s evaluation of 4.5 MB of qrels, node --cpu-prof).
    if (statSync(path).isDirectory()) throw Object.assign(new Error('directory'), { code: 'EISDIR' });
    raw = opts.shared ? readIntoShared(path) : readFileSync(path);
  } catch (e) {
    throw unreadable(path, e);
  }
  if (isGzip(raw)) {
    try {
      raw = gunzipSync(raw);
    } catch (e) {
      throw new InputError(path, undefined, `cannot decompress: ${(e as Error).message}`, { hint: 'the file starts like gzip but is not a valid gzip stream' });
    }
    if (opts.shared) raw = sharedCopy(raw);
  }
  return withoutBom(raw, path, onNote);
}

/** A file's bytes in a SharedArrayBuffer, read straight into it (worker threads then read them in place). */
function readIntoShared(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const out = Buffer.from(new SharedArrayBuffer(size));
    let at = 0;
    while (at < size) {
      const got = readSync(fd, out, at, size - at, at);
      if (got === 0) break;
      at += got;
    }
    return at === size ? out : out.subarray(0, at);
  } finally {
    closeSync(fd);
  }
}

function sharedCopy(buf: Buffer): Buffer {
  const out = Buffer.from(new SharedArrayBuffer(buf.length));
  buf.copy(out);
  return out;
}

/** Receives the fields of each content line of a qrels file, as byte offsets into `buf`. */
export interface QrelsLineSink {
  line(buf: Buffer, lineNo: number, qs: number, qe: number, ds: number, de: number, grade: number): void;
}

/** BEIR's qrels TSV header, `query-id<TAB>corpus-id<TAB>score`. */
const BEIR_HEADER = ['query-id', 'corpus-id', 'score'] as const;

/**
 * Scans a whole qrels buffer, handing each content line to `sink`. Allocation-free for well-formed input.
 * TREC qrels have 4 whitespace-separated fields; a file whose first content line is BEIR's header
 * (`query-id corpus-id score`) is read as BEIR's TSV instead: 3 tab-separated fields per line.
 */
export function scanTrecQrels(buf: Buffer, file: string, sink: QrelsLineSink): void {
  const end = buf.length;
  const fs = new Int32Array(8);
  let p = 0;
  let lineNo = 0;
  let beir: boolean | undefined;
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
    // BEIR ids may hold spaces: there only a tab ends a field (and trailing blanks, a CR, are trimmed).
    const tabOnly = beir === true;
    while (i < eol) {
      const start = i;
      while (i < eol && (tabOnly ? buf[i] !== 9 : !isSpace(buf[i]!))) i++;
      let e = i;
      while (e > start && isSpace(buf[e - 1]!)) e--;
      if (n < 4) {
        fs[2 * n] = start;
        fs[2 * n + 1] = e;
      }
      n++;
      while (i < eol && isSpace(buf[i]!)) i++;
    }
    if (beir === undefined) {
      beir = n === 3 && BEIR_HEADER.every((h, k) => buf.toString('utf8', fs[2 * k]!, fs[2 * k + 1]!) === h);
      if (beir) {
        p = eol + 1;
        continue;
      }
    }
    const want = beir ? 3 : 4;
    if (n !== want) {
      throw new InputError(
        file,
        lineNo,
        beir
          ? `a BEIR qrels line needs 3 tab-separated fields (query-id corpus-id score), found ${n}`
          : `a qrels line needs 4 fields (queryId iter docId grade), found ${n}`,
        {
          hint: beir
            ? 'BEIR qrels: the header "query-id<TAB>corpus-id<TAB>score", then "q1<TAB>doc1<TAB>1" per line'
            : 'TREC qrels format: "301 0 FBIS3-10082 1" (BEIR\'s qrels/*.tsv is read when its first line is the header "query-id<TAB>corpus-id<TAB>score")',
        },
      );
    }
    const g = beir ? 2 : 3;
    const grade = parseGrade(buf, fs[2 * g]!, fs[2 * g + 1]!);
    if (grade === undefined) {
      throw new InputError(file, lineNo, `grade "${buf.toString('utf8', fs[2 * g]!, fs[2 * g + 1]!)}" is not an integer`, {
        hint: 'grades are integers: negative = in the pool but unjudged, 0 = not relevant, 1+ = relevant',
      });
    }
    const d = beir ? 1 : 2;
    sink.line(buf, lineNo, fs[0]!, fs[1]!, fs[2 * d]!, fs[2 * d + 1]!, grade);
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

/** Parses TREC (or BEIR TSV) qrels text. `fileName` names the source in errors. */
export function parseTrecQrels(text: string, fileName: string): Qrels {
  return qrelsFromBuffer(withoutBom(Buffer.from(text, 'utf8')), fileName);
}

/** Reads a TREC qrels file, or BEIR's qrels TSV; gzip and a byte-order mark allowed (see the top of this file). */
export async function readTrecQrels(path: string, onNote?: NoteSink): Promise<Qrels> {
  return qrelsFromBuffer(await readTrecFile(path, onNote), path);
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
  // Loaded here: the cache module (node:crypto) is start-up cost for every reader of TREC files.
  const { writeFileAtomic } = await import('../harness/cache/index.js');
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
  const { writeFileAtomic } = await import('../harness/cache/index.js');
  await writeFileAtomic(path, formatTrecQrels(qrels));
}
