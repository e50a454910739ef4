/**
 * The run scan's per-line work in AssemblyScript, compiled by `npm run build` to
 * dist/harness/trec-eval/fast/run-scan-kernels.wasm (asconfig.json: memory imported from `env.memory`);
 * run-scan-kernels.ts holds the same functions in TypeScript, the layout of the header, and loads this module.
 * Every address is a byte offset into that memory.
 */

// Header fields (int32 indexes at address 0); run-scan-kernels.ts lists the same numbers.
/** In and out: where the next line starts. */
const H_POS: usize = 0;
/** Where the text ends (just past a '\n'). */
const H_END: usize = 1;
/** In and out: the next line's number. */
const H_LINE: usize = 2;
/** In and out: the lines the open query block holds. */
const H_N: usize = 3;
/** How many lines the block arrays hold. */
const H_CAP: usize = 4;
/** The open block's query id: its length (its bytes are at QID_AT); -1 before the first block. */
const H_QLEN: usize = 5;
/** The open block's generation: a dup slot is taken only when it holds it. */
const H_GEN: usize = 6;
/** Out: the query id of the line at H_POS, after a NEW_QUERY stop. */
const H_QS: usize = 7;
const H_QE: usize = 8;
/** Out: the tag of the last line taken. */
const H_TS: usize = 9;
const H_TE: usize = 10;
/** The block arrays' addresses: scores (f64), document id starts and ends, line numbers, hashes (i32). */
const H_SCORES: usize = 11;
const H_DS: usize = 12;
const H_DE: usize = 13;
const H_LINES: usize = 14;
const H_HASHES: usize = 15;
/** The duplicate table (pairs: generation, hash) and its mask (slots - 1). */
const H_DUP: usize = 16;
const H_DUP_MASK: usize = 17;
/** The block's grades (i32) and what a line's grade is before JavaScript reads it: NONPOOL, or CHECK (look it up). */
const H_GRADES: usize = 18;
const H_NONPOOL: usize = 19;
const H_CHECK: usize = 20;
/**
 * The hashes of the open block's judged documents (pairs: generation, hash) and their mask; -1 when the
 * query has none (every line NONPOOL), -2 when they are not given (every line CHECK).
 */
const H_JUDGED: usize = 21;
const H_JUDGED_MASK: usize = 22;
/**
 * In and out: the open block's lines whose score is above the previous line's, or not comparable (NaN), and
 * those whose score equals it: with neither, the block is already in trec_eval's order.
 */
const H_DISORDER: usize = 23;
const H_TIES: usize = 24;
/** Where the open block's query id bytes are kept. */
const QID_AT: usize = 128;
/** The longest query id kept there; a longer one sends its lines to the JavaScript scanner. */
const QID_MAX: i32 = 1024;

// What scan() returns.
const END: i32 = 0;
const NEW_QUERY: i32 = 1;
const UNCOMMON: i32 = 2;
const FULL: i32 = 3;
const MAYBE_DUPLICATE: i32 = 4;

function header(k: usize): i32 {
  return load<i32>(k << 2);
}

function setHeader(k: usize, v: i32): void {
  store<i32>(k << 2, v);
}

/** 10^k for k = 0..9, exact in a double (a switch: a table would need a data segment in the caller's memory). */
function pow10(k: i32): f64 {
  switch (k) {
    case 1:
      return 1e1;
    case 2:
      return 1e2;
    case 3:
      return 1e3;
    case 4:
      return 1e4;
    case 5:
      return 1e5;
    case 6:
      return 1e6;
    case 7:
      return 1e7;
    case 8:
      return 1e8;
    case 9:
      return 1e9;
    default:
      return 1;
  }
}

/** A space or a tab: the field separators of a run line. */
function blank(c: i32): bool {
  return c === 32 || c === 9;
}

/** Whether bytes [s, e) are the open block's query id. */
function sameQuery(s: usize, e: usize): bool {
  const len = <i32>(e - s);
  if (len !== header(H_QLEN)) return false;
  for (let k: i32 = 0; k < len; k++) if (load<u8>(s + <usize>k) !== load<u8>(QID_AT + <usize>k)) return false;
  return true;
}

/** Adds h to the generation-stamped hash set at `table` (pairs: generation, hash); returns 1 if it was there. */
function addHash(table: usize, mask: i32, gen: i32, h: i32): i32 {
  let slot = h & mask;
  let at = table + ((<usize>slot) << 3);
  while (load<i32>(at) === gen) {
    if (load<i32>(at, 4) === h) return 1;
    slot = (slot + 1) & mask;
    at = table + ((<usize>slot) << 3);
  }
  store<i32>(at, gen);
  store<i32>(at, h, 4);
  return 0;
}

/** Whether h is in the generation-stamped hash set at `table`. */
function hasHash(table: usize, mask: i32, gen: i32, h: i32): bool {
  let slot = h & mask;
  let at = table + ((<usize>slot) << 3);
  while (load<i32>(at) === gen) {
    if (load<i32>(at, 4) === h) return true;
    slot = (slot + 1) & mask;
    at = table + ((<usize>slot) << 3);
  }
  return false;
}

