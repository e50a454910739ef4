import { describe, expect, it } from 'vitest';
import { ndcgAny, recallAll, recallAny } from '../../evalset/adapters/longmemeval-metrics.js';
import type { Qrels, Run } from '../../evalset/types.js';
import { evaluate } from './evaluate.js';
import { parseMeasure } from './measure.js';
import { measurePresets } from './presets.js';

// One query, relevant s1 and s4 (grade 1), s2 judged not relevant; the run ranks s3 s1 s2 s4 (scores descending).
const qrels: Qrels = new Map([
  [
    'q',
    new Map([
      ['s1', 1],
      ['s2', 0],
      ['s4', 1],
    ]),
  ],
]);
const run: Run = new Map([
  [
    'q',
    new Map([
      ['s3', 0.9],
      ['s1', 0.8],
      ['s2', 0.7],
      ['s4', 0.6],
    ]),
  ],
]);
const value = (measure: string) =>
  evaluate(qrels, run, [parseMeasure(measure)])
    .perQuery.get(measure)!
    .get('q')!;

describe('LongMemEval measures (preset longmemeval)', () => {
  it('nDCG-LME@k leaves ranks 1 and 2 undiscounted', () => {
    // gains 0 1 0 1: DCG = 0 + 1/log2(2) + 0 + 1/log2(4) = 1 + 1/2; ideal 1 1: 1 + 1/log2(2) = 2.
    expect(value('nDCG-LME@10')).toBeCloseTo((1 + 1 / 2) / 2, 15);
    // top 2: gains 0 1 -> DCG 1; ideal (min(2, 2) ones) -> 2.
    expect(value('nDCG-LME@2')).toBeCloseTo(1 / 2, 15);
    // trec_eval's nDCG@10 differs: (1/log2(3) + 1/log2(5)) / (1 + 1/log2(3)).
    expect(value('nDCG@10')).toBeCloseTo((1 / Math.log2(3) + 1 / Math.log2(5)) / (1 + 1 / Math.log2(3)), 15);
  });

  it('agrees with the adapter functions that mirror the official code', () => {
    const ranked = ['s3', 's1', 's2', 's4'];
    const relevant = new Set(['s1', 's4']);
    for (const k of [1, 2, 3, 5, 10]) {
      expect(value(`nDCG-LME@${k}`)).toBeCloseTo(ndcgAny(ranked, relevant, k), 15);
      expect(value(`Success@${k}`)).toBe(recallAny(ranked, relevant, k));
      expect(value(`R-all@${k}`)).toBe(recallAll(ranked, relevant, k));
    }
  });

  it('presets list canonical measure spellings', () => {
    for (const list of Object.values(measurePresets)) {
      for (const m of list) expect(() => parseMeasure(m)).not.toThrow();
    }
  });
});
