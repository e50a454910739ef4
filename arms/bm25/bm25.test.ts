import { describe, expect, it } from 'vitest';
import { anseriniTieAdjusted, bm25Arm } from './index.js';
import type { ArmContext } from '../types.js';
import type { Document } from '../../evalset/types.js';
import { ContentStore } from '../../harness/cache/index.js';
import { stderrLogger } from '../../harness/log.js';
import { lengthToNormByte, normByteToLength } from './small-float.js';
import { tempDir } from '../../harness/testing/temp.js';
import { join } from 'node:path';

const dir = tempDir('harness-bm25');
const ctx: ArmContext = { cache: new ContentStore(join(dir, 'cache')), log: stderrLogger({ quiet: true }), workDir: join(dir, 'work'), env: {} };

async function armOver(docs: Document[], params: Record<string, unknown> = {}) {
  const arm = bm25Arm.create('t', bm25Arm.params.parse(params), ctx);
  const stats = await arm.index(docs);
  const search = (text: string, topK = 10) => arm.search({ id: 'q', text, stratum: 'all' }, topK);
  return { arm, stats, search };
}

// Four documents, simple preset (no stop words, no stemming), exact lengths:
//   d1 "apple banana apple" (dl 3), d2 "banana cherry" (dl 2), d3 "cherry cherry cherry date" (dl 4), d4 "egg" (dl 1)
// N = 4, avgdl = 10 / 4 = 2.5, k1 = 0.9, b = 0.4. Lucene's BM25: idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)).
const FOUR: Document[] = [
  { id: 'd1', text: 'apple banana apple' },
  { id: 'd2', text: 'banana cherry' },
  { id: 'd3', text: 'cherry cherry cherry date' },
  { id: 'd4', text: 'egg' },
];
const EXACT = { preset: 'simple', lossyNorms: false };

