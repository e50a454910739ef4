import { describe, expect, it } from 'vitest';
import { createAnalyzer } from './analyzer.js';
import { ENGLISH_V1_STOP_WORDS } from './english-stopwords.js';
import { bm25Arm } from './index.js';

/** The v1 hybrid provider's BM25 (docs/adr/0024-reference-recipes.md) as bm25 params. */
const V1 = { preset: 'simple', k1: 1.2, b: 0.75, lossyNorms: false, stopwords: 'english-v1', minTokenLength: 2, scale: 'query-max' } as const;

describe('bm25: the v1 variant', () => {
  it('lower-cases, splits on non-alphanumerics, drops 150+ English stop words and 1-character tokens', () => {
    expect(ENGLISH_V1_STOP_WORDS.size).toBeGreaterThanOrEqual(150);
    const a = createAnalyzer({ tokenizer: 'simple', possessive: false, stopwords: 'english-v1', stemmer: 'none', minTokenLength: 2 });
    expect(a.terms("I don't think Caroline's X-ray was THE 2nd one, x 42!")).toEqual(['think', 'caroline', 'ray', '2nd', 'one', '42']);
  });

  it('divides each query score by the query max: same ranking, top hit 1', async () => {
    const corpus = [
      { id: 'a', text: 'adoption agency adoption' },
      { id: 'b', text: 'adoption of a dog' },
      { id: 'c', text: 'painting a sunrise by the lake' },
    ];
    const q = { id: 'q', text: 'adoption agency', stratum: 's' };
    const raw = bm25Arm.create('raw', bm25Arm.params.parse({ ...V1, scale: 'none' }), undefined as never);
    const scaled = bm25Arm.create('v1', bm25Arm.params.parse(V1), undefined as never);
    await raw.index(corpus);
    await scaled.index(corpus);
    const r = await raw.search(q, 10);
    const s = await scaled.search(q, 10);
    expect(s.map((h) => h.docId)).toEqual(r.map((h) => h.docId));
    expect(s[0]!.score).toBe(1);
    expect(s[1]!.score).toBeCloseTo(r[1]!.score / r[0]!.score, 12);
  });

  it('keeps the fingerprint of every earlier bm25 config, and changes it for the new params', () => {
    const plain = bm25Arm.fingerprint(bm25Arm.params.parse({}));
    expect(plain).not.toHaveProperty('minTokenLength');
    expect(plain).not.toHaveProperty('scale');
    expect(bm25Arm.fingerprint(bm25Arm.params.parse(V1))).toMatchObject({ minTokenLength: 2, scale: 'query-max', stopwords: 'english-v1' });
  });
});
