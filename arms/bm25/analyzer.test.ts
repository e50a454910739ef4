import { describe, expect, it } from 'vitest';
import { createAnalyzer, LUCENE_ENGLISH_STOP_WORDS } from './analyzer.js';
import { standardTokenize } from './standard-tokenizer.js';
import { porterStem } from './porter-stemmer.js';

const tokens = (text: string): string[] => {
  const out: string[] = [];
  standardTokenize(text, (s, e) => out.push(text.slice(s, e)));
  return out;
};
const lucene = createAnalyzer({ tokenizer: 'standard', possessive: true, stopwords: 'lucene', stemmer: 'porter' });
const noStem = createAnalyzer({ tokenizer: 'standard', possessive: true, stopwords: 'lucene', stemmer: 'none' });

describe('standard tokenizer (UAX #29 word boundaries)', () => {
  it('splits on spaces and punctuation, keeps letters and digits together', () => {
    expect(tokens('Hello, world! (COVID19 & h2o)')).toEqual(['Hello', 'world', 'COVID19', 'h2o']);
  });

  it('joins numbers across . and , but not letters to digits across them', () => {
    expect(tokens('3.5 mg, 1,000 people, 2.5mg; v1.2 a.1')).toEqual(['3.5', 'mg', '1,000', 'people', '2.5mg', 'v1.2', 'a', '1']);
  });

  it('joins letters across apostrophes, periods and colons, not across hyphens or slashes', () => {
    expect(tokens("don't e.g. U.S.A. a:b state-of-the-art and/or")).toEqual(["don't", 'e.g', 'U.S.A', 'a:b', 'state', 'of', 'the', 'art', 'and', 'or']);
  });

  it('does not join at a trailing separator', () => {
    expect(tokens("dogs' end. 5, x:")).toEqual(['dogs', 'end', '5', 'x']);
  });

  it('keeps underscores inside words and drops lone ones', () => {
    expect(tokens('foo_bar ___ _x')).toEqual(['foo_bar', '_x']);
  });

  it('handles accented letters, combining marks, soft hyphens and non-Latin scripts', () => {
    expect(tokens('naïve Straße cafe\u0301 co\u00adoperate αβγ-δ')).toEqual(['naïve', 'Straße', 'cafe\u0301', 'co\u00adoperate', 'αβγ', 'δ']);
    // Each ideograph is a token; a Katakana run is one token.
    expect(tokens('東京 カタカナ')).toEqual(['東', '京', 'カタカナ']);
  });

  it('emits emoji as tokens and skips symbols', () => {
    expect(tokens('I \u2764\ufe0f pizza \u{1F355} © ± 5%')).toEqual(['I', '\u2764\ufe0f', 'pizza', '\u{1F355}', '5']);
  });

  it('splits a token longer than 255 UTF-16 units', () => {
    expect(tokens('a'.repeat(300)).map((t) => t.length)).toEqual([255, 45]);
  });
});

describe('lucene analyzer (EnglishAnalyzer)', () => {
  it("has Lucene's 33 English stop words", () => {
    expect(LUCENE_ENGLISH_STOP_WORDS.size).toBe(33);
    expect(LUCENE_ENGLISH_STOP_WORDS.has('the')).toBe(true);
    // Not in Lucene's list, unlike larger lists (NLTK, SMART):
    expect(LUCENE_ENGLISH_STOP_WORDS.has('he')).toBe(false);
    expect(LUCENE_ENGLISH_STOP_WORDS.has('which')).toBe(false);
  });

  it("drops possessive 's (any apostrophe, any case) before stop filtering", () => {
    expect(noStem.terms("John's JOHN'S John\u2019s it's")).toEqual(['john', 'john', 'john']);
  });

  it('lower-cases per code point like Java', () => {
    expect(noStem.terms('ÉCOLE \u0130stanbul ΟΔΟΣ')).toEqual(['école', 'istanbul', 'οδοσ']);
  });

  it('removes stop words and stems the rest', () => {
    expect(lucene.terms('The cats are running into the houses')).toEqual(['cat', 'run', 'hous']);
  });

  it('keeps numbers and stems digit-letter tokens like Lucene', () => {
    expect(lucene.terms('In the 1990s, 3.5 mg')).toEqual(['1990', '3.5', 'mg']);
  });

  it('returns nothing for stop words only or punctuation only', () => {
    expect(lucene.terms('to be or not to be')).toEqual([]);
    expect(lucene.terms('--- !!! ...')).toEqual([]);
  });

  it('simple tokenizer: letter/digit runs, no possessive rule', () => {
    const simple = createAnalyzer({ tokenizer: 'simple', possessive: false, stopwords: 'none', stemmer: 'none' });
    expect(simple.terms("John's 3.5 e-mail")).toEqual(['john', 's', '3', '5', 'e', 'mail']);
  });
});

