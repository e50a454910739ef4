/**
 * The Porter stemmer (M.F. Porter, "An algorithm for suffix stripping", Program 14(3), 1980,
 * doi:10.1108/eb046814) as in Porter's reference C/Java implementation, which is what Lucene's
 * `PorterStemFilter` runs. The reference implementation departs from the paper in three places, and so do we:
 * step 2 maps `-bli` to `-ble` (not `-abli` to `-able`), step 2 adds `-logi` to `-log`, and words of one or two
 * letters are returned unchanged.
 *
 * Input is one lower-cased token. Only a, e, i, o, u (and y after a consonant) are vowels; every other
 * character (digits, accented letters) counts as a consonant, as in the reference.
 *
 * Why not the `stemmer` npm package: on the 36,238 distinct words of BEIR NFCorpus it agrees with the
 * reference, but its regular expressions need a non-empty stem before a suffix, so the bare suffixes `ies`,
 * `sses`, `eed` and words with `yy` before `-ed`/`-ing` stem differently (see docs/adr/0005-lexical-arms.md).
 */
export function porterStem(word: string): string {
  const n = word.length;
  if (n <= 2) return word;
  // Every step shortens the word or lengthens it by one letter at most (-at to -ate, -bl to -ble, +e).
  if (n + 2 > buf.length) buf = new Uint16Array(2 * n);
  for (let i = 0; i < n; i++) buf[i] = word.charCodeAt(i);
  len = n;
  written = n;
  step1ab();
  step1c();
  step2();
  step3();
  step4();
  step5();
  // Most stems are a prefix of the word (a suffix removed, nothing written): no new string to build.
  if (written >= len) return len === n ? word : word.slice(0, len);
  return word.slice(0, written) + String.fromCharCode(...buf.subarray(written, len));
}

/*
 * The word being stemmed is `buf[0 .. len)` in char codes, so that matching and replacing suffixes allocates
 * no strings. `end` is the length of the stem left by the last `ends` match; `written` the lowest position a
 * step overwrote. Module state: stemming is synchronous and never re-entered.
 */
let buf = new Uint16Array(64);
let len = 0;
let end = 0;
let written = 0;

const codes = (s: string): Uint16Array => Uint16Array.from(s, (c) => c.charCodeAt(0));
type Rule = readonly [suffix: Uint16Array, replacement: Uint16Array];
const rules = (pairs: readonly (readonly [string, string])[]): readonly Rule[] => pairs.map(([a, b]) => [codes(a), codes(b)] as const);
/** A table from a letter to its entries, as an array indexed by char code (127 and below). */
function byLetter<T>(table: Readonly<Record<string, T>>): readonly (T | undefined)[] {
  const out: (T | undefined)[] = new Array(128).fill(undefined);
  for (const [letter, value] of Object.entries(table)) out[letter.charCodeAt(0)] = value;
  return out;
}

/** The entries of a letter's group, none for other characters. */
function group<T>(table: readonly (readonly T[] | undefined)[], c: number): readonly T[] {
  return (c < 128 ? table[c] : undefined) ?? [];
}

/** Step 2 (double suffixes), grouped by the penultimate letter as in the reference; the first match wins. */
const STEP2 = byLetter({
  a: rules([
    ['ational', 'ate'],
    ['tional', 'tion'],
  ]),
  c: rules([
    ['enci', 'ence'],
    ['anci', 'ance'],
  ]),
  e: rules([['izer', 'ize']]),
  l: rules([
    ['bli', 'ble'],
    ['alli', 'al'],
    ['entli', 'ent'],
    ['eli', 'e'],
    ['ousli', 'ous'],
  ]),
  o: rules([
    ['ization', 'ize'],
    ['ation', 'ate'],
    ['ator', 'ate'],
  ]),
  s: rules([
    ['alism', 'al'],
    ['iveness', 'ive'],
    ['fulness', 'ful'],
    ['ousness', 'ous'],
  ]),
  t: rules([
    ['aliti', 'al'],
    ['iviti', 'ive'],
    ['biliti', 'ble'],
  ]),
  g: rules([['logi', 'log']]),
});

/** Step 3 (-ic-, -full, -ness), grouped by the last letter. */
const STEP3 = byLetter({
  e: rules([
    ['icate', 'ic'],
    ['ative', ''],
    ['alize', 'al'],
  ]),
  i: rules([['iciti', 'ic']]),
  l: rules([
    ['ical', 'ic'],
    ['ful', ''],
  ]),
  s: rules([['ness', '']]),
});

/** Step 4 (strip when the measure of the stem exceeds 1), grouped by the penultimate letter. */
const STEP4 = byLetter({
  a: ['al'],
  c: ['ance', 'ence'],
  e: ['er'],
  i: ['ic'],
  l: ['able', 'ible'],
  n: ['ant', 'ement', 'ment', 'ent'],
  o: ['ion', 'ou'],
  s: ['ism'],
  t: ['ate', 'iti'],
  u: ['ous'],
  v: ['ive'],
  z: ['ize'],
});
const STEP4_CODES = STEP4.map((list) => list?.map(codes));

