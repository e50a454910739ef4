import { describe, expect, it } from 'vitest';
import { parseTrecQrels, parseTrecRun } from '../../evalset/trec.js';
import { evaluate, relevanceLevelProblem } from './evaluate.js';
import { parseMeasure } from './measure.js';

const QRELS = parseTrecQrels('q1 0 a 3\nq1 0 b 1\nq2 0 c 2\nq2 0 d -1\n', 'q');

describe('relevanceLevelProblem', () => {
  it('is silent for a level some grade reaches', () => {
    for (const level of [0, 1, 2, 3]) expect(relevanceLevelProblem(QRELS, level)).toBeUndefined();
  });
  it('names the highest grade and the measures a level above it zeroes', () => {
    // Why it matters: at level 9 nothing is relevant, and these measures are 0 for every query.
    const run = parseTrecRun('q1 Q0 a 1 2 r\nq2 Q0 c 1 2 r\n', 'r').run;
    const ev = evaluate(
      QRELS,
      run,
      ['RR', 'AP', 'R@10'].map((m) => parseMeasure(m)),
      { relevanceLevel: 9 },
    );
    for (const m of ['RR', 'AP', 'R@10']) expect([...ev.perQuery.get(m)!.values()]).toEqual([0, 0]);
    expect(relevanceLevelProblem(QRELS, 9)).toBe(
      'relevance level 9 is above the highest grade in the qrels (3): no document is relevant, so every measure that counts relevant ' +
        'documents (AP, RR, P, R, Success, R-all, ...) would be 0 for every query; use a level of 3 or less',
    );
    expect(
      relevanceLevelProblem(
        QRELS,
        4,
        ['nDCG@10', 'MRR', 'R@10', 'Judged@10'].map((m) => parseMeasure(m)),
      ),
    ).toMatch(/so RR, R@10 would be 0 for every query/);
  });
  it('has nothing to say when no measure depends on the level', () => {
    expect(
      relevanceLevelProblem(
        QRELS,
        9,
        ['nDCG@10', 'Judged@10'].map((m) => parseMeasure(m)),
      ),
    ).toBeUndefined();
  });
  it('flags qrels that grade nothing relevant at all, and a level that is not a grade', () => {
    expect(relevanceLevelProblem(parseTrecQrels('q 0 a 0\nq 0 b -1\n', 'q'), 1)).toMatch(
      /highest grade in the qrels \(0\).*these qrels grade no document relevant/,
    );
    expect(relevanceLevelProblem(QRELS, 1.5)).toMatch(/not an integer grade/);
    expect(relevanceLevelProblem(new Map(), 1)).toBeUndefined(); // no judgments: a different error, raised where qrels are read
  });
});
