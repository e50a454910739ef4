/**
 * Word segmentation after Lucene's `StandardTokenizer`, which implements the word-boundary rules of Unicode
 * UAX #29 (https://unicode.org/reports/tr29/#Word_Boundaries) and emits the segments that contain a letter,
 * digit, ideograph or emoji. What matters for English text is exact: letters and digits join (`covid19`,
 * `h2o`); an apostrophe, period or colon between letters joins (`don't`, `e.g`, `u.s.a`, `a:b`); a period,
 * comma or semicolon between digits joins (`3.5`, `1,000`); underscores join; hyphens, slashes and other
 * punctuation split. Combining marks and format characters (soft hyphen) stay inside the word (rule WB4).
 * Each Han ideograph and Hiragana character is its own token, Katakana runs and runs of Thai/Lao/Khmer/Myanmar
 * letters are one token each, an emoji is one token.
 *
 * Simplifications (documented in ADR 0005, immaterial for English): Hebrew-specific quote rules (WB7a-c) and
 * regional-indicator flags (WB15/16) are not applied, and emoji sequences beyond a presentation emoji (or a
 * pictograph followed by U+FE0F) plus attached modifiers are not joined.
 *
 * Like Lucene (maxTokenLength 255), a token longer than 255 UTF-16 units is split into 255-unit pieces.
 * Tokens are reported as UTF-16 ranges `[start, end)` of `text`, so a caller can look them up without
 * allocating a substring.
 */
/** Receives one token as the range `[start, end)` of the text being tokenized. */
export type TokenSink = (start: number, end: number) => void;

export function standardTokenize(text: string, emit: TokenSink): void {
  const n = text.length;
  let i = 0;
  while (i < n) i = standardTokenizeAt(text, i, emit);
}

/**
 * One step of {@link standardTokenize} from position `i`, which must be where the tokenizer's own loop would
 * be (the start of the text, or where a previous step returned): emits the token starting there, if any, and
 * returns the position of the next step. An indexer's ASCII fast path hands the cases it does not handle here.
 */
export function standardTokenizeAt(text: string, i: number, emit: TokenSink): number {
  const c = text.charCodeAt(i);
  const cls = c < 128 ? ASCII[c]! : classAt(text, i);
  if (cls === OTHER && c < 128) return i + 1;
  const w = width(text, i);
  switch (cls) {
    case ALETTER:
    case NUMERIC:
    case KATAKANA:
    case EXTENDNUMLET: {
      const end = scanWord(text, i, cls);
      // A run of connector punctuation alone ("___") is not a word.
      if (scannedHasCore) emitChunked(i, end, emit);
      return end;
    }
    case IDEO:
    case EMOJI: {
      const end = skipExtend(text, i + w);
      emit(i, end);
      return end;
    }
    case SEA: {
      const n = text.length;
      let j = i + w;
      for (;;) {
        j = skipExtend(text, j);
        if (j < n && classAt(text, j) === SEA) j += width(text, j);
        else break;
      }
      emitChunked(i, j, emit);
      return j;
    }
    case PICTO: {
      // A text-default pictograph (©, ☺) is an emoji token only when followed by the emoji presentation selector.
      if (text.charCodeAt(i + w) === 0xfe0f) {
        const end = skipExtend(text, i + w);
        emit(i, end);
        return end;
      }
      return i + w;
    }
    default:
      return i + w;
  }
}

// Word-break classes (a subset of UAX #29's Word_Break property, with MidNumLet and Single_Quote merged).
const OTHER = 0;
const ALETTER = 1;
const NUMERIC = 2;
const MIDLETTER = 3;
const MIDNUMLETQ = 4;
const MIDNUM = 5;
const EXTENDNUMLET = 6;
const EXTEND = 7; // Extend, Format and ZWJ: ignored inside a word (WB4)
const IDEO = 8;
const KATAKANA = 9;
const SEA = 10;
const EMOJI = 11;
const PICTO = 12;

const MAX_TOKEN_LENGTH = 255;

