import { describe, expect, it } from 'vitest';
import type { SystemsPlan } from '../systems/plan.js';
import { resolveMeasures } from './measures-block.js';
import { RunRefs, resolveCompare, resolveExpect, resolveGate, resolveJudging, resolveTune, runIdsOf } from './study-blocks.js';

const plan = (groups: [string, string[]][] = []) => ({ systems: [{ id: 'a' }, { id: 'b' }], groups: new Map(groups) }) as unknown as SystemsPlan;

describe('the config resolvers', () => {
  it('resolve measures to canonical spellings, keeping the good ones beside the problems of the bad', () => {
    const resolved = resolveMeasures(['ndcg@10', 'nDCG@10', 'Nope', 'RR']);
    // Each is read once, here: its spelling with the value read from it, which travels on from the loader.
    expect(resolved.value.map((m) => [m.spelling, m.measure.name, m.measure.cutoff, m.tested])).toEqual([
      ['nDCG@10', 'nDCG', 10, true],
      ['RR', 'RR', undefined, true],
    ]);
    expect({ ...resolved, value: resolved.value.map((m) => m.spelling) }).toEqual({
      value: ['nDCG@10', 'RR'],
      problems: ['measures[1]: "nDCG@10" is listed twice (as nDCG@10)', expect.stringMatching(/^measures\[2\]: unknown measure "Nope"/)],
    });
  });

  it('resolve tune against the measures and the plan, and name the tuned runs', () => {
    const raw = { measure: 'ndcg@10', seed: 1, folds: 2 };
    const tuned = resolveTune(raw, { measures: ['nDCG@10'], plan: plan([['g', ['a', 'b']]]) });
    expect(tuned).toEqual({ value: { measure: 'nDCG@10', seed: 1, folds: 2 }, problems: [] });
    expect(runIdsOf(plan([['g', ['a', 'b']]]), tuned.value)).toEqual(['a', 'b', 'g.tuned']);
    const bad = resolveTune({ ...raw, split: 'test' }, { measures: ['RR'], plan: plan(), evalset: { format: 'memory', splits: false } });
    expect(bad.problems).toEqual([
      'tune.measure: "ndcg@10" is not among measures (RR)',
      'tune: no arm or system has a grid or input subsets to tune; add a grid or remove tune',
      'tune.split: format "memory" has no splits; use folds',
      'tune.split: "test" is the split being scored; tune on another (e.g. dev)',
    ]);
  });

  it('check every run another block names, once per entry that has no problem of its own', () => {
    const refs = new RunRefs(['a', 'b'], new Set(['a', 'b', 'broken']));
    expect(refs.problems('x', 'zzz')).toEqual(['x: "zzz" is not a system id (systems: a, b)']);
    expect(refs.problems('x', 'broken')).toEqual([]);
    expect(resolveCompare({ baseline: 'zzz' } as never, refs).problems).toEqual(['compare.baseline: "zzz" is not a system id (systems: a, b)']);
    const gate = resolveGate({ candidate: 'b', measure: 'ndcg@10' } as never, refs, ['nDCG@10']);
    expect([gate.value?.measure, gate.problems]).toEqual(['nDCG@10', []]);
    const expected = resolveExpect({ a: { 'ndcg@10': { value: 1 }, AP: { value: 1 } } } as never, refs, ['nDCG@10']);
    expect(expected).toEqual({
      value: { a: { 'nDCG@10': { value: 1 }, AP: { value: 1 } } },
      problems: ['expect.a.AP: not among measures (nDCG@10); add it there'],
    });
  });

  it('resolve judging: judged qrels need a judgments folder', () => {
    expect(resolveJudging({ qrels: 'judged' } as never).problems).toEqual([
      'qrels: "judged" reads judgments; add judgments: <folder written by harness judge>',
    ]);
    expect(resolveJudging({ qrels: 'gold' } as never)).toEqual({ value: undefined, problems: [] });
  });
});
