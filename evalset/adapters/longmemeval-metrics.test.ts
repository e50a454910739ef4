import { describe, expect, it } from 'vitest';
import { longMemEvalDcg, ndcgAny, recallAll, recallAny, turnToSession } from './longmemeval-metrics.js';

const rel = new Set(['a', 'b']);

describe('LongMemEval measures', () => {
  it('recall_any and recall_all', () => {
    expect(recallAny(['x', 'a', 'y', 'b'], rel, 1)).toBe(0);
    expect(recallAny(['x', 'a', 'y', 'b'], rel, 2)).toBe(1);
    expect(recallAll(['x', 'a', 'y', 'b'], rel, 3)).toBe(0);
    expect(recallAll(['x', 'a', 'y', 'b'], rel, 4)).toBe(1);
    // Python all([]) is True, any([]) is False.
    expect(recallAll(['x'], new Set(), 1)).toBe(1);
    expect(recallAny(['x'], new Set(), 1)).toBe(0);
  });

  it('their DCG leaves ranks 1 and 2 undiscounted', () => {
    // [1,1,1]: 1 + 1/log2(2) + 1/log2(3) = 2 + 0.6309297535714575
    expect(longMemEvalDcg([1, 1, 1], 10)).toBeCloseTo(2 + 1 / Math.log2(3), 14);
    // [0,1]: 0 + 1/log2(2) = 1 (trec_eval would give 1/log2(3) = 0.6309)
    expect(longMemEvalDcg([0, 1], 10)).toBe(1);
    expect(longMemEvalDcg([1, 1, 1], 2)).toBe(2);
    expect(longMemEvalDcg([], 5)).toBe(0);
  });

  it('ndcg_any against the ideal list', () => {
    // ranking x a y b, k=10: DCG = 0 + 1/log2(2) + 0 + 1/log2(4) = 1 + 0.5 = 1.5; ideal [1,1] = 2 -> 0.75.
    expect(ndcgAny(['x', 'a', 'y', 'b'], rel, 10)).toBe(0.75);
    // k=2: DCG = 1; ideal [1,1] = 2 -> 0.5.
    expect(ndcgAny(['x', 'a', 'y', 'b'], rel, 2)).toBe(0.5);
    // one of two relevant retrieved at rank 1 but 3 relevant in the corpus: 1 / (1 + 1 + 1/log2(3)).
    expect(ndcgAny(['a'], rel, 10, 3)).toBeCloseTo(1 / (2 + 1 / Math.log2(3)), 14);
    expect(ndcgAny(['x'], new Set(), 10)).toBe(0);
  });

  it('turn-to-session widens k until k distinct sessions', () => {
    const sessionOf = (t: string) => t.split('_')[0]!;
    // ranked turns map to sessions s1 s1 s2 s3; k=2 needs the top 3 turns to cover 2 sessions.
    const r = turnToSession(['s1_1', 's1_3', 's2_1', 's3_1'], sessionOf, new Set(['s2']), ['s1', 's1', 's2', 's3'], 2);
    expect(r.effectiveK).toBe(3);
    expect(r.recallAny).toBe(1);
    expect(r.recallAll).toBe(1);
    // mapped gains [0,0,1]: DCG = 1/log2(3); one relevant corpus item -> ideal [1] = 1.
    expect(r.ndcgAny).toBeCloseTo(1 / Math.log2(3), 15);
  });
});