const ASCII = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c);
  ASCII[c] = /[A-Za-z]/.test(ch)
    ? ALETTER
    : /[0-9]/.test(ch)
      ? NUMERIC
      : ch === ':'
        ? MIDLETTER
        : ch === '.' || ch === "'"
          ? MIDNUMLETQ
          : ch === ',' || ch === ';'
            ? MIDNUM
            : ch === '_'
              ? EXTENDNUMLET
              : OTHER;
}

/**
 * For a caller's ASCII fast path: the word-break class of each ASCII code unit, `ASCII_LETTER` (A-Z, a-z),
 * `ASCII_DIGIT` (0-9), 0 for characters that are never part of a word, other values for `:` `.` `'` `,` `;`
 * `_` (the characters whose effect depends on their neighbours).
 */
export const ASCII_WORD_CLASS: Readonly<Uint8Array> = ASCII;
export const ASCII_LETTER = ALETTER;
export const ASCII_DIGIT = NUMERIC;

/**
 * Whether a run of ASCII letters and digits that {@link standardTokenizeAt} would start at a token boundary,
 * ending before `end` with a character of class `last` (`ASCII_LETTER` or `ASCII_DIGIT`), is a whole token of
 * at most 255 units by itself. `units[0, n)` are the text's UTF-16 code units (a scanner's copy of the string).
 * False means "not decided here" (a non-ASCII neighbour, `_`, or a separator between two letters or two
 * digits, WB6/7 and WB11/12): the caller then runs {@link standardTokenizeAt}.
 */
export function asciiRunIsToken(units: Uint16Array, n: number, start: number, end: number, last: number): boolean {
  if (end - start > MAX_TOKEN_LENGTH) return false;
  if (end >= n) return true;
  const c = units[end]!;
  if (c >= 128) return false;
  const next = ASCII[c]!;
  if (next === OTHER) return true;
  if (next === EXTENDNUMLET) return false;
  // A separator joins only when it fits the run's last class and the character after it has that class.
  const mid = last === ALETTER ? next === MIDLETTER || next === MIDNUMLETQ : next === MIDNUM || next === MIDNUMLETQ;
  if (!mid || end + 1 >= n) return true;
  const after = units[end + 1]!;
  return after < 128 && ASCII[after] !== last;
}

const MIDLETTER_SET = new Set([0x00b7, 0x0387, 0x055f, 0x05f4, 0x2027, 0xfe13, 0xfe55, 0xff1a]);
const MIDNUMLET_SET = new Set([0x2018, 0x2019, 0x2024, 0xfe52, 0xff07, 0xff0e]);
const MIDNUM_SET = new Set([0x037e, 0x0589, 0x060c, 0x060d, 0x066c, 0x07f8, 0x2044, 0xfe10, 0xfe14, 0xfe50, 0xfe54, 0xff0c, 0xff1b]);
const RE_EXTEND = /^[\p{M}\p{Emoji_Modifier}\u200c\u200d]$/u;
const RE_FORMAT = /^\p{Cf}$/u;
const RE_NUMERIC = /^\p{Nd}$/u;
const RE_EXTENDNUMLET = /^[\p{Pc}\u202f]$/u;
const RE_IDEO = /^[\p{Ideographic}\p{Script=Hiragana}]$/u;
const RE_KATAKANA = /^[\p{Script=Katakana}\u30fc\uff70]$/u;
const RE_SEA =
  /^[\p{Script=Thai}\p{Script=Lao}\p{Script=Myanmar}\p{Script=Khmer}\p{Script=Tai_Le}\p{Script=New_Tai_Lue}\p{Script=Tai_Tham}\p{Script=Tai_Viet}]$/u;
const RE_EMOJI = /^\p{Emoji_Presentation}$/u;
const RE_PICTO = /^\p{Extended_Pictographic}$/u;
const RE_LETTER = /^[\p{Alphabetic}\p{L}]$/u;

const nonAsciiClass = new Map<number, number>();

