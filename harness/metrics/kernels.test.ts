import { describe, expect, it } from 'vitest';
import { parseTrecQrels, parseTrecRun } from '../../evalset/trec.js';
import { InputError } from '../errors.js';
import { evaluate, type Evaluation } from './evaluate.js';
import { parseMeasure } from './measure.js';
import { compareIds, compareRanked, rankDocIds } from './ranking.js';

/**
 * The edge-case matrix over every kernel, on inline TREC fixtures. Expected values are derived by hand in
 * the comments and written as arithmetic; log2 is the DCG discount.
 */

const log2 = Math.log2;

// q1: d1 and d3 relevant (grade 1), d4 grade 2 (not retrieved), d2 judged non-relevant, d5 in the pool but
// unjudged (negative grade); the run also retrieves d6, which has no judgment.
// Ranking (scores are distinct): d1(1) d2(0) d6(none) d3(1) d5(-1). R = 3 relevant, 2 retrieved.
const QRELS = parseTrecQrels(
  `# comment line
q1 0 d1 1
q1 0 d2 0
q1 0 d3 1
q1 0 d4 2
q1 0 d5 -1
q2 0 x1 1
q4 0 n1 0
q4 0 n2 0
q5 0 dA 1
q5 0 dB 0
q6 0 a 3
q6 0 b 1
`,
  'inline.qrels',
);

const RUN = parseTrecRun(
  `q1 Q0 d1 1 3.0 r
q1 Q0 d2 2 2.0 r
q1 Q0 d6 3 1.0 r
q1 Q0 d3 4 0.5 r
q1 Q0 d5 5 0.4 r
q3 Q0 zz 1 1.0 r
q4 Q0 n1 1 2.0 r
q4 Q0 n2 2 1.0 r
q5 Q0 dA 1 1.0 r
q5 Q0 dB 2 1.0 r
q5 Q0 dC 3 1.0 r
q6 Q0 b 1 2.0 r
q6 Q0 a 2 1.0 r
`,
  'inline.run',
).run;

const ALL = [
  'P@1',
  'P@2',
  'P@5',
  'P@10',
  'R@5',
  'AP',
  'AP@2',
  'RR',
  'RR@1',
  'nDCG',
  'nDCG@2',
  'nDCG(gain=exp)@2',
  'nDCG(gain=exp)',
  'Judged@5',
  'Judged@10',
  'Unj@5',
  'R-all@4',
  'R-all@10',
  'Success@1',
  'Rprec',
  'Bpref',
  'infAP',
  'SetP',
  'SetR',
  'SetF',
  'SetAP',
  'SetRelP',
  'NumRet',
  'NumRel',
  'NumRelRet',
  'NumNonrelJudgedRet',
  'P(rel=2)@5',
  'AP(rel=2)',
  'R(rel=2)@10',
  'IPrec@0',
  'IPrec@0.5',
  'IPrec@1',
  '11ptAvg',
  'RprecMult@1',
  'RprecMult@2',
  'RelP@2',
  'RelP@5',
  'Utility',
  'BinG',
  'RBP',
  'RBPResid',
  'DCG',
  'IDCG',
].map(parseMeasure);

const ev = evaluate(QRELS, RUN, ALL);
/** Measures that describe the judgments alone, so a query without results still has a value. */
const JUDGMENT_ONLY = new Set(['NumRel', 'IDCG']);
const v = (e: Evaluation, m: string, q: string): number => {
  const x = e.perQuery.get(m)?.get(q);
  if (x === undefined) throw new Error(`no value for ${m} on ${q}`);
  return x;
};

