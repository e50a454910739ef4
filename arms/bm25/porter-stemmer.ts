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
  if (word.length <= 2) return word;
  return new Stemming(word).run();
}

/** Step 2 (double suffixes), grouped by the penultimate letter as in the reference; the first match wins. */
const STEP2: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  a: [
    ['ational', 'ate'],
    ['tional', 'tion'],
  ],
  c: [
    ['enci', 'ence'],
    ['anci', 'ance'],
  ],
  e: [['izer', 'ize']],
  l: [
    ['bli', 'ble'],
    ['alli', 'al'],
    ['entli', 'ent'],
    ['eli', 'e'],
    ['ousli', 'ous'],
  ],
  o: [
    ['ization', 'ize'],
    ['ation', 'ate'],
    ['ator', 'ate'],
  ],
  s: [
    ['alism', 'al'],
    ['iveness', 'ive'],
    ['fulness', 'ful'],
    ['ousness', 'ous'],
  ],
  t: [
    ['aliti', 'al'],
    ['iviti', 'ive'],
    ['biliti', 'ble'],
  ],
  g: [['logi', 'log']],
};

/** Step 3 (-ic-, -full, -ness), grouped by the last letter. */
const STEP3: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  e: [
    ['icate', 'ic'],
    ['ative', ''],
    ['alize', 'al'],
  ],
  i: [['iciti', 'ic']],
  l: [
    ['ical', 'ic'],
    ['ful', ''],
  ],
  s: [['ness', '']],
};

/** Step 4 (strip when the measure of the stem exceeds 1), grouped by the penultimate letter. */
const STEP4: Readonly<Record<string, readonly string[]>> = {
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
};

/** One stemming run: `w` is the word so far; `end` is the length of the stem left by the last `ends` match. */
class Stemming {
  private w: string;
  private end = 0;

  constructor(word: string) {
    this.w = word;
  }

  run(): string {
    this.step1ab();
    this.step1c();
    this.step2();
    this.step3();
    this.step4();
    this.step5();
    return this.w;
  }

  private isConsonant(i: number): boolean {
    const c = this.w.charCodeAt(i);
    // a e i o u
    if (c === 97 || c === 101 || c === 105 || c === 111 || c === 117) return false;
    // y is a consonant at the start or after a vowel, a vowel after a consonant.
    if (c === 121) return i === 0 ? true : !this.isConsonant(i - 1);
    return true;
  }

  /** Porter's m: the number of vowel-consonant sequences in the first `len` characters ([C](VC)^m[V]). */
  private measure(len: number): number {
    let i = 0;
    while (i < len && this.isConsonant(i)) i++;
    let m = 0;
    while (i < len) {
      while (i < len && !this.isConsonant(i)) i++;
      if (i >= len) break;
      m++;
      while (i < len && this.isConsonant(i)) i++;
    }
    return m;
  }

  private hasVowel(len: number): boolean {
    for (let i = 0; i < len; i++) if (!this.isConsonant(i)) return true;
    return false;
  }

  /** The characters at `i-1` and `i` are the same consonant. */
  private doubleConsonant(i: number): boolean {
    return i >= 1 && this.w.charCodeAt(i) === this.w.charCodeAt(i - 1) && this.isConsonant(i);
  }

  /** consonant-vowel-consonant ending at `i`, the last consonant not w, x or y (hop(e), but snow, box, tray). */
  private cvc(i: number): boolean {
    if (i < 2 || !this.isConsonant(i) || this.isConsonant(i - 1) || !this.isConsonant(i - 2)) return false;
    const c = this.w[i];
    return c !== 'w' && c !== 'x' && c !== 'y';
  }

  private ends(suffix: string): boolean {
    if (!this.w.endsWith(suffix)) return false;
    this.end = this.w.length - suffix.length;
    return true;
  }

  /** Replace the suffix matched by the last `ends` with `s`. */
  private setTo(s: string): void {
    this.w = this.w.slice(0, this.end) + s;
  }

  private replaceIfMeasured(s: string): void {
    if (this.measure(this.end) > 0) this.setTo(s);
  }

  /** Plurals, then -eed / -ed / -ing. */
  private step1ab(): void {
    if (this.w.endsWith('s')) {
      if (this.ends('sses')) this.setTo('ss');
      else if (this.ends('ies')) this.setTo('i');
      else if (this.w[this.w.length - 2] !== 's') this.w = this.w.slice(0, -1);
    }
    if (this.ends('eed')) {
      if (this.measure(this.end) > 0) this.w = this.w.slice(0, -1);
    } else if ((this.ends('ed') || this.ends('ing')) && this.hasVowel(this.end)) {
      this.w = this.w.slice(0, this.end);
      const last = this.w.length - 1;
      if (this.ends('at')) this.setTo('ate');
      else if (this.ends('bl')) this.setTo('ble');
      else if (this.ends('iz')) this.setTo('ize');
      else if (this.doubleConsonant(last)) {
        const c = this.w[last];
        if (c !== 'l' && c !== 's' && c !== 'z') this.w = this.w.slice(0, -1);
      } else if (this.measure(this.w.length) === 1 && this.cvc(last)) this.w += 'e';
    }
  }

  /** Terminal y becomes i when the stem has a vowel. */
  private step1c(): void {
    if (this.ends('y') && this.hasVowel(this.end)) this.w = `${this.w.slice(0, -1)}i`;
  }

  private step2(): void {
    if (this.w.length < 2) return;
    for (const [suffix, repl] of STEP2[this.w[this.w.length - 2]!] ?? []) {
      if (this.ends(suffix)) {
        this.replaceIfMeasured(repl);
        return;
      }
    }
  }

  private step3(): void {
    for (const [suffix, repl] of STEP3[this.w[this.w.length - 1]!] ?? []) {
      if (this.ends(suffix)) {
        this.replaceIfMeasured(repl);
        return;
      }
    }
  }

  private step4(): void {
    if (this.w.length < 2) return;
    for (const suffix of STEP4[this.w[this.w.length - 2]!] ?? []) {
      if (!this.ends(suffix)) continue;
      // -ion is removed only after s or t; when it does not qualify the reference still tries -ou.
      if (suffix === 'ion') {
        const before = this.w[this.end - 1];
        if (this.end === 0 || (before !== 's' && before !== 't')) continue;
      }
      if (this.measure(this.end) > 1) this.w = this.w.slice(0, this.end);
      return;
    }
  }

  /** Final -e, then -ll to -l, both when the word is long enough. */
  private step5(): void {
    const len = this.w.length;
    if (this.w[len - 1] === 'e') {
      const m = this.measure(len - 1);
      if (m > 1 || (m === 1 && !this.cvc(len - 2))) this.w = this.w.slice(0, -1);
    }
    const n = this.w.length;
    if (this.w[n - 1] === 'l' && this.doubleConsonant(n - 1) && this.measure(len) > 1) this.w = this.w.slice(0, -1);
  }
}
