import { describe, expect, it } from 'vitest';
import { assignFolds, tuneByFolds, tuneBySplit } from './tune.js';

const queries = [
  { id: 'q1', stratum: 'exact' },
  { id: 'q2', stratum: 'exact' },
  { id: 'q3', stratum: 'paraphrase' },
  { id: 'q4', stratum: 'paraphrase' },
];

describe('assignFolds', () => {
  it('deals each stratum round-robin, so every fold holds each stratum in proportion', () => {
    const folds = assignFolds(queries, 2, 42);
    expect(folds.slice(0, 2).sort()).toEqual([0, 1]);
    expect(folds.slice(2, 4).sort()).toEqual([0, 1]);
  });

  it('depends on the query ids, strata and seed only, not on the order queries come in', () => {
    const shuffled = [queries[2]!, queries[0]!, queries[3]!, queries[1]!];
    const a = assignFolds(queries, 2, 7);
    const b = assignFolds(shuffled, 2, 7);
    const byId = (qs: typeof queries, f: number[]) => Object.fromEntries(qs.map((q, i) => [q.id, f[i]]));
    expect(byId(shuffled, b)).toEqual(byId(queries, a));
  });
});

describe('tuneByFolds', () => {
  // Member x is best on q1 and q3, y on q2 and q4; on each fold the pick is the member best on the other fold.
  const perQuery = {
    x: { 'nDCG@10': [0.9, 0.1, 0.8, 0.2], RR: [1, 0, 1, 0] },
    y: { 'nDCG@10': [0.2, 0.7, 0.1, 0.6], RR: [0, 1, 0, 1] },
  };

  it('scores each query with the member picked on the folds it is not in, for every measure', () => {
    const t = tuneByFolds('g', ['x', 'y'], perQuery, queries, { measure: 'nDCG@10', folds: 2, seed: 42 });
    const folds = assignFolds(queries, 2, 42);
    expect(t.id).toBe('g.tuned');
    for (const [f, choice] of t.choices.entries()) {
      const train = folds.flatMap((g, i) => (g === f ? [] : [i]));
      const meanOf = (m: 'x' | 'y') => train.reduce((s, i) => s + perQuery[m]['nDCG@10'][i]!, 0) / train.length;
      const expected = meanOf('x') >= meanOf('y') ? 'x' : 'y';
      expect(choice.member).toBe(expected);
      expect(choice.trainMean).toBeCloseTo(Math.max(meanOf('x'), meanOf('y')), 12);
      for (const [i, g] of folds.entries()) {
        if (g !== f) continue;
        expect(t.perQuery['nDCG@10']![i]).toBe(perQuery[expected]['nDCG@10'][i]);
        expect(t.perQuery['RR']![i]).toBe(perQuery[expected].RR[i]);
      }
    }
    // Oracle: mean nDCG@10 on all four queries, x (0.9+0.1+0.8+0.2)/4 = 0.5 vs y (0.2+0.7+0.1+0.6)/4 = 0.4.
    expect(t.oracle).toEqual({ member: 'x', mean: (0.9 + 0.1 + 0.8 + 0.2) / 4 });
  });

  it('breaks a tie on the training folds towards the earlier grid point', () => {
    const tied = { x: { RR: [1, 0, 1, 0] }, y: { RR: [1, 0, 1, 0] } };
    const t = tuneByFolds('g', ['x', 'y'], tied, queries, { measure: 'RR', folds: 2, seed: 1 });
    expect(t.choices.map((c) => c.member)).toEqual(['x', 'x']);
  });
});

describe('tuneBySplit', () => {
  it('picks on the dev queries and reports the pick on the test queries beside the test oracle', () => {
    const test = { x: { RR: [1, 1] }, y: { RR: [0, 0.5] } };
    const dev = { x: { RR: [0, 0, 0.5] }, y: { RR: [1, 1, 0] } };
    const t = tuneBySplit('g', ['x', 'y'], test, dev, { measure: 'RR', split: 'dev', testQueries: 2, devQueries: 3 });
    expect(t.choices).toEqual([{ fold: 'dev', member: 'y', trainMean: (1 + 1 + 0) / 3, queries: 2 }]);
    expect(t.perQuery['RR']).toEqual([0, 0.5]);
    expect(t.oracle).toEqual({ member: 'x', mean: 1 });
  });
});
