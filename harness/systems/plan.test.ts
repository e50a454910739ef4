import { describe, expect, it } from 'vitest';
import { axisValues, buildPlan, subsets, type PlanEntry } from './plan.js';
import { armFactories } from '../../arms/registry.js';
import { nodeKinds } from './registry.js';

const arm = (id: string, params: Record<string, unknown> = {}, extra: Partial<PlanEntry> = {}): PlanEntry => ({
  at: `arms[${id}]`,
  id,
  node: 'retrieve',
  kind: 'fake',
  inputs: [],
  params,
  ...extra,
});
const fusion = (id: string, inputs: PlanEntry['inputs'], params: Record<string, unknown>, extra: Partial<PlanEntry> = {}): PlanEntry => ({
  at: `systems[${id}]`,
  id,
  node: 'fuse',
  kind: 'fuse',
  inputs,
  params,
  ...extra,
});

describe('grid axes and subsets', () => {
  it('includes both ends of a range and rounds off binary noise', () => {
    const v = axisValues({ from: 0, to: 1, step: 0.1 });
    expect(v).toHaveLength(11);
    expect(v[3]).toBe(0.3);
    expect(v[10]).toBe(1);
    expect(axisValues([10, 60])).toEqual([10, 60]);
    expect(axisValues({ from: 2, to: 1, step: 1 })).toEqual([]);
  });

  it('lists subsets by size, then by position', () => {
    expect(subsets(['a', 'b', 'c'], 2)).toEqual([
      ['a', 'b'],
      ['a', 'c'],
      ['b', 'c'],
      ['a', 'b', 'c'],
    ]);
    expect(subsets(['a', 'b'], 1)).toEqual([['a'], ['b'], ['a', 'b']]);
  });
});

describe('buildPlan', () => {
  it('expands an arm grid into readable ids that form a group', () => {
    const { plan, problems } = buildPlan([arm('f', {}, { grid: { seed: [1, 2], signal: [0.5, 1] } })], 10);
    expect(problems).toEqual([]);
    expect(plan.systems.map((s) => s.id)).toEqual(['f.seed=1.signal=0.5', 'f.seed=1.signal=1', 'f.seed=2.signal=0.5', 'f.seed=2.signal=1']);
    expect(plan.groups.get('f')).toEqual(plan.systems.map((s) => s.id));
    expect(plan.systems[1]!.point).toEqual({ seed: 1, signal: 1 });
    expect(plan.systems[1]!.params).toEqual({ seed: 1, signal: 1, delayMs: 0 });
  });

  it('keeps one id and no group for an entry that expands to one system', () => {
    const { plan } = buildPlan([arm('a')], 10);
    expect(plan.systems.map((s) => [s.id, s.group])).toEqual([['a', undefined]]);
  });

  it('flags a system built on a substitute as one, unless its own entry says what it is', () => {
    const { plan } = buildPlan(
      [
        arm('a', { seed: 1 }, { substitute: 'A for B' }),
        arm('b', { seed: 2 }),
        fusion('ab', ['a', 'b'], { method: 'rrf' }),
        fusion('abb', ['ab', 'b'], { method: 'rrf' }),
        fusion('own', ['a', 'b'], { method: 'rrf', rrfK: 10 }, { substitute: 'own words' }),
      ],
      10,
    );
    expect(plan.systems.map((s) => [s.id, s.substitute])).toEqual([
      ['a', 'A for B'],
      ['b', undefined],
      ['ab', 'built on a (A for B)'],
      ['abb', 'built on ab (built on a (A for B))'],
      ['own', 'own words'],
    ]);
  });

  it('gives two arms with the same params the same fingerprint, and different params another', () => {
    const { plan } = buildPlan([arm('a', { seed: 1 }), arm('b', { seed: 1 }), arm('c', { seed: 2 })], 10);
    const [a, b, c] = plan.systems;
    expect(a!.fingerprintHash).toBe(b!.fingerprintHash);
    expect(a!.fingerprintHash).not.toBe(c!.fingerprintHash);
  });

  it('reports every problem at once: duplicate ids, unknown kinds, bad params, inputs out of order or unknown', () => {
    const { problems } = buildPlan(
      [
        arm('a'),
        arm('a'),
        { ...arm('x'), kind: 'fak' },
        arm('p', { sead: 1 }),
        { ...fusion('early', ['later'], { method: 'rrf' }) },
        arm('later'),
        fusion('typo', ['lateer'], { method: 'rrf' }),
        { ...fusion('odd', ['a'], {}), node: 'fsue' },
        arm('g', {}, { grid: { seed: [1, 2] } }),
        fusion('grp', ['g', 'a'], { method: 'rrf' }),
        arm('dup', { seed: 1 }, { grid: { seed: [1] } }),
      ],
      10,
    );
    expect(problems).toEqual([
      'arms[a].id: duplicate id "a" (also arms[a])',
      // The known kinds come from the registry, which grows with every arm kind.
      `arms[x].kind: unknown arm kind "fak"; did you mean "fake"? (known: ${Object.keys(armFactories).join(', ')})`,
      'arms[p].params.sead: unknown key "sead"; did you mean "seed"? (known: seed, signal, delayMs) [fake params: seed, signal, delayMs]',
      'systems[early].inputs[0]: "later" is listed after this system; list systems after their inputs',
      'systems[typo].inputs[0]: "lateer" is not a system id; did you mean "later"?',
      `systems[odd].kind: unknown system kind "fsue"; did you mean "fuse"? (known: ${Object.keys(nodeKinds)
        .filter((k) => k !== 'retrieve')
        .join(', ')}; arms go under arms:)`,
      'systems[grp].inputs[0]: "g" is a grid of 2 systems; name one of them (g.seed=1, g.seed=2)',
      'arms[dup].grid.seed: also set in params; set it in one place',
    ]);
  });

  it('checks fusion params with the fusion schema: a typo gets a did-you-mean, a weight must name an input', () => {
    const { problems } = buildPlan(
      [arm('a'), arm('b'), fusion('f', ['a', 'b'], { method: 'rrf', rrfk: 60 }), fusion('g', ['a', 'b'], { method: 'rrf', weights: { c: 1 } })],
      10,
    );
    expect(problems).toEqual([
      'systems[f].params.rrfk: unknown key "rrfk"; did you mean "rrfK"? (known: method, rrfK, depth, weights, alpha, normalization, absent, priors)',
      'systems[g].params.weights.c: "c" is not an input of this fusion; did you mean "a"? (inputs: a, b)',
    ]);
  });

  it('refuses priors on a fusion whose scores can be negative, before anything runs', () => {
    const { problems } = buildPlan(
      [arm('a'), arm('b'), fusion('z', ['a', 'b'], { method: 'cc', normalization: 'z-score', priors: { importance: { weight: 0.5 } } })],
      10,
    );
    expect(problems).toEqual([
      "systems[z].params.priors: priors scale fused scores, which must be >= 0; this fusion's can be negative (cc with z-score normalization); use rrf, or min-max / tm2c2 normalization",
    ]);
  });

  it('folds a fusion fingerprint over its inputs: changing an arm changes every fusion over it', () => {
    const fp = (seed: number) => buildPlan([arm('a', { seed }), arm('b'), fusion('f', ['a', 'b'], { method: 'rrf' })], 10).plan.systems[2]!.fingerprintHash;
    expect(fp(1)).toBe(fp(1));
    expect(fp(1)).not.toBe(fp(2));
  });
});

