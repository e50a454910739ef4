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
  tokenize(text: string, emit: TokenSink): void;
  term(token: string): string | null;
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
  const memo = new Map<string, string | null>();
  const stop = opts.stopwords === 'lucene' ? LUCENE_ENGLISH_STOP_WORDS : opts.stopwords === 'english-v1' ? ENGLISH_V1_STOP_WORDS : undefined;
  const minLength = Math.max(1, opts.minTokenLength ?? 1);
  const stem = opts.stemmer === 'porter';
  const toTerm = (token: string): string | null => {
    let t = lowerCase(token);
    if (opts.possessive) t = stripPossessive(t);
    if (t.length < minLength || stop?.has(t) === true) return null;
    return stem ? porterStem(t) : t;
  };
  const term = (token: string): string | null => {
    let t = memo.get(token);
    if (t === undefined) {
      t = toTerm(token);
      memo.set(token, t);
    }
    return t;
  };
  const tokenize = opts.tokenizer === 'standard' ? standardTokenize : simpleTokenize;
  return {
    tokenize,
    term,
    terms(text) {
      const out: string[] = [];
      tokenize(text, (start, end) => {
        const t = term(text.slice(start, end));
        if (t !== null) out.push(t);
      });
      return out;
    },
  };
}

const RE_SIMPLE = /[\p{L}\p{N}]+/gu;

function simpleTokenize(text: string, emit: TokenSink): void {
  for (const m of text.matchAll(RE_SIMPLE)) emit(m.index, m.index + m[0].length);
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