/**
 * Adds hash h to the open block's duplicate table; returns 1 when a line of the block already had it (a
 * possible duplicate, which the caller checks byte by byte), else 0.
 */
export function dupAdd(h: i32): i32 {
  return addHash(<usize>header(H_DUP), header(H_DUP_MASK), header(H_GEN), h);
}

// Where the fields of the line a locate function just read start and end (wasm globals: no memory traffic).
let gQs: usize = 0;
let gQe: usize = 0;
let gDs: usize = 0;
let gDe: usize = 0;
let gSs: usize = 0;
let gSe: usize = 0;
let gTs: usize = 0;
let gTe: usize = 0;
let gNext: usize = 0;
let gScore: f64 = 0;

/** The FNV-1a hash (as an i32) of bytes [s, e). */
function fnv1a(s: usize, e: usize): i32 {
  let h: i32 = 0x811c9dc5;
  for (let i = s; i < e; i++) h = (h ^ <i32>load<u8>(i)) * 0x01000193;
  return h;
}

/**
 * digits[.digits] at s, at most 9 digits each side and 15 in all, ending at e: into gScore, returning true;
 * false for any other score. An exact integer divided once by 10^frac, so correctly rounded.
 */
function readScore(s: usize, e: usize): bool {
  let i = s;
  let whole: i32 = 0;
  let wholeDigits: i32 = 0;
  let d = <i32>load<u8>(i) - 48;
  while (<u32>d <= 9) {
    whole = whole * 10 + d;
    wholeDigits++;
    d = <i32>load<u8>(++i) - 48;
  }
  let part: i32 = 0;
  let frac: i32 = 0;
  if (d === -2) {
    d = <i32>load<u8>(++i) - 48;
    while (<u32>d <= 9) {
      part = part * 10 + d;
      frac++;
      d = <i32>load<u8>(++i) - 48;
    }
  }
  if (i !== e || wholeDigits + frac === 0 || wholeDigits > 9 || frac > 9 || wholeDigits + frac > 15) return false;
  const f = pow10(frac);
  gScore = frac === 0 ? <f64>whole : (<f64>whole * f + <f64>part) / f;
  return true;
}

/** Bit k set when byte p + k (k < 64) is at most ' ': the separators, line ends and other control bytes. */
function lowBytes(p: usize): u64 {
  const sp = i8x16.splat(32);
  const m0 = <u64>i8x16.bitmask(i8x16.le_u(v128.load(p), sp));
  const m1 = <u64>i8x16.bitmask(i8x16.le_u(v128.load(p, 16), sp));
  const m2 = <u64>i8x16.bitmask(i8x16.le_u(v128.load(p, 32), sp));
  const m3 = <u64>i8x16.bitmask(i8x16.le_u(v128.load(p, 48), sp));
  return m0 | (m1 << 16) | (m2 << 32) | (m3 << 48);
}

/**
 * Whether the separators s1 < ... < s6 found from p (the first six bytes at most ' ' in the 64 bytes from p) make
 * the common shape: six fields, one blank between each two, no blank before the first, a '\n' right after the
 * last, within 64 bytes (s6 is 64 when fewer than six such bytes are there).
 */
function commonShape(p: usize, s1: usize, s2: usize, s3: usize, s4: usize, s5: usize, s6: usize): bool {
  if (s6 >= 64 || s1 === 0 || s2 === s1 + 1 || s3 === s2 + 1 || s4 === s3 + 1 || s5 === s4 + 1 || s6 === s5 + 1) return false;
  if (load<u8>(p + s6) !== 10 || load<u8>(p) === 35) return false;
  if (!blank(load<u8>(p + s1)) || !blank(load<u8>(p + s2)) || !blank(load<u8>(p + s3))) return false;
  return blank(load<u8>(p + s4)) && blank(load<u8>(p + s5));
}

/** The fields of the line at p byte by byte (any blanks, a '\r' before the '\n', a long line); false when it has not six. */
function locateScalar(p: usize): bool {
  let i = p;
  let c: i32 = load<u8>(i);
  while (blank(c)) c = load<u8>(++i);
  gQs = i;
  if (c <= 32 || c === 35) return false;
  while (c > 32) c = load<u8>(++i);
  gQe = i;
  if (!blank(c)) return false;
  do c = load<u8>(++i);
  while (blank(c));
  while (c > 32) c = load<u8>(++i);
  if (!blank(c)) return false;
  do c = load<u8>(++i);
  while (blank(c));
  gDs = i;
  while (c > 32) c = load<u8>(++i);
  gDe = i;
  if (!blank(c) || gDe === gDs) return false;
  do c = load<u8>(++i);
  while (blank(c));
  const rs = i;
  while (c > 32) c = load<u8>(++i);
  if (!blank(c) || i === rs) return false;
  do c = load<u8>(++i);
  while (blank(c));
  gSs = i;
  while (c > 32) c = load<u8>(++i);
  gSe = i;
  if (!blank(c) || gSe === gSs) return false;
  do c = load<u8>(++i);
  while (blank(c));
  gTs = i;
  while (c > 32) c = load<u8>(++i);
  gTe = i;
  if (gTe === gTs) return false;
  while (c !== 10) c = load<u8>(++i);
  gNext = i + 1;
  return true;
}

