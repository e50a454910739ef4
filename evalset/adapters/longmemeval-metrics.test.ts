import { describe, expect, it } from 'vitest';
import { longMemEvalDcg, ndcgAny, officialTurnToSession, recallAll, recallAny, turnToSession } from './longmemeval-metrics.js';

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

  it('official turn to session: an answer session splits in two, its relevant turns and the others (noans)', () => {
    const t = (session: string, relevant = false) => ({ session, relevant });
    // a1 a1(no answer) f a2: their ids answer_1, noans_1, f, answer_2 -> 3 distinct sessions by rank 3.
    const ranked = [t('a1', true), t('a1'), t('f'), t('a2', true)];
    const r3 = officialTurnToSession(ranked, new Set(['a1', 'a2']), 2, 3);
    expect(r3.effectiveK).toBe(3);
    expect([r3.recallAny, r3.recallAll]).toEqual([1, 0]);
    // gains [1,0,0], ideal [1,1]: 1 / 2.
    expect(r3.ndcgAny).toBe(0.5);
    // Merged into one session a1 (a plain turn -> session map), k = 3 would widen to rank 4 and find a2.
    const merged = turnToSession(['a1_1', 'a1_2', 'f_1', 'a2_1'], (id) => id.split('_')[0]!, new Set(['a1', 'a2']), ['a1', 'a1', 'f', 'a2'], 3);
    expect([merged.effectiveK, merged.recallAll]).toEqual([4, 1]);
  });

  it('official turn to session: past the end of the ranking, every retrieved turn counts and the ideal list is every relevant turn', () => {
    const t = (session: string, relevant = false) => ({ session, relevant });
    const r = officialTurnToSession([t('f'), t('a1', true), t('f')], new Set(['a1', 'a2']), 3, 5);
    expect(r.effectiveK).toBe(Number.POSITIVE_INFINITY);
    expect([r.recallAny, r.recallAll]).toEqual([1, 0]);
    // gains [0,1,0]: DCG 1; ideal three relevant turns: 1 + 1 + 1/log2(3).
    expect(r.ndcgAny).toBeCloseTo(1 / (2 + 1 / Math.log2(3)), 15);
    // Nothing relevant: their any([]) 0, all([]) 1, ndcg 0.
    expect(officialTurnToSession([t('f')], new Set(), 0, 1)).toEqual({ recallAny: 0, recallAll: 1, ndcgAny: 0, effectiveK: 1 });
  });
});
