import { parseScore, scanTrecRun, type RunLineSink } from '../../evalset/trec.js';
import { HarnessError } from '../errors.js';
import { REL_NONPOOL } from '../metrics/ranking.js';
import { instantiateKernels, type KernelSet, kernelSet, MAX_MEMORY_BYTES } from '../util/kernel-set.js';
import { H, QID_AT, QID_MAX, RUN_SCAN_KERNELS, type RunScanKernels } from './fast/run-scan-kernels.js';

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
 *
 * A score of digits[.digits] with at most 15 digits is read here: the mantissa is exact and so is one
 * division by 10^frac, parseScore's own fast path; anything else is parsed by parseScore. Each part (at most
 * 9 digits, so an int32) is read in integer arithmetic: a double's multiply-add per digit was a fifth of the
 * scan. mant = whole * 10^frac + part is then the same exact integer parseScore builds digit by digit.
 */
export function scanTrecRunFast(buf: Buffer, start: number, end: number, firstLine: number, file: string, sink: HashingRunLineSink): number {
  // Lines up to the last '\n' run fast; a last line without one (end of file) through scanTrecRun.
  const stop = end > start && buf[end - 1] === 10 ? end : Math.max(start, buf.lastIndexOf(10, end - 1) + 1);
  let p = start;
  let lineNo = firstLine;
  let c = 0;
  // A line the loop does not take sets `slow`: scanTrecRun reads it at the next turn (a function call per line cost 10% of the scan).
  let slow = false;
  while (p < stop) {
    if (slow) {
      p = slowLine(buf, p, stop, lineNo++, file, sink);
      slow = false;
      continue;
    }
    let i = p;
    while ((c = buf[i]!) === 32 || c === 9) i++;
    const qs = i;
    // '#' opens a comment; anything at or below ' ' here is a blank line or another blank byte.
    if ((slow = c <= 32 || c === 35)) continue;
    while ((c = buf[i]!) > 32) i++;
    const qe = i;
    if ((slow = c !== 32 && c !== 9)) continue;
    while ((c = buf[++i]!) === 32 || c === 9);
    while ((c = buf[i]!) > 32) i++;
    if ((slow = c !== 32 && c !== 9)) continue;
    while ((c = buf[++i]!) === 32 || c === 9);
    const ds = i;
    // The document id's FNV-1a hash (fnv1a's, as an int32) on the way, for the sink's lookups.
    let h = 0x811c9dc5 | 0;
    while ((c = buf[i]!) > 32) {
      h = Math.imul(h ^ c, 0x01000193);
      i++;
    }
    const de = i;
    if ((slow = (c !== 32 && c !== 9) || de === ds)) continue;
    while ((c = buf[++i]!) === 32 || c === 9);
    const rs = i;
    while ((c = buf[i]!) > 32) i++;
    if ((slow = (c !== 32 && c !== 9) || i === rs)) continue;
    while ((c = buf[++i]!) === 32 || c === 9);
    const ss = i;
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
      if ((slow = (c !== 32 && c !== 9) || i === ss)) continue;
      score = parseScore(buf, ss, i);
      if ((slow = Number.isNaN(score))) continue;
    }
    while ((c = buf[++i]!) === 32 || c === 9);
    const ts = i;
    while ((c = buf[i]!) > 32) i++;
    const te = i;
    if ((slow = te === ts)) continue;
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

/** The open block's judged hashes (pairs: generation, hash): at most JUDGED_SLOTS slots, a quarter of them used at most. */
const JUDGED_AT = QID_AT + QID_MAX;
const JUDGED_SLOTS = 1 << 16;
/** The run's text starts here, after the header, the open block's query id and judged hashes. */
const TEXT_AT = JUDGED_AT + 8 * JUDGED_SLOTS;
/**
 * Bytes the block arrays take per line: a float64 score, five int32s, four duplicate-table slots of two int32s
 * (a table at most a quarter full: fewer probes, and fewer mispredicted branches, than at half).
 */
const BYTES_PER_LINE = 8 + 5 * 4 + 4 * 8;
/** A line's grade while the kernel has not ruled it out: JavaScript looks it up (no grade is this low). */
export const GRADE_CHECK = -0x40000000;

/**
 * The scan kernel's memory (run-scan-kernels.ts; HARNESS_KERNELS picks the WebAssembly or the TypeScript
 * set): a header the kernel and this class share, the open query block's id, a chunk of the run's text, and
 * the open block's arrays (scores, document id offsets, line numbers, hashes, a duplicate table), which
 * BlockSink reads in place. A larger chunk or block gets a new memory, twice as large, with the header, the
 * text and the block copied over at the same addresses (document ids keep their offsets).
 */
export class RunScanMemory {
  kernels!: RunScanKernels;
  /** The memory as a Buffer: the text's bytes at their addresses, for the JavaScript scanners and sinks. */
  view = Buffer.alloc(0);
  header = new Int32Array(0);
  scores = new Float64Array(0);
  docStart = new Int32Array(0);
  docEnd = new Int32Array(0);
  lines = new Int32Array(0);
  hashes = new Int32Array(0);
  grades = new Int32Array(0);
  /** The judged hashes' slots (pairs: generation, hash). */
  private judgedTable = new Int32Array(0);
  private textBytes = 0;

  /** `set`: the kernel set (HARNESS_KERNELS when not given). */
  constructor(private readonly set: KernelSet = kernelSet()) {
    this.layout(1 << 20, 1024);
    const h = this.header;
    h[H.QLEN] = -1;
    h[H.GEN] = 1;
    h[H.NONPOOL] = REL_NONPOOL;
    h[H.CHECK] = GRADE_CHECK;
    h[H.JUDGED] = JUDGED_AT;
    h[H.JUDGED_MASK] = -2;
  }

  /** Copies buf[start, end) to the text, ready to scan from its first line (numbered firstLine); returns its address range. */
  load(buf: Buffer, start: number, end: number, firstLine: number): { readonly stop: number; readonly end: number } {
    const bytes = end - start;
    if (bytes > this.textBytes) this.layout(Math.max(bytes, 2 * this.textBytes), this.header[H.CAP]!);
    this.view.set(buf.subarray(start, end), TEXT_AT);
    const stop = end > start && buf[end - 1] === 10 ? end : Math.max(start, buf.lastIndexOf(10, end - 1) + 1);
    const h = this.header;
    h[H.POS] = TEXT_AT;
    h[H.END] = TEXT_AT + (stop - start);
    h[H.LINE] = firstLine;
    return { stop: TEXT_AT + (stop - start), end: TEXT_AT + bytes };
  }

  /**
   * Opens a query block with id buf[qs, qe): no line yet, a fresh generation of the duplicate table, and the
   * hashes of its judged documents (`null`: it has none; undefined: not known, every line is looked up).
   */
  startBlock(buf: Uint8Array, qs: number, qe: number, judged: Int32Array | null | undefined): void {
    const h = this.header;
    const len = qe - qs;
    h[H.QLEN] = len <= QID_MAX ? len : -1;
    const view = this.view;
    if (len <= QID_MAX) for (let k = 0; k < len; k++) view[QID_AT + k] = buf[qs + k]!;
    h[H.N] = 0;
    h[H.DISORDER] = 0;
    h[H.TIES] = 0;
    // A new generation empties the table without touching its slots.
    if (++h[H.GEN]! === 0x7fffffff) {
      new Int32Array(this.view.buffer, h[H.DUP]!, 8 * h[H.CAP]!).fill(0);
      this.judgedTable.fill(0);
      h[H.GEN] = 1;
    }
    this.judge(judged);
  }

  /** Enters the block's judged hashes in the kernel's table (generation-stamped like the duplicate table). */
  private judge(judged: Int32Array | null | undefined): void {
    const h = this.header;
    if (judged === null || judged === undefined || 4 * judged.length > JUDGED_SLOTS) {
      h[H.JUDGED_MASK] = judged === null ? -1 : -2;
      return;
    }
    // At most a quarter full, as the duplicate table.
    let size = 4;
    while (size < 4 * judged.length) size <<= 1;
    const mask = size - 1;
    const gen = h[H.GEN]!;
    const table = this.judgedTable;
    for (let k = 0; k < judged.length; k++) {
      const x = judged[k]!;
      let slot = x & mask;
      while (table[2 * slot] === gen && table[2 * slot + 1] !== x) slot = (slot + 1) & mask;
      table[2 * slot] = gen;
      table[2 * slot + 1] = x;
    }
    h[H.JUDGED_MASK] = mask;
  }

  /** Room for one more line in the block arrays (a larger memory when they are full). */
  reserveLine(): void {
    if (this.header[H.N]! >= this.header[H.CAP]!) this.layout(this.textBytes, 2 * this.header[H.CAP]!);
  }

  /** Appends a line to the open block (its hash already in the duplicate table). */
  push(score: number, ds: number, de: number, lineNo: number, hash: number): void {
    const n = this.header[H.N]!;
    if (n > 0) {
      const before = this.scores[n - 1]!;
      if (!(before >= score)) this.header[H.DISORDER]! += 1;
      else if (before === score) this.header[H.TIES]! += 1;
    }
    this.grades[n] = GRADE_CHECK;
    this.scores[n] = score;
    this.docStart[n] = ds;
    this.docEnd[n] = de;
    this.lines[n] = lineNo;
    this.hashes[n] = hash;
    this.header[H.N] = n + 1;
  }

  /** A new memory for `textBytes` of text and `cap` lines a block, what the old one held copied to it. */
  private layout(textBytes: number, cap: number): void {
    // Rounded up to 8 bytes (the arrays after it are float64s), at least one byte to spare.
    const text = Math.ceil((textBytes + 1) / 8) * 8;
    const arrays = TEXT_AT + text;
    const bytes = arrays + cap * BYTES_PER_LINE;
    if (bytes > MAX_MEMORY_BYTES)
      throw new HarnessError(`a run chunk of ${textBytes} bytes or a query of ${cap} lines is too large for the scan kernel's memory`);
    const old = this.kernels === undefined ? undefined : { view: this.view, n: this.header[H.N]!, a: this.arrays() };
    const { kernels, memory } = instantiateKernels(RUN_SCAN_KERNELS, bytes, this.set);
    this.kernels = kernels;
    this.view = Buffer.from(memory);
    this.header = new Int32Array(memory, 0, 32);
    const [scores, ds, de, lines, hashes, grades, dup] = [0, 8, 12, 16, 20, 24, 28].map((k) => arrays + k * cap) as [
      number,
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    this.scores = new Float64Array(memory, scores, cap);
    this.docStart = new Int32Array(memory, ds, cap);
    this.docEnd = new Int32Array(memory, de, cap);
    this.lines = new Int32Array(memory, lines, cap);
    this.hashes = new Int32Array(memory, hashes, cap);
    this.grades = new Int32Array(memory, grades, cap);
    this.judgedTable = new Int32Array(memory, JUDGED_AT, 2 * JUDGED_SLOTS);
    // The header, the query id and the text (document ids of the open block may point into it).
    if (old !== undefined) old.view.copy(this.view, 0, 0, TEXT_AT + Math.min(text - 1, this.textBytes));
    const h = this.header;
    h[H.SCORES] = scores;
    h[H.DS] = ds;
    h[H.DE] = de;
    h[H.LINES] = lines;
    h[H.HASHES] = hashes;
    h[H.GRADES] = grades;
    h[H.DUP] = dup;
    h[H.CAP] = cap;
    h[H.DUP_MASK] = 4 * cap - 1;
    this.textBytes = text - 1;
    if (old !== undefined) this.refill(old.a, old.n);
  }

  /** The block arrays, in the order layout() places them. */
  private arrays(): [Float64Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array] {
    return [this.scores, this.docStart, this.docEnd, this.lines, this.hashes, this.grades];
  }

  /** Copies the open block's first n lines from the old arrays and adds their hashes to the (empty) duplicate table. */
  private refill(old: ReturnType<RunScanMemory['arrays']>, n: number): void {
    const now = this.arrays();
    for (let k = 0; k < now.length; k++) now[k]!.set(old[k]!.subarray(0, n));
    for (let i = 0; i < n; i++) this.kernels.dupAdd(this.hashes[i]!);
  }
}
