import { describe, expect, it } from 'vitest';
import { UsageError } from '../errors.js';
import { evaluate, parseMeasure, rankDocIds, relevanceLevelProblem, type QrelsLike, type RunLike } from './index.js';

// The same data in the plain-object form (ranx / ir_measures / pytrec_eval) and as Maps.
const QRELS_OBJ = { q1: { d1: 2, d3: 1, d9: 0 }, q2: { d2: 1, d4: -1 }, q3: { d5: 3 } };
const RUN_OBJ = { q1: { d1: 0.9, d2: 0.4, d3: 0.4, d7: 0.1 }, q2: { d4: 2, d2: 1.5 }, q4: { d5: 1 } };
const toMaps = (o: Record<string, Record<string, number>>) => new Map(Object.entries(o).map(([q, d]) => [q, new Map(Object.entries(d))]));
const QRELS_MAP = toMaps(QRELS_OBJ);
const RUN_MAP = toMaps(RUN_OBJ);
const MEASURES = ['AP', 'nDCG@10', 'RR', 'P@5', 'R@100', 'Success@1', 'Judged@10', 'bpref', 'NumRel'];

/** An Evaluation as plain data, for toEqual across calls. */
function plain(ev: ReturnType<typeof evaluate>) {
  return { ...ev, perQuery: Object.fromEntries([...ev.perQuery].map(([m, v]) => [m, Object.fromEntries(v)])) };
}

describe('evaluate (the Library): Maps or plain objects', () => {
  it('gives identical results for plain objects, Maps and a mix of both', () => {
    const measures = MEASURES.map(parseMeasure);
    const fromMaps = plain(evaluate(QRELS_MAP, RUN_MAP, measures));
    expect(plain(evaluate(QRELS_OBJ, RUN_OBJ, measures))).toEqual(fromMaps);
    const mixedQrels: QrelsLike = new Map<string, Readonly<Record<string, number>>>(Object.entries(QRELS_OBJ));
    const mixedRun: RunLike = { q1: new Map(Object.entries(RUN_OBJ.q1)), q2: RUN_OBJ.q2, q4: RUN_OBJ.q4 };
    expect(plain(evaluate(mixedQrels, mixedRun, measures))).toEqual(fromMaps);
    // The numbers themselves, so "identical" is not identically wrong. q1: d3 ties d2 at 0.4 and ranks first
    // (docId descending, trec_eval's order), so both relevant documents are at ranks 1 and 2.
    expect(fromMaps.perQuery['AP']).toEqual({ q1: 1, q2: 1 / 2, q3: 0 });
    expect(fromMaps.zeroFilledQueries).toEqual(['q3']);
    expect(fromMaps.droppedRunQueries).toEqual(['q4']);
  });

  it('takes measure names as well as Measures, keyed by the canonical spelling', () => {
    const byName = evaluate(QRELS_OBJ, RUN_OBJ, ['ndcg_cut_10', 'map', 'P_5']);
    expect([...byName.perQuery.keys()]).toEqual(['nDCG@10', 'AP', 'P@5']);
    expect(plain(byName)).toEqual(plain(evaluate(QRELS_MAP, RUN_MAP, ['nDCG@10', 'AP', 'P@5'].map(parseMeasure))));
  });

  it('gives identical results with options: queries, relevanceLevel and a unit map as an object', () => {
    const qrels = { q1: { s1: 1, s2: 2 } };
    const run = { q1: { t1: 0.9, t2: 0.8, t3: 0.7 } };
    const units = { t1: 's2', t2: 's2', t3: 's1' };
    const opts = { queries: ['q1', 'q9'], relevanceLevel: 2 };
    const fromMaps = plain(evaluate(toMaps(qrels), toMaps(run), ['AP', 'nDCG@10'], { ...opts, units: new Map(Object.entries(units)) }));
    expect(plain(evaluate(qrels, run, ['AP', 'nDCG@10'], { ...opts, units }))).toEqual(fromMaps);
    expect(fromMaps.perQuery['AP']).toEqual({ q1: 1, q9: 0 });
    expect(fromMaps.zeroFilledQueries).toEqual(['q9']);
  });

  it('does not modify its inputs, and reads an object without a prototype', () => {
    const qrels = JSON.parse(JSON.stringify(QRELS_OBJ));
    const run = Object.assign(Object.create(null) as Record<string, Record<string, number>>, RUN_OBJ);
    evaluate(qrels, run, ['AP']);
    expect(qrels).toEqual(QRELS_OBJ);
    expect({ ...run }).toEqual(RUN_OBJ);
  });

  it('rankDocIds and relevanceLevelProblem take plain objects too', () => {
    expect(rankDocIds(RUN_OBJ.q1)).toEqual(rankDocIds(RUN_MAP.get('q1')!));
    expect(rankDocIds({ a: 1, b: 1, c: 2 })).toEqual(['c', 'b', 'a']);
    expect(relevanceLevelProblem(QRELS_OBJ, 5)).toBe(relevanceLevelProblem(QRELS_MAP, 5));
    expect(relevanceLevelProblem(QRELS_OBJ, 5)).toMatch(/highest grade in the qrels \(3\)/);
    expect(relevanceLevelProblem(QRELS_OBJ, 3)).toBeUndefined();
  });
});

