import { beforeAll, describe, expect, it } from 'vitest';
import { createAnalyzer, type Analyzer } from './analyzer.js';
import { InvertedIndex, type Pruning, type SearchCounter } from './inverted-index.js';
import { syntheticCorpus } from './synthetic-corpus.js';
import { fieldText } from './index.js';
import type { EvalSet } from '../../evalset/types.js';
import { loadBeir } from '../../evalset/beir.js';
import { describeShared, sharedPath } from '../../harness/testing/shared.js';

/**
 * Dynamic pruning must never change a ranking: for every query and every topK, WAND and block-max WAND return
 * the same documents, in the same order, with bit-identical scores as exhaustive scoring (ADR 0012).
 */
const MODES: readonly Pruning[] = ['wand', 'block-max-wand'];
const TOP_KS = [1, 10, 100, 1000];
const lucene = (): Analyzer => createAnalyzer({ tokenizer: 'standard', possessive: true, stopwords: 'lucene', stemmer: 'porter' });

/** Every (query, topK) whose pruned hits differ from the exhaustive ones, and the documents each mode scored. */
function compare(index: InvertedIndex, queries: readonly (readonly string[])[]) {
  const mismatches: string[] = [];
  const scored: Record<Pruning, SearchCounter> = { none: { scored: 0 }, wand: { scored: 0 }, 'block-max-wand': { scored: 0 } };
  let hits = 0;
  queries.forEach((terms, q) => {
    for (const topK of TOP_KS) {
      const exact = index.search(terms, topK, 'none', scored.none);
      hits += exact.length;
      for (const mode of MODES) {
        const pruned = index.search(terms, topK, mode, scored[mode]);
        const same = pruned.length === exact.length && pruned.every((h, i) => h.doc === exact[i]!.doc && h.score === exact[i]!.score);
        if (!same) mismatches.push(`query ${q} topK ${topK} ${mode}`);
      }
    }
  });
  return { mismatches, scored, hits };
}

describe('pruned rankings equal exhaustive ones (synthetic Zipfian corpora)', () => {
  it('on 20,000 documents with 300 queries, with and without a stop word, at topK 1 to 1000', () => {
    const analyzer = lucene();
    const { docs, queries, stopQueries } = syntheticCorpus({ documents: 20_000, queries: 300 });
    const index = new InvertedIndex(
      docs.map((d) => d.text),
      analyzer,
      { k1: 0.9, b: 0.4, lossyNorms: true },
    );
    const terms = [...queries, ...stopQueries].map((q) => analyzer.terms(q.text));
    const { mismatches, scored, hits } = compare(index, terms);
    expect(mismatches).toEqual([]);
    expect(hits).toBeGreaterThan(600 * (1 + 10 + 100));
    // The test is not vacuous: pruning skipped most documents; block-max WAND at least as many as WAND.
    expect(scored.wand.scored).toBeLessThan(scored.none.scored / 2);
    expect(scored['block-max-wand'].scored).toBeLessThanOrEqual(scored.wand.scored);
  });

  it('where every score is tied many times over (each document indexed 5 times, exact and lossy lengths)', () => {
    // Duplicates put runs of equal scores across the k-th place: the earlier document must win there in every mode.
    const analyzer = createAnalyzer({ tokenizer: 'simple', possessive: false, stopwords: 'none', stemmer: 'none' });
    const { docs, queries } = syntheticCorpus({ documents: 2_000, queries: 200, vocabulary: 3_000, seed: 7 });
    const texts = docs.flatMap((d) => [d.text, d.text, d.text, d.text, d.text]);
    for (const lossyNorms of [true, false]) {
      const index = new InvertedIndex(texts, analyzer, { k1: 1.2, b: 0.75, lossyNorms });
      const { mismatches, scored } = compare(
        index,
        queries.map((q) => analyzer.terms(q.text)),
      );
      expect(mismatches).toEqual([]);
      expect(scored['block-max-wand'].scored).toBeLessThan(scored.none.scored);
    }
  });

  it('with term frequencies of 255 and more (kept exactly beside the packed postings)', () => {
    const analyzer = createAnalyzer({ tokenizer: 'simple', possessive: false, stopwords: 'none', stemmer: 'none' });
    // Document d repeats z (d * 7) % 600 + 1 times, so about half the z postings have tf >= 255; y and w vary less.
    const texts = Array.from({ length: 3_000 }, (_, d) => `${'z '.repeat(((d * 7) % 600) + 1)}${'y '.repeat((d % 5) + 1)}${d % 3 === 0 ? 'w' : 'v'}`);
    const index = new InvertedIndex(texts, analyzer, { k1: 0.9, b: 0.4, lossyNorms: false });
    const { mismatches, scored } = compare(index, [['z'], ['z', 'y'], ['y', 'z', 'w'], ['w', 'z']]);
    expect(mismatches).toEqual([]);
    expect(scored['block-max-wand'].scored).toBeLessThan(scored.none.scored);
    // For z alone the best are the documents with 600 z's (the same length, so tied): the earliest wins.
    expect(index.search(['z'], 1)[0]!.doc).toBe(texts.findIndex((t) => t.startsWith('z '.repeat(600))));
  });

  it('at the edges of the parameters: k1 = 0 (scores are idf alone), b = 0 and b = 1, repeated query terms', () => {
    const analyzer = lucene();
    const { docs, queries } = syntheticCorpus({ documents: 3_000, queries: 100, seed: 11 });
    const terms = queries.map((q) => analyzer.terms(q.text)).map((t, i) => (i % 3 === 0 ? [...t, t[0]!, t[0]!] : t));
    for (const [k1, b] of [
      [0, 0.4],
      [0.9, 0],
      [0.9, 1],
      [3, 0.5],
    ] as const) {
      const index = new InvertedIndex(
        docs.map((d) => d.text),
        analyzer,
        { k1, b, lossyNorms: true },
      );
      expect(compare(index, terms).mismatches).toEqual([]);
    }
  });
});

describeShared('pruned rankings equal exhaustive ones (NFCorpus)', ['data/nfcorpus/corpus/human.jsonl', 'data/nfcorpus/qrels/test.tsv'], () => {
  let set: EvalSet;
  beforeAll(async () => {
    set = await loadBeir(sharedPath('data', 'nfcorpus'), { split: 'test' });
  });

  it('for all 323 test queries at topK 1 to 1000, as the arm indexes it (lucene preset, flat fields)', () => {
    const analyzer = lucene();
    const index = new InvertedIndex(
      set.documents.map((d) => fieldText(d, 'flat')),
      analyzer,
      { k1: 0.9, b: 0.4, lossyNorms: true },
    );
    const { mismatches, scored } = compare(
      index,
      set.queries.map((q) => analyzer.terms(q.text)),
    );
    expect(mismatches).toEqual([]);
    expect(scored['block-max-wand'].scored).toBeLessThan(scored.none.scored);
  });
});