function classifyNonAscii(cp: number): number {
  const ch = String.fromCodePoint(cp);
  if (RE_EXTEND.test(ch)) return EXTEND;
  // ZERO WIDTH SPACE is Cf but a word boundary, not Format.
  if (RE_FORMAT.test(ch)) return cp === 0x200b ? OTHER : EXTEND;
  if (RE_NUMERIC.test(ch)) return NUMERIC;
  if (MIDLETTER_SET.has(cp)) return MIDLETTER;
  if (MIDNUMLET_SET.has(cp)) return MIDNUMLETQ;
  if (MIDNUM_SET.has(cp)) return MIDNUM;
  if (RE_EXTENDNUMLET.test(ch)) return EXTENDNUMLET;
  if (RE_IDEO.test(ch)) return IDEO;
  if (RE_KATAKANA.test(ch)) return KATAKANA;
  if (RE_SEA.test(ch)) return RE_LETTER.test(ch) ? SEA : OTHER;
  if (RE_EMOJI.test(ch)) return EMOJI;
  if (RE_PICTO.test(ch)) return PICTO;
  if (RE_LETTER.test(ch)) return ALETTER;
  return OTHER;
}

function classAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c < 128) return ASCII[c]!;
  const cp = text.codePointAt(i)!;
  let cls = nonAsciiClass.get(cp);
  if (cls === undefined) {
    cls = classifyNonAscii(cp);
    nonAsciiClass.set(cp, cls);
  }
  return cls;
}

function width(text: string, i: number): number {
  const c = text.charCodeAt(i);
  return c >= 0xd800 && c <= 0xdbff && i + 1 < text.length ? 2 : 1;
}

function skipExtend(text: string, i: number): number {
  while (i < text.length && classAt(text, i) === EXTEND) i += width(text, i);
  return i;
}

function joinsDirectly(prev: number, next: number): boolean {
  if (prev === ALETTER || prev === NUMERIC) return next === ALETTER || next === NUMERIC || next === EXTENDNUMLET; // WB5, 8-10, 13a
  if (prev === KATAKANA) return next === KATAKANA || next === EXTENDNUMLET; // WB13, 13a
  if (prev === EXTENDNUMLET) return next === ALETTER || next === NUMERIC || next === KATAKANA || next === EXTENDNUMLET; // WB13a/b
  return false;
}

/** Set by scanWord: whether the word it just scanned holds a letter, digit or Katakana (not only `_`). */
let scannedHasCore = false;

/** Extends a word that starts at `start` with class `first` and returns its end. Each character is classified once. */
function scanWord(text: string, start: number, first: number): number {
  const n = text.length;
  let prev = first;
  let hasCore = first !== EXTENDNUMLET;
  let pos = start + width(text, start);
  while (pos < n) {
    const c = text.charCodeAt(pos);
    const next = c < 128 ? ASCII[c]! : classAt(text, pos);
    const w = c < 0xd800 ? 1 : width(text, pos);
    if (next === EXTEND) {
      pos += w; // WB4: marks and format characters belong to the character before them
      continue;
    }
    if (joinsDirectly(prev, next)) {
      prev = next;
      if (next !== EXTENDNUMLET) hasCore = true;
      pos += w;
      continue;
    }
    // WB6/7 (letter mid letter) and WB11/12 (digit mid digit) look one character past the separator.
    const letterMid = prev === ALETTER && (next === MIDLETTER || next === MIDNUMLETQ);
    const numberMid = prev === NUMERIC && (next === MIDNUM || next === MIDNUMLETQ);
    if (letterMid || numberMid) {
      const after = skipExtend(text, pos + w);
      if (after < n && classAt(text, after) === prev) {
        pos = after + width(text, after);
        continue;
      }
    }
    break;
  }
  scannedHasCore = hasCore;
  return pos;
}

function emitChunked(start: number, end: number, emit: TokenSink): void {
  if (end - start <= MAX_TOKEN_LENGTH) {
    emit(start, end);
    return;
  }
  for (let s = start; s < end; s += MAX_TOKEN_LENGTH) emit(s, Math.min(end, s + MAX_TOKEN_LENGTH));
}
