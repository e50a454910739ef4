import { describe, expect, it } from 'vitest';
import { createAnalyzer, type AnalyzerOptions } from './analyzer.js';
import { TermScanner } from './term-scanner.js';
import { ForwardBuffer } from './forward-buffer.js';
import { fieldText } from './index.js';
import { loadBeir } from '../../evalset/beir.js';
import { createRng } from '../../harness/stats/rng.js';
import { describeShared, sharedPath } from '../../harness/testing/shared.js';

/**
 * The scanner's ASCII fast path must give exactly the analyzer's terms (its reference path: tokenize, then
 * `term` per token) on every input, in order, texts after texts (the surface table carries over between them).
 */
const CONFIGS: Record<string, AnalyzerOptions> = {
  lucene: { tokenizer: 'standard', possessive: true, stopwords: 'lucene', stemmer: 'porter' },
  'v1 variant': { tokenizer: 'standard', possessive: true, stopwords: 'english-v1', stemmer: 'porter', minTokenLength: 2 },
  simple: { tokenizer: 'simple', possessive: false, stopwords: 'none', stemmer: 'none' },
};

function mismatches(opts: AnalyzerOptions, texts: readonly string[]): string[] {
  const reference = createAnalyzer(opts);
  const scanner = new TermScanner(createAnalyzer(opts));
  const out: string[] = [];
  let terms: string[] = [];
  for (const text of texts) {
    const n = scanner.scan(text);
    if (terms.length < scanner.vocabulary.size) terms = [...scanner.vocabulary.keys()];
    const got = Array.from(scanner.ids.subarray(0, n), (id) => terms[id]!);
    const want = reference.terms(text);
    if (got.length !== want.length || got.some((t, i) => t !== want[i])) out.push(JSON.stringify(text));
  }
  return out;
}

/** Pieces of biomedical English as NFCorpus has them: capitals, numbers, units, possessives, Greek, dashes. */
const PIECES = [
  'Effects',
  'of',
  'THE',
  "patients'",
  "women's",
  'Women\u2019s',
  'don\u2019t',
  "isn't",
  '3.5',
  'mg/kg',
  '1,000',
  '0.05;',
  'p<0.05',
  'U.S.A.',
  'e.g.',
  'i.e.,',
  'IL-6',
  'β-carotene',
  'ω-3',
  'naïve',
  'cafe\u0301',
  'co\u00adoperate',
  '25(OH)D',
  'CO2',
  'n=1,024',
  '95%',
  'CI:',
  'a:b',
  'x:1',
  'foo_bar',
  '___',
  '_x',
  'v1.2.3',
  'h2o.',
  'end.',
  'Fig.2',
  '10.1016/j.x',
  'ratio,',
  'ratio;and',
  '3.a',
  'a.3',
  "'quoted'",
  '"double"',
  '(parenthesised)',
  '—',
  '–',
  '…',
  '東京',
  'カタカナ',
  'ไทย',
  '\u2764\ufe0f',
  '\u{1F355}',
  '©',
  '\u{1D400}bold',
  'x'.repeat(300),
  '9'.repeat(260),
  "it's",
  "IT'S",
  'running',
  'generalizations',
  'oscillators',
];
const SEPARATORS = [' ', ' ', ' ', '\n', ', ', '. ', '-', '/', '', '\t', ' (', ') ', '\u00a0', '\u200b'];

describe('TermScanner: the ASCII fast path gives the analyzer reference terms', () => {
  it('on NFCorpus-like text assembled from tricky pieces', () => {
    const rng = createRng(11);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng.nextFloat() * xs.length)]!;
    const texts: string[] = [];
    for (let t = 0; t < 3_000; t++) {
      let text = '';
      const n = 1 + Math.floor(rng.nextFloat() * 30);
      for (let i = 0; i < n; i++) text += pick(PIECES) + pick(SEPARATORS);
      texts.push(rng.nextFloat() < 0.5 ? text : text.trimEnd());
    }
    for (const [name, opts] of Object.entries(CONFIGS)) expect(mismatches(opts, texts), name).toEqual([]);
  });

  it('on random strings over ASCII, separators, marks, surrogates (paired and lone) and other scripts', () => {
    const rng = createRng(12);
    const alphabet = [
      ...'abcXYZ019',
      ...".:',;_ -/",
      '\u00e9',
      '\u0301',
      '\u00ad',
      '\u200d',
      '\u2019',
      '\uff0e',
      '\u0660',
      '\u6f22',
      '\u30ab',
      '\u0e01',
      '\u{1F600}',
      '\u{1F3FB}',
      '\ud800',
      '\udc00',
      '\u2764',
      '\ufe0f',
    ];
    const texts: string[] = [];
    for (let t = 0; t < 20_000; t++) {
      let text = '';
      const n = Math.floor(rng.nextFloat() * 24);
      for (let i = 0; i < n; i++) text += alphabet[Math.floor(rng.nextFloat() * alphabet.length)]!;
      texts.push(text);
    }
    for (const [name, opts] of Object.entries(CONFIGS)) expect(mismatches(opts, texts), name).toEqual([]);
  });
});

describeShared('TermScanner on NFCorpus', ['data/nfcorpus'], () => {
  it('gives the reference terms for every document (title and text, as the arm indexes them)', async () => {
    const set = await loadBeir(sharedPath('data', 'nfcorpus'), { split: 'test' });
    const texts = set.documents.map((d) => fieldText(d, 'flat'));
    for (const [name, opts] of Object.entries(CONFIGS)) expect(mismatches(opts, texts), name).toEqual([]);
  });
});

describe('ForwardBuffer', () => {
  it('reads back every (term, tf) pushed, across chunks and varint lengths', () => {
    const rng = createRng(13);
    const buffer = new ForwardBuffer();
    const pushed: [number, number][] = [];
    // Enough postings to fill several 1 MB chunks; term ids and tfs of 1 to 5 varint bytes.
    for (let i = 0; i < 1_500_000; i++) {
      const term = Math.floor(2 ** (rng.nextFloat() * 31));
      const tf = rng.nextFloat() < 0.7 ? 1 : Math.floor(2 ** (rng.nextFloat() * 31));
      buffer.push(term, tf);
      pushed.push([term, tf]);
    }
    expect(buffer.length).toBe(pushed.length);
    const reader = buffer.reader();
    let wrong = 0;
    for (const [term, tf] of pushed) {
      reader.next();
      if (reader.term !== term || reader.tf !== tf) wrong++;
    }
    expect(wrong).toBe(0);
  });
});