describe('kernels on a typical query (q1)', () => {
  const cases: [string, number][] = [
    ['P@1', 1 / 1],
    ['P@2', 1 / 2],
    ['P@5', 2 / 5],
    ['P@10', 2 / 10], // ranks 6..10 missing: counted as retrieved non-relevant
    ['R@5', 2 / 3],
    ['AP', (1 / 1 + 2 / 4) / 3],
    ['AP@2', 1 / 1 / 3], // only the relevant document at rank 1 is inside the cutoff; still divided by R = 3
    ['RR', 1],
    ['RR@1', 1],
    ['nDCG', (1 / log2(2) + 1 / log2(5)) / (2 / log2(2) + 1 / log2(3) + 1 / log2(4))],
    ['nDCG@2', 1 / log2(2) / (2 / log2(2) + 1 / log2(3))],
    ['nDCG(gain=exp)@2', (2 ** 1 - 1) / (2 ** 2 - 1 + (2 ** 1 - 1) / log2(3))],
    ['nDCG(gain=exp)', (1 + 1 / log2(5)) / (3 + 1 / log2(3) + 1 / log2(4))],
    ['Judged@5', 4 / 5], // d1 d2 d3 d5 have qrels entries (d5's is negative), d6 has none
    ['Judged@10', 4 / 10],
    ['Unj@5', 2 / 5], // d6 (no entry) and d5 (negative grade)
    ['R-all@4', 0], // d4 is relevant and never retrieved
    ['R-all@10', 0],
    ['Success@1', 1],
    ['Rprec', 1 / 3], // top R = 3: d1 d2 d6
    ['Bpref', (1 + (1 - 1 / 1)) / 3], // N = 1 judged non-relevant (d2); d3 has 1 non-relevant above it
    ['infAP', (1 + (1 / 4 + (3 / 4) * (2 / 3) * ((1 + 1e-5) / (2 + 2e-5)))) / 3],
    ['SetP', 2 / 5],
    ['SetR', 2 / 3],
    ['SetF', (2 * (2 / 5) * (2 / 3)) / (2 / 5 + 2 / 3)],
    ['SetAP', (2 * 2) / (5 * 3)],
    ['SetRelP', 2 / Math.min(5, 3)],
    ['NumRet', 5],
    ['NumRel', 3],
    ['NumRelRet', 2],
    ['NumNonrelJudgedRet', 1], // d2
    ['P(rel=2)@5', 0], // only d4 has grade >= 2
    ['AP(rel=2)', 0],
    ['R(rel=2)@10', 0],
    ['IPrec@0', 1], // max precision at or after rank 1
    ['IPrec@0.5', 2 / 4], // round(0.5 * 3) = 2 relevant: reached at rank 4
    ['IPrec@1', 0], // 3 relevant never reached
    ['RprecMult@1', 1 / 3], // cutoff trunc(1 * 3 + 0.9) = 3
    ['RprecMult@2', 2 / 6], // cutoff 6 > 5 retrieved: relevant retrieved / 6
    ['RelP@2', 1 / 2],
    ['RelP@5', 2 / 3],
    ['Utility', 2 - 3], // relevant retrieved - non-relevant retrieved
    ['BinG', (1 / log2(2) + 1 / log2(3 + 3 - 2)) / 3], // d3 at index 3 with 2 relevant so far: log2(2 + 2 non-rel)
    ['RBP', (1 - 0.9) * (0.5 * 1 + 0.5 * 0.9 ** 3)], // gains 0..2 rescaled to [0, 1]: grade 1 -> 0.5
    ['RBPResid', 0.9 ** 5 + (1 - 0.9) * (0.9 ** 2 + 0.9 ** 4)], // d6 at rank 3, d5 at rank 5 unjudged
    ['DCG', 1 + 1 / log2(5)],
    ['IDCG', 2 + 1 / log2(3) + 1 / log2(4)],
  ];
  for (const [m, want] of cases) it(`${m} = ${want}`, () => expect(v(ev, m, 'q1')).toBeCloseTo(want, 12));
  it('11ptAvg averages the 11 interpolated precisions', () => {
    // recall points round(x * 3) relevant: 0 -> max prec 1; 1 (x = .1 .. .4: round gives 0,1,1,1 ...) see below
    const ip = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1].map((x) => {
      const need = Math.round(x * 3);
      return need === 0 ? 1 : need === 1 ? 1 : need === 2 ? 2 / 4 : 0;
    });
    expect(v(ev, '11ptAvg', 'q1')).toBeCloseTo(ip.reduce((a, b) => a + b) / 11, 12);
  });
});

