/**
 * The run scan's per-line work as a kernel module: the AssemblyScript source run-scan-kernels.as.ts, and the
 * same two functions in TypeScript below, which read the same bytes and write the same values
 * (harness/util/kernel-set.ts picks one). RunScanMemory (run-scan.ts) lays the memory out.
 */
import type { KernelModule } from '../../util/kernel-set.js';

/** Header fields: int32 indexes from address 0 (the .as.ts file names the same numbers). */
export const H = {
  /** In and out: where the next line starts. */
  POS: 0,
  /** Where the text the kernel reads ends (just past a '\n'). */
  END: 1,
  /** In and out: the next line's number. */
  LINE: 2,
  /** In and out: the lines the open query block holds. */
  N: 3,
  /** How many lines the block arrays hold. */
  CAP: 4,
  /** The open block's query id length (its bytes at QID_AT), or -1: no line is then of the open block. */
  QLEN: 5,
  /** The open block's generation: a duplicate-table slot is taken only when it holds it. */
  GEN: 6,
  /** Out: the query id of the line at POS after a NEW_QUERY stop. */
  QS: 7,
  QE: 8,
  /** Out: the tag of the last line taken. */
  TS: 9,
  TE: 10,
  /** Addresses of the block arrays: scores (float64); document id starts, ends, line numbers, hashes (int32). */
  SCORES: 11,
  DS: 12,
  DE: 13,
  LINES: 14,
  HASHES: 15,
  /** The duplicate table (pairs: generation, hash) and its mask (slots - 1). */
  DUP: 16,
  DUP_MASK: 17,
  /** The block's grades (int32), and a line's grade before JavaScript reads it: NONPOOL, or CHECK (look it up). */
  GRADES: 18,
  NONPOOL: 19,
  CHECK: 20,
  /**
   * The hashes of the open block's judged documents (pairs: generation, hash) and their mask; -1 when the
   * query has none (every line NONPOOL), -2 when they are not given (every line CHECK).
   */
  JUDGED: 21,
  JUDGED_MASK: 22,
  /**
   * In and out: the open block's lines whose score is above the previous line's, or not comparable (NaN),
   * and those whose score equals it: with neither, the block is already in trec_eval's order.
   */
  DISORDER: 23,
  TIES: 24,
} as const;

/** Where the open block's query id bytes are kept, and the longest id kept there. */
export const QID_AT = 128;
export const QID_MAX = 1024;

/** What scan() returns: why it stopped. */
export const STOP = { END: 0, NEW_QUERY: 1, UNCOMMON: 2, FULL: 3, MAYBE_DUPLICATE: 4 } as const;

export interface RunScanKernels {
  /**
   * Reads the run lines from POS on into the open block's arrays and stops at the end of the text, a line of
   * another query, a line that is not the common one, a full block, or a line whose document id's hash a
   * line of the block already has; returns why (STOP). The .as.ts file says which lines are common.
   */
  readonly scan: () => number;
  /** Adds hash h to the open block's duplicate table; 1 when a line of the block already had it, else 0. */
  readonly dupAdd: (h: number) => number;
}

const POW10 = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];

/** A space or a tab: the field separators of a run line. */
const blank = (c: number): boolean => c === 32 || c === 9;

/** Skips blanks from i (a byte already not blank stays): the first byte after them. */
function afterBlanks(b: Uint8Array, i: number): number {
  while (blank(b[i]!)) i++;
  return i;
}

/** Skips the bytes above ' ' from i: the field's end. */
function fieldEnd(b: Uint8Array, i: number): number {
  while (b[i]! > 32) i++;
  return i;
}

/** digits[.digits] in bytes [start, end), at most 9 digits each side and 15 in all: its value, else undefined. */
function readScore(b: Uint8Array, start: number, end: number): number | undefined {
  let i = start;
  let whole = 0;
  let wholeDigits = 0;
  let d = b[i]! - 48;
  for (; d >= 0 && d <= 9; d = b[++i]! - 48, wholeDigits++) whole = (whole * 10 + d) | 0;
  let part = 0;
  let frac = 0;
  if (d === -2) for (d = b[++i]! - 48; d >= 0 && d <= 9; d = b[++i]! - 48, frac++) part = (part * 10 + d) | 0;
  if (i !== end || wholeDigits + frac === 0 || wholeDigits > 9 || frac > 9 || wholeDigits + frac > 15) return undefined;
  const f = POW10[frac]!;
  return frac === 0 ? whole : (whole * f + part) / f;
}

/** Where the six fields of a line start and end (query id, document id, score, tag), and where the next line starts. */
interface LineFields {
  readonly qs: number;
  readonly qe: number;
  readonly ds: number;
  readonly de: number;
  readonly ss: number;
  readonly se: number;
  readonly ts: number;
  readonly te: number;
  readonly next: number;
}