describe('evaluate (the Library): a wrong shape is a TypeError naming the argument', () => {
  // biome-ignore lint/suspicious/noExplicitAny: wrong types on purpose
  const anyEvaluate = evaluate as (...args: any[]) => unknown;
  const ev =
    (qrels: unknown, run: unknown, measures: unknown = ['AP'], opts?: unknown) =>
    () =>
      anyEvaluate(qrels, run, measures, opts);
  const cases: [string, () => unknown, RegExp][] = [
    ['qrels an array', ev([['q1', { d1: 1 }]], RUN_OBJ), /^evaluate: qrels must be a Map or a plain object of queryId -> \{ docId: grade \}.*; got an array$/],
    ['qrels null', ev(null, RUN_OBJ), /evaluate: qrels must be a Map or a plain object .*got null/],
    ['qrels a string', ev('q1 0 d1 1', RUN_OBJ), /evaluate: qrels must be .*got a string/],
    ['qrels undefined', ev(undefined, RUN_OBJ), /evaluate: qrels must be .*got undefined/],
    ['run a Set', ev(QRELS_OBJ, new Set(['q1'])), /evaluate: run must be a Map or a plain object of queryId -> \{ docId: score \}.*got a Set/],
    ['run a class instance', ev(QRELS_OBJ, new Date()), /evaluate: run must be .*got a Date/],
    ['a query entry a number', ev(QRELS_OBJ, { q1: 3 }), /evaluate: run\["q1"\] must be a Map or a plain object of docId -> score.*got the number 3/],
    ['a query entry an array', ev({ q1: ['d1'] }, RUN_OBJ), /evaluate: qrels\["q1"\] must be .*docId -> grade.*got an array/],
    ['a NaN score', ev(QRELS_OBJ, { q1: { d1: Number.NaN } }), /evaluate: run\["q1"\]\["d1"\] is the number NaN; a score must be a finite number/],
    ['an infinite score', ev(QRELS_OBJ, { q1: { d1: -Infinity } }), /run\["q1"\]\["d1"\] is the number -Infinity; a score must be a finite number/],
    ['a score as a string', ev(QRELS_OBJ, new Map([['q1', new Map([['d1', '0.9']])]])), /run\["q1"\]\["d1"\] is a string; a score must be a finite number/],
    ['a fractional grade', ev({ q1: { d1: 0.5 } }, RUN_OBJ), /qrels\["q1"\]\["d1"\] is the number 0.5; a grade must be an integer/],
    ['a boolean grade', ev({ q1: { d1: true } }, RUN_OBJ), /qrels\["q1"\]\["d1"\] is a boolean; a grade must be an integer/],
    ['a numeric Map key', ev(new Map([[1, new Map([['d1', 1]])]]), RUN_OBJ), /evaluate: qrels has a key that is the number 1; every query id must be a string/],
    ['measures a string', ev(QRELS_OBJ, RUN_OBJ, 'AP'), /evaluate: measures must be an array of measure names or Measures.*got a string/],
    ['a measure not a measure', ev(QRELS_OBJ, RUN_OBJ, [{ name: 'NDCG' }]), /evaluate: measures\[0\] is an object, not a measure/],
    ['options an array', ev(QRELS_OBJ, RUN_OBJ, ['AP'], []), /evaluate: options must be an object/],
    ['a fractional level', ev(QRELS_OBJ, RUN_OBJ, ['AP'], { relevanceLevel: 1.5 }), /options.relevanceLevel is the number 1.5; it must be an integer grade/],
    ['queries a string', ev(QRELS_OBJ, RUN_OBJ, ['AP'], { queries: 'q1' }), /options.queries must be an array of query ids; got a string/],
    ['a unit id a number', ev(QRELS_OBJ, RUN_OBJ, ['AP'], { units: { d1: 1 } }), /options.units\["d1"\] is the number 1; a unit id must be a string/],
  ];
  for (const [name, call, message] of cases) {
    it(name, () => {
      expect(call).toThrow(TypeError);
      expect(call).toThrow(message);
    });
  }

  it('an unknown measure name is a UsageError with a did-you-mean', () => {
    expect(ev(QRELS_OBJ, RUN_OBJ, ['nDGC@10'])).toThrow(UsageError);
    expect(ev(QRELS_OBJ, RUN_OBJ, ['nDGC@10'])).toThrow(/unknown measure "nDGC@10"/);
  });

  it('rankDocIds and relevanceLevelProblem name their argument', () => {
    // biome-ignore lint/suspicious/noExplicitAny: wrong types on purpose
    const anyRank = rankDocIds as (d: any) => string[];
    expect(() => anyRank([0.9, 0.1])).toThrow(/^rankDocIds: docs must be a Map or a plain object of docId -> score.*got an array$/);
    expect(() => anyRank({ d1: Number.NaN })).toThrow(/rankDocIds: docs\["d1"\] is the number NaN/);
    // biome-ignore lint/suspicious/noExplicitAny: wrong types on purpose
    expect(() => relevanceLevelProblem(42 as any, 1)).toThrow(/relevanceLevelProblem: qrels must be .*got the number 42/);
  });
});
