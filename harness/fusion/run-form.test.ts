import { describe, expect, it } from 'vitest';
import { FusionInputError } from './errors.js';
import { docTable, packArrays, packPairs, packRun, unpackPairs, unpackRun } from './run-form.js';
import { runOf } from './testing.js';

describe('docTable', () => {
  it('sorts ids in byte order and interns them', () => {
    const t = docTable(['b', 'a', 'B', 'b', '\u{1F600}', '\uFFFD']);
    // Code point order: 'B' < 'a' < 'b' < U+FFFD < U+1F600 (JS < would put the astral surrogates first).
    expect(t.ids).toEqual(['B', 'a', 'b', '\uFFFD', '\u{1F600}']);
    expect(t.indexOf('b')).toBe(2);
    expect(t.indexOf('zz')).toBe(-1);
  });
});

describe('packRun / unpackRun', () => {
  it('round-trips a run, each list in the trec order (score desc, docId desc), empty queries left out', () => {
    const run = runOf({ q2: { a: 1, c: 2, b: 1 }, q1: { x: 0.5 } });
    const table = docTable(['a', 'b', 'c', 'x']);
    const p = packRun(run, ['q1', 'q2', 'q3'], table);
    expect([...p.offsets]).toEqual([0, 1, 4, 4]);
    // q2: c (2) first, then the tie a/b at 1 with b (higher docId) first.
    expect([...p.docs].map((d) => table.ids[d])).toEqual(['x', 'c', 'b', 'a']);
    expect([...p.scores]).toEqual([0.5, 2, 1, 1]);
    const back = unpackRun(p, table);
    expect([...back.keys()]).toEqual(['q1', 'q2']);
    expect([...back.get('q2')!]).toEqual([
      ['c', 2],
      ['b', 1],
      ['a', 1],
    ]);
    expect(back.get('q1')).toEqual(run.get('q1'));
  });

  it('rejects a run query outside the list, an unknown docId and a non-finite score', () => {
    const table = docTable(['a']);
    expect(() => packRun(runOf({ q9: { a: 1 } }), ['q1'], table)).toThrow(/run query "q9" is not in the fusion's query list/);
    expect(() => packRun(runOf({ q1: { z: 1 } }), ['q1'], table)).toThrow(/document "z" is not in the DocTable/);
    expect(() => packRun(runOf({ q1: { a: NaN } }), ['q1'], table)).toThrow(FusionInputError);
    expect(() => packRun(runOf({}), ['q1', 'q1'], table)).toThrow(/twice/);
  });

  it('packArrays copies, sorts and validates typed input', () => {
    const docs = Int32Array.from([0, 2, 1, 3]);
    const scores = Float64Array.from([1, 1, 5, -2]);
    const p = packArrays(['q1', 'q2'], Int32Array.from([0, 3, 4]), docs, scores);
    expect([...p.docs]).toEqual([1, 2, 0, 3]);
    expect([...p.scores]).toEqual([5, 1, 1, -2]);
    expect([...docs]).toEqual([0, 2, 1, 3]);
    expect(() => packArrays(['q1'], Int32Array.from([0, 2]), Int32Array.from([4, 4]), Float64Array.from([1, 2]))).toThrow(/lists document index 4 twice/);
    expect(() => packArrays(['q1'], Int32Array.from([0, 3]), Int32Array.from([4, 4]), Float64Array.from([1, 2]))).toThrow(/offsets/);
    expect(() => packArrays(['q1'], Int32Array.from([0, 1]), Int32Array.from([-1]), Float64Array.from([1]))).toThrow(/not a DocTable index/);
  });
});

describe("packPairs / unpackPairs (a Scope run's pairs)", () => {
  const asMap = (pairs: Record<string, [string, number][]>) => new Map(Object.entries(pairs).map(([q, docs]) => [q, new Map(docs)] as const));

  it('pack as packRun packs the Map the pairs make, a repeated document keeping its last score', () => {
    const pairs: Record<string, [string, number][]> = {
      q2: [
        ['a', 1],
        ['c', 2],
        ['b', 1],
        ['a', 3],
      ],
      q1: [['x', 0.5]],
      q3: [],
    };
    const table = docTable(['a', 'b', 'c', 'x', 'unused']);
    const p = packPairs(pairs, ['q1', 'q2', 'q3', 'q4'], table);
    const viaMap = packRun(asMap(pairs), ['q1', 'q2', 'q3', 'q4'], table);
    expect(p).toEqual(viaMap);
    expect([...p.docs].map((d) => table.ids[d])).toEqual(['x', 'a', 'c', 'b']);
    expect([...p.scores]).toEqual([0.5, 3, 2, 1]);
    // Back to pairs: every query of the packed run in its order, the empty ones as empty lists.
    expect(unpackPairs(p, table)).toEqual({
      q1: [['x', 0.5]],
      q2: [
        ['a', 3],
        ['c', 2],
        ['b', 1],
      ],
      q3: [],
      q4: [],
    });
    expect(Object.keys(unpackPairs(p, table))).toEqual(['q1', 'q2', 'q3', 'q4']);
  });

  it('refuse what packRun refuses', () => {
    const table = docTable(['a']);
    expect(() => packPairs({ q9: [['a', 1]] }, ['q1'], table)).toThrow(/run query "q9" is not in the fusion's query list/);
    expect(() => packPairs({ q1: [['z', 1]] }, ['q1'], table)).toThrow(/document "z" is not in the DocTable/);
    expect(() => packPairs({ q1: [['a', Number.NaN]] }, ['q1'], table)).toThrow(FusionInputError);
    expect(() => packPairs({}, ['q1', 'q1'], table)).toThrow(/twice/);
    // A non-finite score a later pair replaces is gone, as in the Map.
    expect([
      ...packPairs(
        {
          q1: [
            ['a', Number.NaN],
            ['a', 2],
          ],
        },
        ['q1'],
        table,
      ).scores,
    ]).toEqual([2]);
  });
});