describe('Porter stemmer (reference implementation)', () => {
  // Examples from Porter (1980), one or more per rule, with the paper's published outputs.
  const paper: [string, string][] = [
    ['caresses', 'caress'],
    ['ponies', 'poni'],
    ['ties', 'ti'],
    ['caress', 'caress'],
    ['cats', 'cat'],
    ['feed', 'feed'],
    ['agreed', 'agre'],
    ['plastered', 'plaster'],
    ['bled', 'bled'],
    ['motoring', 'motor'],
    ['sing', 'sing'],
    ['conflated', 'conflat'],
    ['troubled', 'troubl'],
    ['sized', 'size'],
    ['hopping', 'hop'],
    ['tanned', 'tan'],
    ['falling', 'fall'],
    ['hissing', 'hiss'],
    ['fizzed', 'fizz'],
    ['failing', 'fail'],
    ['filing', 'file'],
    ['happy', 'happi'],
    ['sky', 'sky'],
    ['relational', 'relat'],
    ['conditional', 'condit'],
    ['rational', 'ration'],
    ['valenci', 'valenc'],
    ['digitizer', 'digit'],
    ['radicalli', 'radic'],
    ['differentli', 'differ'],
    ['vileli', 'vile'],
    ['analogousli', 'analog'],
    ['vietnamization', 'vietnam'],
    ['predication', 'predic'],
    ['operator', 'oper'],
    ['feudalism', 'feudal'],
    ['decisiveness', 'decis'],
    ['hopefulness', 'hope'],
    ['callousness', 'callous'],
    ['formaliti', 'formal'],
    ['sensitiviti', 'sensit'],
    ['sensibiliti', 'sensibl'],
    ['triplicate', 'triplic'],
    ['formative', 'form'],
    ['formalize', 'formal'],
    ['electriciti', 'electr'],
    ['electrical', 'electr'],
    ['hopeful', 'hope'],
    ['goodness', 'good'],
    ['revival', 'reviv'],
    ['allowance', 'allow'],
    ['inference', 'infer'],
    ['airliner', 'airlin'],
    ['gyroscopic', 'gyroscop'],
    ['adjustable', 'adjust'],
    ['defensible', 'defens'],
    ['irritant', 'irrit'],
    ['replacement', 'replac'],
    ['adjustment', 'adjust'],
    ['dependent', 'depend'],
    ['adoption', 'adopt'],
    ['homologou', 'homolog'],
    ['communism', 'commun'],
    ['activate', 'activ'],
    ['angulariti', 'angular'],
    ['homologous', 'homolog'],
    ['effective', 'effect'],
    ['bowdlerize', 'bowdler'],
    ['probate', 'probat'],
    ['rate', 'rate'],
    ['cease', 'ceas'],
    ['controll', 'control'],
    ['roll', 'roll'],
    ['generalizations', 'gener'],
    ['oscillators', 'oscil'],
  ];
  it.each(paper)('%s -> %s', (word, stem) => {
    expect(porterStem(word)).toBe(stem);
  });

  it('follows the reference implementation where it departs from the paper', () => {
    // -bli -> -ble (the paper has -abli -> -able) and the added -logi -> -log.
    expect(porterStem('conformabli')).toBe('conform');
    expect(porterStem('possibli')).toBe('possibl');
    expect(porterStem('archaeology')).toBe('archaeolog');
    // Words of one or two letters are left alone.
    expect(porterStem('is')).toBe('is');
    expect(porterStem('as')).toBe('as');
  });

  it('stems bare suffixes and y-doubled words as the reference does (where the `stemmer` package differs)', () => {
    expect(porterStem('ies')).toBe('i');
    expect(porterStem('sses')).toBe('ss');
    expect(porterStem('eed')).toBe('eed');
    expect(porterStem('flyyed')).toBe('fly');
  });

  it('treats y as a vowel after a consonant and as a consonant at the start or after a vowel', () => {
    expect(porterStem('syzygy')).toBe('syzygi');
    expect(porterStem('yelling')).toBe('yell');
    expect(porterStem('saying')).toBe('sai');
  });
});