describe('edge cases', () => {
  it('partial run: a qrels query missing from the run is zero-filled and listed', () => {
    expect(ev.zeroFilledQueries).toEqual(['q2']);
    for (const [name, byQ] of ev.perQuery) if (!JUDGMENT_ONLY.has(name)) expect([name, byQ.get('q2')]).toEqual([name, 0]);
    expect(v(ev, 'NumRel', 'q2')).toBe(1); // a property of the judgments, not of the run
    expect(v(ev, 'IDCG', 'q2')).toBe(1 / log2(2));
  });
  it('a run query without qrels is dropped and counted, never averaged', () => {
    expect(ev.droppedRunQueries).toEqual(['q3']);
    expect(ev.queryIds).not.toContain('q3');
    expect(ev.queryIds).toEqual(['q1', 'q2', 'q4', 'q5', 'q6']);
  });
  it('empty run: every query zero-filled, every measure 0', () => {
    const e = evaluate(QRELS, new Map(), ALL);
    expect(e.zeroFilledQueries).toEqual(e.queryIds);
    for (const [name, byQ] of e.perQuery) {
      if (JUDGMENT_ONLY.has(name)) continue;
      for (const x of byQ.values()) expect([name, x]).toEqual([name, 0]);
    }
  });
  it('query with no relevant document: 0 everywhere, Judged still counts', () => {
    for (const m of ['P@5', 'R@5', 'AP', 'RR', 'nDCG', 'nDCG@2', 'R-all@10', 'Rprec', 'Bpref', 'SetR']) expect(v(ev, m, 'q4')).toBe(0);
    expect(v(ev, 'Judged@5', 'q4')).toBe(2 / 5);
    expect(v(ev, 'NumNonrelJudgedRet', 'q4')).toBe(2);
  });
  it('tied scores: trec_eval order, docId descending, puts dA last', () => {
    expect(rankDocIds(RUN.get('q5')!)).toEqual(['dC', 'dB', 'dA']);
    expect(v(ev, 'RR', 'q5')).toBe(1 / 3);
    expect(v(ev, 'P@1', 'q5')).toBe(0);
    expect(v(ev, 'AP', 'q5')).toBe(1 / 3 / 1);
  });
  it('graded relevance above 1: linear gain by default, 2^g - 1 with gain=exp', () => {
    // ranking b(1) a(3); ideal a(3) b(1)
    expect(v(ev, 'nDCG', 'q6')).toBeCloseTo((1 + 3 / log2(3)) / (3 + 1 / log2(3)), 12);
    expect(v(ev, 'nDCG(gain=exp)', 'q6')).toBeCloseTo((1 + 7 / log2(3)) / (7 + 1 / log2(3)), 12);
  });
  it('R-all@k turns 1 once every relevant document is in the top k', () => {
    const e = evaluate(QRELS, RUN, [parseMeasure('R-all@1'), parseMeasure('R-all@2')]);
    expect(e.perQuery.get('R-all@1')!.get('q6')).toBe(0);
    expect(e.perQuery.get('R-all@2')!.get('q6')).toBe(1);
  });
  it('duplicate documents are rejected with file and line', () => {
    expect(() => parseTrecRun('q Q0 a 1 2 r\nq Q0 b 2 1 r\nq Q0 a 3 0 r\n', 'dup.run')).toThrow(
      /dup\.run:3: document "a" appears twice for query "q" \(first at line 1\)/,
    );
    expect(() => parseTrecQrels('q 0 a 1\nq 0 a 0\n', 'dup.qrels')).toThrow(InputError);
    expect(() => parseTrecQrels('q 0 a 1\nq 0 a 0\n', 'dup.qrels')).toThrow(/dup\.qrels:2: .*first at line 1/);
  });
  it('the relevance level option is a default that a measure rel= overrides', () => {
    const e = evaluate(QRELS, RUN, [parseMeasure('P@5'), parseMeasure('P(rel=1)@5')], { relevanceLevel: 2 });
    expect(e.perQuery.get('P@5')!.get('q1')).toBe(0);
    expect(e.perQuery.get('P(rel=1)@5')!.get('q1')).toBe(2 / 5);
  });
  it('queries option: listed queries only, in that order; others from the run are dropped', () => {
    const e = evaluate(QRELS, RUN, [parseMeasure('P@1')], { queries: ['q6', 'q1'] });
    expect(e.queryIds).toEqual(['q6', 'q1']);
    expect([...e.perQuery.get('P@1')!.keys()]).toEqual(['q6', 'q1']);
    expect(e.droppedRunQueries).toEqual(['q3', 'q4', 'q5']);
  });
  it('does not modify its inputs', () => {
    const before = JSON.stringify([...RUN].map(([q, d]) => [q, [...d]]));
    evaluate(QRELS, RUN, ALL, { units: new Map([...RUN.values()].flatMap((d) => [...d.keys()]).map((id) => [id, id])) });
    expect(JSON.stringify([...RUN].map(([q, d]) => [q, [...d]]))).toBe(before);
  });
});

