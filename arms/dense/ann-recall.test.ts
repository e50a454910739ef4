import { describe, expect, it } from 'vitest';
import { QueryRecall, recallDepths } from './ann-recall.js';

describe('QueryRecall: ANN recall on the eval queries', () => {
  it('records the usual depths below the run topK and topK itself', () => {
    expect(recallDepths(100)).toEqual([5, 10, 20, 30, 50, 100]);
    expect(recallDepths(7)).toEqual([5, 7]);
    expect(recallDepths(1000)).toEqual([5, 10, 20, 30, 50, 100, 200, 500, 1000]);
  });

  it('counts returned rows scoring at least the exact k-th score: a row tied at the cut is found, a lower one is not', () => {
    const r = new QueryRecall(10);
    r.reset();
    // The exact 5th and 6th rows tie at 0.5 and the index returned one of them 5th: found either way. Its last
    // two rows (0.3, 0.2) are below the exact 10th (0.42): lost.
    const exact = [0.9, 0.8, 0.7, 0.6, 0.5, 0.5, 0.45, 0.44, 0.43, 0.42];
    r.add(10, exact, [0.9, 0.8, 0.7, 0.6, 0.5, 0.45, 0.44, 0.43, 0.3, 0.2]);
    // Within float32 rounding of the exact 5th: tied; 1e-5 below it: not.
    r.add(5, [0.9, 0.8, 0.7, 0.6, 0.5], [0.9, 0.8, 0.7, 0.6, 0.5 - 1e-7]);
    r.add(5, [0.9, 0.8, 0.7, 0.6, 0.5], [0.9, 0.8, 0.7, 0.6, 0.5 - 1e-5]);
    const s = r.stats();
    expect([s['annQueryFound@5'], s['annQueryExact@5']]).toEqual([14, 15]);
    expect([s['annQueryFound@10'], s['annQueryExact@10']]).toEqual([8, 10]);
    expect(s['annQueries']).toBe(3);
    expect(r.summary()).toBe('recall@5 0.933, recall@10 0.800');
  });

  it('an index that returns fewer rows than asked (ef_search below the LIMIT) loses the rest; a corpus smaller than k caps the exact count', () => {
    const r = new QueryRecall(10);
    r.reset();
    r.add(
      100,
      Array.from({ length: 40 }, (_, i) => 1 - i / 100),
      Array.from({ length: 10 }, (_, i) => 1 - i / 100),
    );
    const s = r.stats();
    expect([s['annQueryFound@10'], s['annQueryExact@10']]).toEqual([10, 10]);
    expect([s['annQueryFound@100'], s['annQueryExact@100']]).toEqual([10, 40]);
    expect([s['annQueryFound@50'], s['annQueryExact@50']]).toEqual([10, 40]);
  });

  it('measures the scope queries evenly spaced up to the limit, each once; without them the first searches; reset clears', () => {
    const r = new QueryRecall(3);
    r.reset(Array.from({ length: 9 }, (_, i) => ({ id: `q${i}` })));
    expect(Array.from({ length: 9 }, (_, i) => r.wants(`q${i}`))).toEqual([true, false, false, true, false, false, true, false, false]);
    r.add(10, [1], [1]);
    expect(r.stats()['annQueries']).toBe(1);
    r.reset();
    expect(r.stats()).toEqual({});
    expect(['a', 'b', 'c', 'd'].map((q) => r.wants(q))).toEqual([true, true, true, false]);
  });
});
