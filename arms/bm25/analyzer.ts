import { ENGLISH_V1_STOP_WORDS } from './english-stopwords.js';
import { porterStem } from './porter-stemmer.js';
import { standardTokenize, type TokenSink } from './standard-tokenizer.js';

/**
 * Lucene's `EnglishAnalyzer.ENGLISH_STOP_WORDS_SET` (33 words), which Anserini's default analyzer (and so
 * Pyserini's BM25 baselines) uses.
 */
export const LUCENE_ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set([
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'but',
  'by',
  'for',
  'if',
  'in',
  'into',
  'is',
  'it',
  'no',
  'not',
  'of',
  'on',
  'or',
  'such',
  'that',
  'the',
  'their',
  'then',
  'there',
  'these',
  'they',
  'this',
  'to',
  'was',
  'will',
  'with',
]);

export type TokenizerKind = 'standard' | 'simple';

export interface AnalyzerOptions {
  /** `standard`: UAX #29 words as Lucene's StandardTokenizer; `simple`: maximal runs of letters and digits. */
  readonly tokenizer: TokenizerKind;
  /** Drop a trailing `'s` (also with U+2019 or U+FF07) as Lucene's EnglishPossessiveFilter. */
  readonly possessive: boolean;
  readonly stopwords: 'lucene' | 'english-v1' | 'none';
  readonly stemmer: 'porter' | 'none';
  /** Tokens shorter than this many UTF-16 units (after lower-casing) are dropped; absent: 1 (none dropped). */
  readonly minTokenLength?: number;
}

/**
 * Text to index terms, in two stages so an indexer can memoise per surface token: `tokenize` reports surface
 * tokens as ranges of the text, `term` maps one surface token to its term (null when filtered out, e.g. a stop
 * word).
 * `terms` is both stages at once. Filtered tokens leave no trace: they do not count toward document length.
 */
export interface Analyzer {
  readonly tokenizer: TokenizerKind;
  tokenize(text: string, emit: TokenSink): void;
  term(token: string): string | null;
  /** As {@link term} without the memo, for a caller that keeps its own table of tokens (TermScanner). */
  analyze(token: string): string | null;
  terms(text: string): string[];
}

/**
 * Builds an analyzer: tokenize, then per token possessive removal, lower-casing, stop filtering and stemming,
 * in the order of Lucene's EnglishAnalyzer (possessive before lower-casing; it matches `'s` and `'S`, so the
 * order is immaterial). Lower-casing is per code point like Java's `Character.toLowerCase` (no
 * context-dependent final sigma, `İ` to `i`). `term` is memoised: a corpus repeats its vocabulary, and
 * stemming is the costly step.
 */
export function createAnalyzer(opts: AnalyzerOptions): Analyzer {
  return new EnglishAnalyzer(opts);
}

/**
 * A class rather than closures: every analyzer shares one set of functions, so the JIT code compiled while one
 * arm indexes (say, a warm-up corpus) stays valid for the next arm's analyzer instead of deoptimising on a new
 * call target.
 */
class EnglishAnalyzer implements Analyzer {
  readonly tokenizer: TokenizerKind;
  readonly tokenize: (text: string, emit: TokenSink) => void;
  private readonly memo = new Map<string, string | null>();
  private readonly stop: ReadonlySet<string> | undefined;
  private readonly minLength: number;
  private readonly stem: boolean;
  private readonly possessive: boolean;

  constructor(opts: AnalyzerOptions) {
    this.tokenizer = opts.tokenizer;
    this.tokenize = opts.tokenizer === 'standard' ? standardTokenize : simpleTokenize;
    this.stop = opts.stopwords === 'lucene' ? LUCENE_ENGLISH_STOP_WORDS : opts.stopwords === 'english-v1' ? ENGLISH_V1_STOP_WORDS : undefined;
    this.minLength = Math.max(1, opts.minTokenLength ?? 1);
    this.stem = opts.stemmer === 'porter';
    this.possessive = opts.possessive;
  }

  term(token: string): string | null {
    let t = this.memo.get(token);
    if (t === undefined) {
      t = this.analyze(token);
      this.memo.set(token, t);
    }
    return t;
  }

  terms(text: string): string[] {
    const out: string[] = [];
    this.tokenize(text, (start, end) => {
      const t = this.term(text.slice(start, end));
      if (t !== null) out.push(t);
    });
    return out;
  }

  analyze(token: string): string | null {
    let t = lowerCase(token);
    if (this.possessive) t = stripPossessive(t);
    if (t.length < this.minLength || this.stop?.has(t) === true) return null;
    return this.stem ? porterStem(t) : t;
  }
}

const RE_SIMPLE = /[\p{L}\p{N}]+/gu;

function simpleTokenize(text: string, emit: TokenSink): void {
  for (const m of text.matchAll(RE_SIMPLE)) emit(m.index, m.index + m[0].length);
}

const RE_SIMPLE_AT = /[\p{L}\p{N}]+/uy;

/**
 * One step of the `simple` tokenizer from position `i`, a code point boundary where the previous token (if any)
 * ended or earlier: emits the run of letters and digits starting at `i`, if any, and returns where to go on.
 * Stepping from 0 visits the positions `matchAll` tries, so it emits the same tokens.
 */
export function simpleTokenizeAt(text: string, i: number, emit: TokenSink): number {
  RE_SIMPLE_AT.lastIndex = i;
  if (RE_SIMPLE_AT.test(text)) {
    const end = RE_SIMPLE_AT.lastIndex;
    emit(i, end);
    return end;
  }
  return i + (text.codePointAt(i)! > 0xffff ? 2 : 1);
}

function lowerCase(token: string): string {
  if (/^[\x00-\x7f]*$/.test(token)) return token.toLowerCase();
  let out = '';
  for (const ch of token) out += String.fromCodePoint(ch.toLowerCase().codePointAt(0)!);
  return out;
}

function stripPossessive(t: string): string {
  const n = t.length;
  if (n >= 2 && t.charCodeAt(n - 1) === 115 /* s */) {
    const q = t.charCodeAt(n - 2);
    if (q === 0x27 || q === 0x2019 || q === 0xff07) return t.slice(0, n - 2);
  }
  return t;
}