describe('harness arms', () => {
  it('lists every arm kind and every system kind from their registries, with their params', async () => {
    const { runCli } = await import('../cli/main.js');
    const { memoryLogger } = await import('../log.js');
    let out = '';
    expect(await runCli(['arms'], { out: (t) => void (out += t), log: memoryLogger(), env: {}, cwd: '/' })).toBe(0);
    expect(out).toContain('  bm25: ');
    expect(out).toContain('  fuse: fuse the runs of its inputs');
    expect(out).toContain('    params: method, rrfK, depth, weights, alpha, normalization, absent, priors');
  });
});

describe('cycles in the plan', () => {
  it('refuses a fusion that lists itself as an input, naming it, instead of dropping it from the plan', () => {
    const { plan, problems } = buildPlan([arm('a'), fusion('self', ['a', 'self'], { method: 'rrf' }), fusion('after', ['self', 'a'], { method: 'rrf' })], 10);
    expect(problems).toEqual([
      'systems[self].inputs: "self" lists itself as an input; a system cannot read its own run, directly or through others; remove one of these inputs',
    ]);
    expect(plan.systems.map((s) => s.id)).toEqual(['a']);
  });

  it('names every system of a longer cycle once, from the entry listed first, and its subsets too', () => {
    const { problems } = buildPlan(
      [
        arm('a'),
        fusion('x', ['a', 'z'], { method: 'rrf' }),
        fusion('y', ['x', 'a'], { method: 'rrf' }),
        fusion('z', ['y', 'a'], { method: 'rrf' }),
        fusion('s', { 'subsets-of': ['a', 's'], min: 2 }, { method: 'rrf' }),
      ],
      10,
    );
    expect(problems).toEqual([
      'systems[x].inputs: the inputs form a cycle, "x" -> "z" -> "y" -> "x" (each reads the next); a system cannot read its own run, directly or through others; remove one of these inputs',
      'systems[s].inputs: "s" lists itself as an input; a system cannot read its own run, directly or through others; remove one of these inputs',
    ]);
  });

  it('still calls an input listed later, without a cycle, an order problem', () => {
    const { problems } = buildPlan([fusion('f', ['a', 'b'], { method: 'rrf' }), arm('a'), arm('b')], 10);
    expect(problems).toEqual([
      'systems[f].inputs[0]: "a" is listed after this system; list systems after their inputs',
      'systems[f].inputs[1]: "b" is listed after this system; list systems after their inputs',
    ]);
  });
});