describe('bm25 scoring (hand-derived)', () => {
  it('scores one term: apple in d1', async () => {
    const { search, stats } = await armOver(FOUR, EXACT);
    expect(stats).toEqual({ documents: 4, terms: 5, postings: 7, tokens: 10 });
    // idf(apple) = ln(1 + (4 - 1 + 0.5) / (1 + 0.5)) = ln(3.3333) = 1.2039728
    // d1: tf 2, K = 0.9 * (0.6 + 0.4 * 3 / 2.5) = 0.972; tf part = 2 / 2.972 = 0.6729475
    // score = 1.2039728 * 0.6729475 = 0.8102106
    const hits = await search('apple');
    expect(hits.map((h) => h.docId)).toEqual(['d1']);
    expect(hits[0]!.score).toBeCloseTo(0.8102106, 5);
  });

  it('sums two terms and ranks by the sum', async () => {
    const { search } = await armOver(FOUR, EXACT);
    // idf(banana) = idf(cherry) = ln(1 + 2.5 / 2.5) = ln 2 = 0.6931472
    // d2 (dl 2): K = 0.9 * (0.6 + 0.4 * 2 / 2.5) = 0.828; each term 0.6931472 / 1.828 = 0.3791834; sum 0.7583668
    // d3 (dl 4): K = 0.9 * (0.6 + 0.4 * 4 / 2.5) = 1.116; cherry tf 3: 0.6931472 * 3 / 4.116 = 0.5052093
    // d1 (dl 3): K = 0.972; banana tf 1: 0.6931472 / 1.972 = 0.3514945
    const hits = await search('banana cherry');
    expect(hits.map((h) => h.docId)).toEqual(['d2', 'd3', 'd1']);
    expect(hits.map((h) => h.score)).toEqual([expect.closeTo(0.7583668, 5), expect.closeTo(0.5052093, 5), expect.closeTo(0.3514945, 5)]);
  });

  it('counts a repeated query term once per repetition (Lucene sums the boosts of duplicate clauses)', async () => {
    const { search } = await armOver(FOUR, EXACT);
    const once = await search('apple');
    const twice = await search('apple apple');
    expect(twice[0]!.score).toBeCloseTo(2 * once[0]!.score, 5);
  });

  it('rounds document length through Lucene norm bytes when lossyNorms is on', async () => {
    // d1: "a" + 46 x "z" = 47 tokens, d2: "b" = 1 token; N = 2, avgdl = 48 / 2 = 24; idf(a) = ln(1 + 1.5 / 1.5) = ln 2.
    // 47 encodes to byte 43, which decodes to 46 (see small-float test), so
    // lossy: K = 0.9 * (0.6 + 0.4 * 46 / 24) = 1.23,  score = ln 2 / 2.23  = 0.3108284
    // exact: K = 0.9 * (0.6 + 0.4 * 47 / 24) = 1.245, score = ln 2 / 2.245 = 0.3087515
    const docs = [
      { id: 'long', text: `a${' z'.repeat(46)}` },
      { id: 'short', text: 'b' },
    ];
    const lossy = await armOver(docs, { preset: 'simple', lossyNorms: true });
    const exact = await armOver(docs, { preset: 'simple', lossyNorms: false });
    expect((await lossy.search('a'))[0]!.score).toBeCloseTo(0.3108284, 5);
    expect((await exact.search('a'))[0]!.score).toBeCloseTo(0.3087515, 5);
  });

  it('keeps term frequencies of 255 and more exact (they bypass the packed index buffer)', async () => {
    // d1: 300 x "z" + "y" (dl 301), d2: "y" (dl 1); N = 2, avgdl = 302 / 2 = 151; idf(z) = ln(1 + 1.5 / 1.5) = ln 2.
    // K = 0.9 * (0.6 + 0.4 * 301 / 151) = 1.2576159; score = ln 2 * 300 / (300 + K) = 0.6902536
    const { search } = await armOver(
      [
        { id: 'd1', text: `${'z '.repeat(300)}y` },
        { id: 'd2', text: 'y' },
      ],
      EXACT,
    );
    expect((await search('z'))[0]!.score).toBeCloseTo((Math.LN2 * 300) / (300 + 0.9 * (0.6 + (0.4 * 301) / 151)), 5);
  });

  it('keeps the earlier-indexed document when a tie straddles topK, and returns ties with equal scores', async () => {
    const docs = [
      { id: 'z-first', text: 'same words here' },
      { id: 'a-second', text: 'same words here' },
      { id: 'other', text: 'nothing alike' },
    ];
    const { search } = await armOver(docs, EXACT);
    const top1 = await search('words', 1);
    expect(top1.map((h) => h.docId)).toEqual(['z-first']);
    const top2 = await search('words', 2);
    expect(top2.map((h) => h.docId).sort()).toEqual(['a-second', 'z-first']);
    expect(top2[0]!.score).toBe(top2[1]!.score);
  });

  it('returns only matching documents when topK exceeds the corpus, and nothing for topK 0', async () => {
    const { search } = await armOver(FOUR, EXACT);
    // cherry alone: d3 0.5052093 > d2 0.3791834 (figures above); d1 and d4 do not contain it.
    expect((await search('cherry', 1000)).map((h) => h.docId)).toEqual(['d3', 'd2']);
    expect(await search('cherry', 0)).toEqual([]);
  });

  it('returns nothing, without error, for an empty query, unknown words or only stop words', async () => {
    const { search } = await armOver([{ id: 'd', text: 'the cat sat on the mat' }]);
    expect(await search('')).toEqual([]);
    expect(await search('   ?!  ')).toEqual([]);
    expect(await search('zebra')).toEqual([]);
    expect(await search('the of and is')).toEqual([]);
  });

  it('indexes the title with the text in the flat layout, and only the text otherwise', async () => {
    const docs = [{ id: 'd', title: 'Quantum', text: 'mechanics' }];
    expect(await (await armOver(docs)).search('quantum')).toHaveLength(1);
    expect(await (await armOver(docs, { fields: 'text' })).search('quantum')).toEqual([]);
  });

  it('stems and drops stop words with the lucene preset, not with simple', async () => {
    const docs = [{ id: 'd', text: "The runner's shoes were running" }];
    const lucene = await armOver(docs);
    expect(lucene.stats['tokens']).toBe(4); // runner, shoe, were, run ("the" is a stop word)
    expect(await lucene.search('run')).toHaveLength(1);
    const simple = await armOver(docs, { preset: 'simple' });
    expect(simple.stats['tokens']).toBe(6); // the, runner, s, shoes, were, running
    expect(await simple.search('run')).toEqual([]);
  });

  it('throws when searched before indexing', async () => {
    const arm = bm25Arm.create('t', bm25Arm.params.parse({}), ctx);
    await expect(arm.search({ id: 'q', text: 'x', stratum: 'all' }, 10)).rejects.toThrow(/before index/);
  });
});