/**
 * Reads the run lines from H_POS on into the open query block's arrays (score, document id offsets, line
 * number, the document id's FNV-1a hash as an i32, and the grade as far as the judged hashes tell it) and stops, with H_POS at the line it did not take, at the
 * end of the text (END), at a line of another query (NEW_QUERY, its id's offsets in H_QS/H_QE), at a line
 * that is not the common one (UNCOMMON: blank, comment, another blank byte, too few fields, a score other
 * than digits[.digits] with at most 9 digits each side and 15 in all), when the arrays are full (FULL), or at a line
 * whose hash a line of the block already has (MAYBE_DUPLICATE). No bound test per byte: a '\n' ends every line.
 *
 * The score is the double `scanTrecRunFast` reads: whole and fraction digits in i32 arithmetic, then
 * `(whole * 10^frac + part) / 10^frac`, an exact integer divided once, so correctly rounded.
 */
export function scan(): i32 {
  let p = <usize>header(H_POS);
  let n = header(H_N);
  let lineNo = header(H_LINE);
  let disorder = header(H_DISORDER);
  let ties = header(H_TIES);
  const scores = <usize>header(H_SCORES);
  const gen = header(H_GEN);
  const judgedMask = header(H_JUDGED_MASK);
  // The grade of a line no judged hash matches: NONPOOL, unless the hashes are not given (every line CHECK).
  const unmatched = judgedMask === -2 ? header(H_CHECK) : header(H_NONPOOL);
  let status = END;
  let ts: usize = 0;
  let te: usize = 0;
  while (p < <usize>header(H_END)) {
    status = FULL;
    if (n >= header(H_CAP)) break;
    status = UNCOMMON;
    // The six fields of the common line in one step (128-bit SIMD), else byte by byte (locateScalar).
    let m = lowBytes(p);
    const s1 = <usize>ctz(m);
    m &= m - 1;
    const s2 = <usize>ctz(m);
    m &= m - 1;
    const s3 = <usize>ctz(m);
    m &= m - 1;
    const s4 = <usize>ctz(m);
    m &= m - 1;
    const s5 = <usize>ctz(m);
    const s6 = <usize>ctz(m & (m - 1));
    if (commonShape(p, s1, s2, s3, s4, s5, s6)) {
      gQs = p;
      gQe = p + s1;
      gDs = p + s2 + 1;
      gDe = p + s3;
      gSs = p + s4 + 1;
      gSe = p + s5;
      gTs = p + s5 + 1;
      gTe = p + s6;
      gNext = p + s6 + 1;
    } else if (!locateScalar(p)) break;
    if (!sameQuery(gQs, gQe)) {
      if (<i32>(gQe - gQs) <= QID_MAX) status = NEW_QUERY;
      break;
    }
    const h = fnv1a(gDs, gDe);
    if (!readScore(gSs, gSe)) break;
    status = MAYBE_DUPLICATE;
    if (addHash(<usize>header(H_DUP), header(H_DUP_MASK), gen, h)) break;
    const score = gScore;
    if (n > 0) {
      const before = load<f64>(scores + ((<usize>(n - 1)) << 3));
      if (!(before >= score)) disorder++;
      else if (before === score) ties++;
    }
    const k = (<usize>n) << 2;
    store<f64>(scores + ((<usize>n) << 3), score);
    store<i32>(<usize>header(H_DS) + k, <i32>gDs);
    store<i32>(<usize>header(H_DE) + k, <i32>gDe);
    store<i32>(<usize>header(H_LINES) + k, lineNo);
    store<i32>(<usize>header(H_HASHES) + k, h);
    // NONPOOL when no judged document of the block has the line's hash, else CHECK (JavaScript looks it up).
    const judged = judgedMask >= 0 && hasHash(<usize>header(H_JUDGED), judgedMask, gen, h);
    store<i32>(<usize>header(H_GRADES) + k, judged ? header(H_CHECK) : unmatched);
    ts = gTs;
    te = gTe;
    n++;
    lineNo++;
    p = gNext;
    status = END;
  }
  return save(status, p, n, lineNo, disorder, ties, ts, te);
}

/** Writes what scan() leaves in the header (the tag only when it took a line), and returns its status. */
function save(status: i32, p: usize, n: i32, lineNo: i32, disorder: i32, ties: i32, ts: usize, te: usize): i32 {
  if (status === NEW_QUERY) {
    setHeader(H_QS, <i32>gQs);
    setHeader(H_QE, <i32>gQe);
  }
  if (te !== 0) {
    setHeader(H_TS, <i32>ts);
    setHeader(H_TE, <i32>te);
  }
  setHeader(H_POS, <i32>p);
  setHeader(H_N, n);
  setHeader(H_LINE, lineNo);
  setHeader(H_DISORDER, disorder);
  setHeader(H_TIES, ties);
  return status;
}
