import { parseScore, scanTrecRun, type RunLineSink } from '../../evalset/trec.js';

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