const SSES = codes('sses');
const SS = codes('ss');
const IES = codes('ies');
const I = codes('i');
const EED = codes('eed');
const ED = codes('ed');
const ING = codes('ing');
const AT = codes('at');
const ATE = codes('ate');
const BL = codes('bl');
const BLE = codes('ble');
const IZ = codes('iz');
const IZE = codes('ize');
const Y = codes('y');

const A = 97;
const E = 101;
const I_ = 105;
const L = 108;
const O = 111;
const S = 115;
const T = 116;
const U = 117;
const W = 119;
const X = 120;
const Y_ = 121;
const Z = 122;

/**
 * Only a, e, i, o, u are vowels, and y after a consonant. A position past the word counts as a consonant (step
 * 5 measures the length the word had before a final e was removed, as the reference does).
 */
function isConsonant(i: number): boolean {
  if (i >= len) return true;
  const c = buf[i]!;
  if (c === A || c === E || c === I_ || c === O || c === U) return false;
  // y is a consonant at the start or after a vowel, a vowel after a consonant.
  if (c === Y_) return i === 0 ? true : !isConsonant(i - 1);
  return true;
}

/** Porter's m: the number of vowel-consonant sequences in the first `n` characters ([C](VC)^m[V]). */
function measure(n: number): number {
  let i = 0;
  while (i < n && isConsonant(i)) i++;
  let m = 0;
  while (i < n) {
    while (i < n && !isConsonant(i)) i++;
    if (i >= n) break;
    m++;
    while (i < n && isConsonant(i)) i++;
  }
  return m;
}

function hasVowel(n: number): boolean {
  for (let i = 0; i < n; i++) if (!isConsonant(i)) return true;
  return false;
}

/** The characters at `i-1` and `i` are the same consonant. */
function doubleConsonant(i: number): boolean {
  return i >= 1 && buf[i] === buf[i - 1] && isConsonant(i);
}

/** consonant-vowel-consonant ending at `i`, the last consonant not w, x or y (hop(e), but snow, box, tray). */
function cvc(i: number): boolean {
  if (i < 2 || !isConsonant(i) || isConsonant(i - 1) || !isConsonant(i - 2)) return false;
  const c = buf[i];
  return c !== W && c !== X && c !== Y_;
}

function ends(suffix: Uint16Array): boolean {
  const k = suffix.length;
  if (k > len) return false;
  const from = len - k;
  for (let i = 0; i < k; i++) if (buf[from + i] !== suffix[i]) return false;
  end = from;
  return true;
}

/** Replace the suffix matched by the last `ends` with `s`. */
function setTo(s: Uint16Array): void {
  buf.set(s, end);
  len = end + s.length;
  if (s.length > 0 && end < written) written = end;
}

function replaceIfMeasured(s: Uint16Array): void {
  if (measure(end) > 0) setTo(s);
}

/** Plurals, then -eed / -ed / -ing. */
function step1ab(): void {
  if (buf[len - 1] === S) {
    if (ends(SSES)) setTo(SS);
    else if (ends(IES)) setTo(I);
    else if (buf[len - 2] !== S) len--;
  }
  if (ends(EED)) {
    if (measure(end) > 0) len--;
  } else if ((ends(ED) || ends(ING)) && hasVowel(end)) {
    len = end;
    const last = len - 1;
    if (ends(AT)) setTo(ATE);
    else if (ends(BL)) setTo(BLE);
    else if (ends(IZ)) setTo(IZE);
    else if (doubleConsonant(last)) {
      const c = buf[last];
      if (c !== L && c !== S && c !== Z) len--;
    } else if (measure(len) === 1 && cvc(last)) append(E);
  }
}

function append(c: number): void {
  if (len < written) written = len;
  buf[len++] = c;
}

/** Terminal y becomes i when the stem has a vowel. */
function step1c(): void {
  if (ends(Y) && hasVowel(end)) {
    len--;
    append(I_);
  }
}

function step2(): void {
  if (len < 2) return;
  for (const [suffix, repl] of group(STEP2, buf[len - 2]!)) {
    if (ends(suffix)) {
      replaceIfMeasured(repl);
      return;
    }
  }
}

function step3(): void {
  for (const [suffix, repl] of group(STEP3, buf[len - 1]!)) {
    if (ends(suffix)) {
      replaceIfMeasured(repl);
      return;
    }
  }
}

function step4(): void {
  if (len < 2) return;
  for (const suffix of group(STEP4_CODES, buf[len - 2]!)) {
    if (!ends(suffix)) continue;
    // -ion is removed only after s or t; when it does not qualify the reference still tries -ou.
    if (suffix === ION_ENTRY) {
      const before = buf[end - 1];
      if (end === 0 || (before !== S && before !== T)) continue;
    }
    if (measure(end) > 1) len = end;
    return;
  }
}
const ION_ENTRY = STEP4_CODES[O]![0]!;

/** Final -e, then -ll to -l, both when the word is long enough. */
function step5(): void {
  const n = len;
  if (buf[n - 1] === E) {
    const m = measure(n - 1);
    if (m > 1 || (m === 1 && !cvc(n - 2))) len--;
  }
  if (buf[len - 1] === L && doubleConsonant(len - 1) && measure(n) > 1) len--;
}