/**
 * The fields of the line at p, or undefined for a line without six (blank line, comment, another blank byte
 * between fields). Bytes after the sixth field, up to the '\n', are not read.
 */
function locate(b: Uint8Array, p: number): LineFields | undefined {
  const start = afterBlanks(b, p);
  if (b[start]! <= 32 || b[start] === 35) return undefined;
  const bounds: number[] = [];
  for (let k = 0, s = start; k < 6; k++) {
    const e = fieldEnd(b, s);
    if (e === s || (k < 5 && !blank(b[e]!))) return undefined;
    bounds.push(s, e);
    s = afterBlanks(b, e + 1);
  }
  let i = bounds[11]!;
  while (b[i] !== 10) i++;
  const [qs, qe, , , ds, de, , , ss, se, ts, te] = bounds as [number, number, number, number, number, number, number, number, number, number, number, number];
  return { qs, qe, ds, de, ss, se, ts, te, next: i + 1 };
}

/** The two functions in TypeScript over `memory`: the same lines taken, the same values written, the same stops. */
function jsRunScanKernels(memory: ArrayBuffer): RunScanKernels {
  const b = new Uint8Array(memory);
  const i32 = new Int32Array(memory);
  const f64 = new Float64Array(memory);
  const dupAdd = (h: number): number => {
    const dup = i32[H.DUP]! >> 2;
    const mask = i32[H.DUP_MASK]!;
    const gen = i32[H.GEN]!;
    let slot = h & mask;
    for (; i32[dup + 2 * slot] === gen; slot = (slot + 1) & mask) if (i32[dup + 2 * slot + 1] === h) return 1;
    i32[dup + 2 * slot] = gen;
    i32[dup + 2 * slot + 1] = h;
    return 0;
  };
  const sameQuery = (s: number, e: number): boolean => {
    if (e - s !== i32[H.QLEN]) return false;
    for (let k = 0; k < e - s; k++) if (b[s + k] !== b[QID_AT + k]) return false;
    return true;
  };
  /** The grade a line with hash h gets here: NONPOOL when no judged document of the block has its hash, else CHECK. */
  const gradeOf = (h: number): number => {
    const mask = i32[H.JUDGED_MASK]!;
    if (mask === -2) return i32[H.CHECK]!;
    if (mask === -1) return i32[H.NONPOOL]!;
    const judged = i32[H.JUDGED]! >> 2;
    const gen = i32[H.GEN]!;
    for (let slot = h & mask; i32[judged + 2 * slot] === gen; slot = (slot + 1) & mask) if (i32[judged + 2 * slot + 1] === h) return i32[H.CHECK]!;
    return i32[H.NONPOOL]!;
  };
  /** Stores the line with fields f, hash h and score as the block's line n. */
  const take = (f: LineFields, h: number, score: number, n: number): void => {
    const scores = i32[H.SCORES]! >> 3;
    if (n > 0) {
      const before = f64[scores + n - 1]!;
      if (!(before >= score)) i32[H.DISORDER]! += 1;
      else if (before === score) i32[H.TIES]! += 1;
    }
    f64[scores + n] = score;
    i32[(i32[H.DS]! >> 2) + n] = f.ds;
    i32[(i32[H.DE]! >> 2) + n] = f.de;
    i32[(i32[H.LINES]! >> 2) + n] = i32[H.LINE]!;
    i32[(i32[H.HASHES]! >> 2) + n] = h;
    i32[(i32[H.GRADES]! >> 2) + n] = gradeOf(h);
    i32[H.TS] = f.ts;
    i32[H.TE] = f.te;
    i32[H.N] = n + 1;
    i32[H.LINE]! += 1;
    i32[H.POS] = f.next;
  };
  // The order of the checks is the .as.ts file's, so that both stop at the same line for the same reason.
  const scan = (): number => {
    while (i32[H.POS]! < i32[H.END]!) {
      const n = i32[H.N]!;
      if (n >= i32[H.CAP]!) return STOP.FULL;
      const f = locate(b, i32[H.POS]!);
      if (f === undefined) return STOP.UNCOMMON;
      if (!sameQuery(f.qs, f.qe)) {
        if (f.qe - f.qs > QID_MAX) return STOP.UNCOMMON;
        i32[H.QS] = f.qs;
        i32[H.QE] = f.qe;
        return STOP.NEW_QUERY;
      }
      let h = 0x811c9dc5 | 0;
      for (let i = f.ds; i < f.de; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
      const score = readScore(b, f.ss, f.se);
      if (score === undefined) return STOP.UNCOMMON;
      if (dupAdd(h)) return STOP.MAYBE_DUPLICATE;
      take(f, h, score, n);
    }
    return STOP.END;
  };
  return { scan, dupAdd };
}

export const RUN_SCAN_KERNELS: KernelModule<RunScanKernels> = { source: 'harness/trec-eval/fast/run-scan-kernels.as.ts', js: jsRunScanKernels };
