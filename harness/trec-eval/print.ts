import { formatLong, padRight, printfFixed } from '../metrics/printf.js';
import type { TrecPlan } from './plan.js';

/** trec_eval's output, byte for byte: the per-query lines (-q) and the summary (meas_print_*.c). */

/**
 * Writes trec_eval's per-query lines (the -q output) as bytes into a reusable buffer and hands them on in
 * large string chunks. A query's lines are ~100 small strings otherwise; at 50,000 queries the string
 * building costs more than the evaluation.
 */
export class TrecQueryWriter {
  private buf = Buffer.allocUnsafe(1 << 20);
  private pos = 0;
  /** The per-query lines in print order: `name\t` bytes (names[nameStart[k] .. nameStart[k + 1])), the row column, and how the value prints. */
  private readonly names: Uint8Array;
  private readonly nameStart: Int32Array;
  private readonly columns: Int32Array;
  private readonly kinds: Uint8Array;
  private readonly maxPrefix: number;

  constructor(
    plan: TrecPlan,
    private readonly emit: (text: string) => void,
    /** Where the bytes go instead, when the output takes bytes: no round trip through a string. */
    private readonly emitBytes?: (bytes: Uint8Array) => void,
  ) {
    const prefixes: Buffer[] = [];
    const columns: number[] = [];
    const kinds: number[] = [];
    for (const inst of plan.instances) {
      if (!inst.perQuery) continue;
      inst.printNames.forEach((n, j) => {
        prefixes.push(Buffer.from(`${n}\t`, 'utf8'));
        columns.push(inst.offset + j);
        kinds.push(inst.kind === 'relstring' ? RELSTRING : inst.kind === 'count' ? COUNT : FIXED);
      });
    }
    this.names = Buffer.concat(prefixes);
    this.nameStart = new Int32Array(prefixes.length + 1);
    prefixes.forEach((b, k) => (this.nameStart[k + 1] = this.nameStart[k]! + b.length));
    this.columns = Int32Array.from(columns);
    this.kinds = Uint8Array.from(kinds);
    this.maxPrefix = Math.max(0, ...prefixes.map((b) => b.length));
  }

  /**
   * Appends one query's lines: `%-22s\t%s\t%6.4f` (`%ld` for counts, `'%s'` for relstring). The usual line
   * is written byte by byte into the buffer through local variables, with room for the whole query reserved
   * once; a value the digit writers decline (huge, -0, near a rounding half, not ASCII) goes through
   * printfFixed / formatLong, which reserve for themselves, and the room for the rest is reserved again.
   */
  query(qid: string, row: Float64Array, off: number, relstring: string | undefined): void {
    const q = Buffer.from(`${qid}\t`, 'utf8');
    const qLen = q.length;
    const rel = relstring ?? '';
    const { names, nameStart, columns, kinds } = this;
    const n = kinds.length;
    // A value prints in at most 24 bytes unless it takes the slow path; a relstring in 4 bytes a character.
    const lineMax = this.maxPrefix + qLen + 32;
    const room = 4 * rel.length;
    this.reserve(n * lineMax + room);
    let out = this.buf;
    let p = this.pos;
    for (let k = 0; k < n; k++) {
      for (let i = nameStart[k]!, e = nameStart[k + 1]!; i < e; i++) out[p++] = names[i]!;
      for (let i = 0; i < qLen; i++) out[p++] = q[i]!;
      const kind = kinds[k]!;
      const x = row[off + columns[k]!]!;
      let end = kind === FIXED ? fixed4Into(out, p, x) : kind === COUNT ? longInto(out, p, x) : quotedInto(out, p, rel);
      if (end < 0) {
        this.pos = p;
        this.text(kind === FIXED ? printfFixed(x, 6, 4) : kind === COUNT ? formatLong(x) : `'${rel}'`);
        this.reserve((n - k) * lineMax + room);
        out = this.buf;
        end = this.pos;
      }
      out[end] = 10;
      p = end + 1;
    }
    this.pos = p;
  }