describe('unit mapping (turn-level run scored at session level)', () => {
  const qrels = parseTrecQrels('q 0 s1 1\nq 0 s2 1\n', 'u.qrels');
  const run = parseTrecRun('q Q0 t1 1 0.9 r\nq Q0 t2 2 0.8 r\nq Q0 t3 3 0.7 r\nq Q0 t4 4 0.6 r\n', 'u.run').run;
  const units = new Map([
    ['t1', 's3'],
    ['t2', 's3'],
    ['t3', 's1'],
    ['t4', 's2'],
  ]);
  it('a unit takes its best-ranked member and appears once', () => {
    // turns t1 t2 t3 t4 -> sessions s3 s3 s1 s2 -> s3 s1 s2: relevant at ranks 2 and 3
    const e = evaluate(qrels, run, [parseMeasure('RR'), parseMeasure('P@3'), parseMeasure('R-all@3'), parseMeasure('NumRet')], { units });
    expect(e.perQuery.get('RR')!.get('q')).toBe(1 / 2);
    expect(e.perQuery.get('P@3')!.get('q')).toBe(2 / 3);
    expect(e.perQuery.get('R-all@3')!.get('q')).toBe(1);
    expect(e.perQuery.get('NumRet')!.get('q')).toBe(3);
  });
  it('a retrieved document without a unit is an error, not a silent drop', () => {
    expect(() => evaluate(qrels, run, [parseMeasure('RR')], { units: new Map([['t1', 's1']]) })).toThrow(/"t2" has no unit/);
  });
});

describe('the shared ranking comparator', () => {
  it('score descending, then docId descending (trec_eval comp_sim_docno)', () => {
    expect(compareRanked(2, 'a', 1, 'z')).toBeLessThan(0);
    expect(compareRanked(1, 'b', 1, 'a')).toBeLessThan(0);
    expect(compareRanked(1, 'a', 1, 'b')).toBeGreaterThan(0);
  });
  it('compares ids in UTF-8 byte order (C strcmp), not UTF-16 order', () => {
    // U+FF5E (3 UTF-8 bytes EF BD 9E) < U+1F600 (4 bytes F0 ...), though its UTF-16 unit 0xFF5E > 0xD83D
    expect(compareIds('\uff5e', '\u{1f600}')).toBeLessThan(0);
    expect('\uff5e' < '\u{1f600}').toBe(false);
    expect(compareIds('ab', 'abc')).toBeLessThan(0);
  });
});