describe('Anserini tie adjustment', () => {
  it('rounds to 4 decimals and steps tied scores down by 1e-6 (the example in ScoreTiesAdjusterReranker)', () => {
    const f = Math.fround;
    const out = anseriniTieAdjusted([f(23.439316), f(22.087432), f(22.087432), f(22.087432), f(21.602508)]);
    expect(out).toEqual([f(23.4393), f(22.0874), f(f(22.0874) - f(1e-6)), f(f(22.0874) - f(f(1e-6) * 2)), f(21.6025)]);
  });

  it('leaves a list sorted by score sorted, with distinct scores for ties', async () => {
    const docs = [
      { id: 'x1', text: 'same words' },
      { id: 'x2', text: 'same words' },
      { id: 'x3', text: 'same words' },
    ];
    const { search } = await armOver(docs, { scoreTies: 'anserini' });
    const hits = await search('words');
    // Index order among ties, and strictly decreasing scores so any later sort by score keeps it.
    expect(hits.map((h) => h.docId)).toEqual(['x1', 'x2', 'x3']);
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
    expect(hits[1]!.score).toBeGreaterThan(hits[2]!.score);
  });
});

describe('bm25 params and identity', () => {
  it('defaults to the Pyserini BEIR baseline settings', () => {
    expect(bm25Arm.params.parse({})).toEqual({ preset: 'lucene', k1: 0.9, b: 0.4, lossyNorms: true, fields: 'flat', scoreTies: 'keep', pruning: 'none' });
  });

  it('rejects unknown keys and out-of-range values', () => {
    expect(bm25Arm.params.safeParse({ k: 1 }).success).toBe(false);
    expect(bm25Arm.params.safeParse({ b: 1.5 }).success).toBe(false);
    expect(bm25Arm.params.safeParse({ k1: -1 }).success).toBe(false);
    expect(bm25Arm.params.safeParse({ preset: 'english' }).success).toBe(false);
  });

  it('fingerprints every setting that changes scores, with the resolved analyzer', () => {
    const fp = (p: Record<string, unknown>) => JSON.stringify(bm25Arm.fingerprint(bm25Arm.params.parse(p)));
    const base = fp({});
    for (const change of [
      { k1: 1.2 },
      { b: 0.75 },
      { lossyNorms: false },
      { fields: 'text' },
      { scoreTies: 'anserini' },
      { preset: 'simple' },
      { stemmer: 'none' },
      { stopwords: 'none' },
    ]) {
      expect(fp(change)).not.toBe(base);
    }
    // An override equal to what the preset already does is the same arm.
    expect(fp({ stemmer: 'porter', stopwords: 'lucene' })).toBe(base);
    // Pruning never changes a hit (pruning.test.ts), so every setting is the same arm and shares its cache.
    for (const pruning of ['none', 'wand', 'block-max-wand']) expect(fp({ pruning })).toBe(base);
    expect(base).toContain('"v":1');
  });

  it('exposes a theoretical minimum score of 0', () => {
    expect(bm25Arm.theoreticalMinScore(bm25Arm.params.parse({}))).toBe(0);
  });
});

describe('Lucene one-byte length norms', () => {
  it('stores lengths below 40 exactly', () => {
    for (const n of [0, 1, 23, 24, 31, 39]) expect(normByteToLength(lengthToNormByte(n))).toBe(n);
  });

  it('rounds larger lengths down to a 4-bit mantissa', () => {
    // 47 - 24 = 23 = 0b10111: 5 bits, shift 1, mantissa bits (23 >> 1) & 7 = 3, code 3 | (1 + 1) << 3 = 19 -> byte 43;
    // decode: (3 | 8) << 1 = 22 -> 24 + 22 = 46.
    expect(lengthToNormByte(47)).toBe(43);
    expect(normByteToLength(43)).toBe(46);
    // 100 - 24 = 76 = 0b1001100: 7 bits, shift 3, (76 >> 3) & 7 = 1, code 1 | 4 << 3 = 33 -> byte 57; (1 | 8) << 3 = 72 -> 96.
    expect(lengthToNormByte(100)).toBe(57);
    expect(normByteToLength(57)).toBe(96);
    // The largest int: 2^31 - 1 -> byte 255, which decodes to 24 + 15 * 2^27.
    expect(lengthToNormByte(2 ** 31 - 1)).toBe(255);
    expect(normByteToLength(255)).toBe(24 + 15 * 2 ** 27);
  });

  it('decodes to a value not above the length, monotonically', () => {
    let prev = -1;
    for (let n = 0; n < 5000; n++) {
      const d = normByteToLength(lengthToNormByte(n));
      expect(d).toBeLessThanOrEqual(n);
      expect(d).toBeGreaterThanOrEqual(prev);
      prev = d;
    }
  });
});