  /** Emits what is buffered. */
  flush(): void {
    if (this.pos > 0 && this.emitBytes !== undefined) {
      this.emitBytes(this.buf.subarray(0, this.pos));
      // The receiver may keep the bytes (a write still pending): the next ones go to a new buffer.
      this.buf = Buffer.allocUnsafe(this.buf.length);
    } else if (this.pos > 0) this.emit(this.buf.toString('utf8', 0, this.pos));
    this.pos = 0;
  }

  private reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    this.flush();
    if (n > this.buf.length) this.buf = Buffer.allocUnsafe(n);
  }

  private text(s: string): void {
    this.reserve(3 * s.length + 1);
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }
}

const FIXED = 0;
const COUNT = 1;
const RELSTRING = 2;

/** The decimal digits of an int32 v >= 0 at out[p..]; returns the position after them. */
function uintInto(out: Uint8Array, p: number, v: number): number {
  let len = 1;
  for (let u = v; u >= 10; u = (u / 10) | 0) len++;
  const end = p + len;
  for (let i = end - 1; i >= p; i--) {
    const d = (v / 10) | 0;
    out[i] = 48 + v - d * 10;
    v = d;
  }
  return end;
}

/**
 * `%ld` of `(long) x` (formatLong) digit by digit when it lies in 0 .. 2^31 − 1, where the digits are an
 * int32's (Buffer.write would be a call into C++ per value); -1 for the rest, which formatLong prints.
 */
function longInto(out: Uint8Array, p: number, x: number): number {
  const t = Math.trunc(x);
  return t >= 0 && t <= 0x7fffffff ? uintInto(out, p, t | 0) : -1;
}

/** `'%s'` of the relstring when it is ASCII (grade digits, '-', '.', '>'), as bytes; -1 otherwise. */
function quotedInto(out: Uint8Array, p: number, s: string): number {
  out[p++] = 39;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128) return -1;
    out[p++] = c;
  }
  out[p++] = 39;
  return p;
}

/**
 * `%6.4f` digit by digit with formatFixed's fast path (printf.ts): |x| < 10^6, not -0, and x·10^4 not
 * within 10^-4 of a half, where the double product rounds as the exact value does. -1 otherwise (printfFixed).
 */
function fixed4Into(out: Uint8Array, p: number, x: number): number {
  const a = Math.abs(x);
  if (!(a < 1e6) || Object.is(x, -0)) return -1;
  const t = a * 10000;
  const f = Math.floor(t);
  const r = t - f;
  if (!(r < 0.4999 || r > 0.5001)) return -1;
  const n = r > 0.5 ? f + 1 : f;
  if (x < 0) out[p++] = 45;
  const ip = Math.floor(n / 10000);
  if (ip < 10) out[p++] = 48 + ip;
  else p = uintInto(out, p, ip);
  out[p++] = 46;
  // frac < 10^4 is an integer: int32 digits (a double's % is a call to fmod, four per value).
  let f4 = (n - ip * 10000) | 0;
  for (let k = 3; k >= 0; k--) {
    const d = (f4 / 10) | 0;
    out[p + k] = 48 + f4 - d * 10;
    f4 = d;
  }
  return p + 4;
}

/** trec_eval's summary lines (qid `all`). */
export function formatTrecSummary(plan: TrecPlan, summary: Float64Array, runId: string): string {
  if (!plan.settings.summary) return '';
  let s = '';
  for (const inst of plan.instances) {
    if (inst.kind === 'runid') {
      s += `${padRight('runid', 22)}\tall\t${runId}\n`;
      continue;
    }
    if (inst.kind === 'relstring') continue;
    for (let j = 0; j < inst.valueNames.length; j++) {
      const v = summary[inst.offset + j]!;
      s += `${padRight(inst.valueNames[j]!, 22)}\tall\t${inst.kind === 'count' ? formatLong(v) : printfFixed(v, 6, 4)}\n`;
    }
  }
  return s;
}
