import { describe, expect, it } from 'vitest';
import { Rng } from '../stats/rng.js';
import { FusionInputError } from './errors.js';
import { fuse, fusedTheoreticalMin } from './fuse.js';
import type { FusionInput, FusionSpec } from './spec.js';
import { packArrays, type PackedRun } from './run-form.js';
import { inputsOf, listOf, packAll, runOf } from './testing.js';

/**
 * Every method on inline runs, expected values written as their derivation. Ranks follow the trec order
 * (score descending, docId descending); ties in a fused list put the higher docId first.
 */

const rrf = (over: Partial<FusionSpec> = {}): FusionSpec => ({ method: 'rrf', rrfK: 60, normalization: 'none', absent: 'zero', topK: 100, ...over });
const spec = (method: FusionSpec['method'], normalization: FusionSpec['normalization'], over: Partial<FusionSpec> = {}): FusionSpec => ({
  method,
  rrfK: 60,
  normalization,
  absent: 'zero',
  topK: 100,
  ...over,
});

// A: q1 ranks d1 d2 d3; q2 ranks d5.  B: q1 ranks d2 d4; q2 returns nothing.
const A = runOf({ q1: { d1: 3, d2: 2, d3: 1 }, q2: { d5: 7 } });
const B = runOf({ q1: { d2: 5, d4: 4 } });
const Q = ['q1', 'q2', 'q3'];

function expectList(actual: [string, number][], expected: [string, number][]): void {
  expect(actual.map(([d]) => d)).toEqual(expected.map(([d]) => d));
  actual.forEach(([, s], i) => expect(s).toBeCloseTo(expected[i]![1], 14));
}

describe('rrf', () => {
  it('sums 1 / (rrfK + rank) over the inputs; an absent document contributes 0', () => {
    const { table, packed } = packAll(Q, A, B);
    const out = fuse(inputsOf(packed), rrf());
    expectList(listOf(out, table, 'q1'), [
      ['d2', 1 / (60 + 2) + 1 / (60 + 1)],
      ['d1', 1 / (60 + 1)],
      ['d4', 1 / (60 + 2)],
      ['d3', 1 / (60 + 3)],
    ]);
    expectList(listOf(out, table, 'q2'), [['d5', 1 / (60 + 1)]]);
    expect(listOf(out, table, 'q3')).toEqual([]);
    expect(out.queries).toEqual(Q);
  });

  it('weighted: w_i / (rrfK + rank)', () => {
    const { table, packed } = packAll(Q, A, B);
    const out = fuse(inputsOf(packed, [{ weight: 0.3 }, { weight: 2 }]), rrf({ rrfK: 10 }));
    expectList(listOf(out, table, 'q1'), [
      ['d2', 0.3 / (10 + 2) + 2 / (10 + 1)],
      ['d4', 2 / (10 + 2)],
      ['d1', 0.3 / (10 + 1)],
      ['d3', 0.3 / (10 + 3)],
    ]);
  });

  it('ties: input ranks follow docId descending; fused ties put the higher docId first', () => {
    // In C, a b c tie: ranks c(1) b(2) a(3). D ranks a(1) alone: a = 1/61 + 1/63, c = 1/61, b = 1/62.
    const C = runOf({ q1: { a: 1, b: 1, c: 1 } });
    const D = runOf({ q1: { x: 9, a: 1 } });
    const { table, packed } = packAll(['q1'], C, D);
    const out = fuse(inputsOf(packed), rrf());
    // x and c both score 1/61: x > c by id, so x first.
    expectList(listOf(out, table, 'q1'), [
      ['a', 1 / (60 + 3) + 1 / (60 + 2)],
      ['x', 1 / (60 + 1)],
      ['c', 1 / (60 + 1)],
      ['b', 1 / (60 + 2)],
    ]);
  });

  it('depth: only the first `depth` entries of an input are read', () => {
    const { table, packed } = packAll(Q, A, B);
    const out = fuse(inputsOf(packed, [{ depth: 1 }, { depth: 1 }]), rrf());
    expectList(listOf(out, table, 'q1'), [
      ['d2', 1 / (60 + 1)],
      ['d1', 1 / (60 + 1)],
    ]);
  });

  it('topK cuts each fused list', () => {
    const { table, packed } = packAll(Q, A, B);
    const out = fuse(inputsOf(packed), rrf({ topK: 2 }));
    expect(listOf(out, table, 'q1').map(([d]) => d)).toEqual(['d2', 'd1']);
  });

  it('absent "min": a missing document gets w / (rrfK + n), n the entries read from that input', () => {
    const { table, packed } = packAll(Q, A, B);
    const out = fuse(inputsOf(packed), rrf({ absent: 'min' }));
    // A read 3 entries in q1 (a_A = 1/63), B read 2 (a_B = 1/62).
    expectList(listOf(out, table, 'q1'), [
      ['d2', 1 / (60 + 2) + 1 / (60 + 1)],
      ['d1', 1 / (60 + 1) + 1 / (60 + 2)],
      ['d4', 1 / (60 + 3) + 1 / (60 + 2)],
      ['d3', 1 / (60 + 3) + 1 / (60 + 2)],
    ]);
    // q2: B returned nothing, so it contributes 0 to d5.
    expectList(listOf(out, table, 'q2'), [['d5', 1 / (60 + 1)]]);
  });

  it('a one-input fusion is the input re-scored by rank', () => {
    const { table, packed } = packAll(Q, A);
    const out = fuse(inputsOf(packed), rrf());
    expectList(listOf(out, table, 'q1'), [
      ['d1', 1 / (60 + 1)],
      ['d2', 1 / (60 + 2)],
      ['d3', 1 / (60 + 3)],
    ]);
  });

  it('empty inputs: a run with no entries changes nothing; all-empty gives empty lists', () => {
    const E = runOf({});
    const { table, packed } = packAll(Q, A, E);
    expectList(listOf(fuse(inputsOf(packed), rrf()), table, 'q1'), [
      ['d1', 1 / (60 + 1)],
      ['d2', 1 / (60 + 2)],
      ['d3', 1 / (60 + 3)],
    ]);
    const empty = packAll(Q, E, E);
    const out = fuse(inputsOf(empty.packed), rrf());
    expect([...out.offsets]).toEqual([0, 0, 0, 0]);
    expect(out.docs.length).toBe(0);
  });

  it('weight 0 and depth 0 inputs are not read', () => {
    const { table, packed } = packAll(Q, A, B);
    expectList(listOf(fuse(inputsOf(packed, [{}, { weight: 0 }]), rrf()), table, 'q1'), [
      ['d1', 1 / (60 + 1)],
      ['d2', 1 / (60 + 2)],
      ['d3', 1 / (60 + 3)],
    ]);
    expectList(listOf(fuse(inputsOf(packed, [{ depth: 0 }, {}]), rrf()), table, 'q1'), [
      ['d2', 1 / (60 + 1)],
      ['d4', 1 / (60 + 2)],
    ]);
  });
});

describe('score-based fusion', () => {
  // S: q1 d1 10, d2 6, d3 2 (min-max: 1, 0.5, 0; mean 6, sd sqrt(32/3)).  T: q1 d2 0.9, d4 0.3 (min-max 1, 0).
  const S = runOf({ q1: { d1: 10, d2: 6, d3: 2 } });
  const T = runOf({ q1: { d2: 0.9, d4: 0.3 } });

  it('combsum after min-max: Σ w_i (s - min) / (max - min)', () => {
    const { table, packed } = packAll(['q1'], S, T);
    const out = fuse(inputsOf(packed, [{ weight: 2 }, { weight: 1 }]), spec('combsum', 'min-max'));
    expectList(listOf(out, table, 'q1'), [
      ['d2', 2 * ((6 - 2) / (10 - 2)) + 1 * ((0.9 - 0.3) / (0.9 - 0.3))],
      ['d1', 2 * ((10 - 2) / (10 - 2))],
      ['d4', 0],
      ['d3', 0],
    ]);
  });

  it('combmnz: number of inputs holding the document times CombSUM', () => {
    const { table, packed } = packAll(['q1'], S, T);
    const out = fuse(inputsOf(packed), spec('combmnz', 'min-max'));
    expectList(listOf(out, table, 'q1'), [
      ['d2', 2 * ((6 - 2) / (10 - 2) + 1)],
      ['d1', 1 * 1],
      ['d4', 0],
      ['d3', 0],
    ]);
  });

  it('combsum without normalization adds raw scores', () => {
    const { table, packed } = packAll(['q1'], S, T);
    expectList(listOf(fuse(inputsOf(packed), spec('combsum', 'none')), table, 'q1'), [
      ['d1', 10],
      ['d2', 6 + 0.9],
      ['d3', 2],
      ['d4', 0.3],
    ]);
  });

  it('cc after z-score: Σ (w_i / Σw) (s - mean) / sd, population sd', () => {
    const { table, packed } = packAll(['q1'], S, T);
    const sdS = Math.sqrt(((10 - 6) ** 2 + 0 + (2 - 6) ** 2) / 3);
    const sdT = Math.sqrt(((0.9 - 0.6) ** 2 + (0.3 - 0.6) ** 2) / 2);
    const out = fuse(inputsOf(packed, [{ weight: 0.25 }, { weight: 0.75 }]), spec('cc', 'z-score'));
    expectList(listOf(out, table, 'q1'), [
      ['d2', 0.25 * ((6 - 6) / sdS) + 0.75 * ((0.9 - 0.6) / sdT)],
      ['d1', 0.25 * ((10 - 6) / sdS)],
      ['d3', 0.25 * ((2 - 6) / sdS)],
      ['d4', 0.75 * ((0.3 - 0.6) / sdT)],
    ]);
  });

  it('z-score with absent "min": a missing document gets the lowest z-score the input gave', () => {
    const { table, packed } = packAll(['q1'], S, T);
    const sdS = Math.sqrt(32 / 3);
    const sdT = 0.3;
    const zminS = (2 - 6) / sdS;
    const zminT = (0.3 - 0.6) / sdT;
    const out = fuse(inputsOf(packed), spec('combsum', 'z-score', { absent: 'min' }));
    expectList(listOf(out, table, 'q1'), [
      ['d2', 0 / sdS + (0.9 - 0.6) / sdT],
      ['d1', (10 - 6) / sdS + zminT],
      ['d4', zminS + zminT],
      ['d3', zminS + zminT],
    ]);
  });

  it('cc weights are divided by their sum', () => {
    const { table, packed } = packAll(['q1'], S, T);
    const out = fuse(inputsOf(packed, [{ weight: 3 }, { weight: 1 }]), spec('cc', 'min-max'));
    expectList(listOf(out, table, 'q1'), [
      ['d1', (3 * 1) / 4],
      ['d2', (3 * 0.5 + 1 * 1) / 4],
      ['d4', 0],
      ['d3', 0],
    ]);
  });

  it('tm2c2: (s - m) / (max - m) with the declared minimum, negative cosine scores included', () => {
    // Cosine input (m = -1): a 0.5, b -0.2, c -0.7.  BM25 input (m = 0): b 10, d 4.
    const cos = runOf({ q1: { a: 0.5, b: -0.2, c: -0.7 } });
    const bm = runOf({ q1: { b: 10, d: 4 } });
    const { table, packed } = packAll(['q1'], cos, bm);
    const inputs = inputsOf(packed, [
      { weight: 0.6, theoreticalMin: -1 },
      { weight: 0.4, theoreticalMin: 0 },
    ]);
    const out = fuse(inputs, spec('cc', 'tm2c2'));
    expectList(listOf(out, table, 'q1'), [
      ['b', (0.6 * ((-0.2 + 1) / (0.5 + 1)) + 0.4 * ((10 - 0) / (10 - 0))) / (0.6 + 0.4)],
      ['a', (0.6 * ((0.5 + 1) / (0.5 + 1))) / (0.6 + 0.4)],
      ['d', (0.4 * ((4 - 0) / (10 - 0))) / (0.6 + 0.4)],
      ['c', (0.6 * ((-0.7 + 1) / (0.5 + 1))) / (0.6 + 0.4)],
    ]);
    // min-max would send c, the cosine minimum, to 0: tm2c2 keeps its distance from the floor.
    expect(listOf(fuse(inputs, spec('cc', 'min-max')), table, 'q1').find(([d]) => d === 'c')![1]).toBe(0);
  });

  it('tm2c2 rejects a score below the declared minimum and an input without one', () => {
    const cos = runOf({ q1: { a: 0.5, b: -1.5 } });
    const { packed } = packAll(['q1'], cos);
    expect(() => fuse(inputsOf(packed, [{ theoreticalMin: -1 }]), spec('cc', 'tm2c2'))).toThrow(/below the declared theoretical minimum -1/);
    expect(() => fuse(inputsOf(packed), spec('cc', 'tm2c2'))).toThrow(FusionInputError);
  });

  it('cc after dbsf (Qdrant): (s - lo) / (hi - lo), lo and hi mean -/+ 3 sample sd (divisor n - 1)', () => {
    const { table, packed } = packAll(['q1'], S, T);
    // S: mean 6, sample sd sqrt(32 / 2) = 4, range [-6, 18].  T: mean 0.6, sample sd sqrt(0.18).
    const sdT = Math.sqrt((0.3 ** 2 + 0.3 ** 2) / 1);
    const phiT = (x: number) => (x - (0.6 - 3 * sdT)) / (6 * sdT);
    const out = fuse(inputsOf(packed, [{ weight: 0.25 }, { weight: 0.75 }]), spec('cc', 'dbsf'));
    expectList(listOf(out, table, 'q1'), [
      ['d2', 0.25 * ((6 + 6) / 24) + 0.75 * phiT(0.9)],
      ['d4', 0.75 * phiT(0.3)],
      ['d1', 0.25 * ((10 + 6) / 24)],
      ['d3', 0.25 * ((2 + 6) / 24)],
    ]);
  });

  it('dbsf is not clipped (as in Qdrant): an outlier past 3 sd maps above 1; absent "min" gives the last read value', () => {
    // 100 and eleven 0s: mean 100/12, sample sd sqrt((100 - mean)^2 + 11 mean^2) / 11), z of 100 ~3.18.
    const scores = Object.fromEntries([['a', 100], ...Array.from({ length: 11 }, (_, i) => [`z${i}`, 0])]);
    const { table, packed } = packAll(['q1'], runOf({ q1: scores }), runOf({ q1: { b: 1, c: 0 } }));
    const mean = 100 / 12;
    const sd = Math.sqrt(((100 - mean) ** 2 + 11 * mean ** 2) / 11);
    const out = listOf(fuse(inputsOf(packed), spec('combsum', 'dbsf', { absent: 'min' })), table, 'q1');
    const phiZero = (0 - (mean - 3 * sd)) / (6 * sd);
    const phiC = (0 - (0.5 - 3 * Math.sqrt(0.5))) / (6 * Math.sqrt(0.5));
    expect(out[0]![0]).toBe('a');
    expect(out[0]![1]).toBeCloseTo((100 - (mean - 3 * sd)) / (6 * sd) + phiC, 13);
    expect(out[0]![1] - phiC).toBeGreaterThan(1);
    expect(out.find(([d]) => d === 'c')![1]).toBeCloseTo(phiZero + phiC, 13);
  });

  it('degenerate lists: min-max max = min gives 1, z-score sd 0 gives 0, tm2c2 max = m gives 0', () => {
    const one = runOf({ q1: { a: 4 } });
    const flat = runOf({ q1: { b: 2, c: 2 } });
    const floor = runOf({ q1: { d: 0, e: 0 } });
    const { table, packed } = packAll(['q1'], one, flat, floor);
    const inputs = inputsOf(packed, [{ theoreticalMin: 0 }, { theoreticalMin: 0 }, { theoreticalMin: 0 }]);
    expectList(listOf(fuse(inputs, spec('combsum', 'min-max')), table, 'q1'), [
      ['e', 1],
      ['d', 1],
      ['c', 1],
      ['b', 1],
      ['a', 1],
    ]);
    expectList(listOf(fuse(inputs, spec('combsum', 'z-score')), table, 'q1'), [
      ['e', 0],
      ['d', 0],
      ['c', 0],
      ['b', 0],
      ['a', 0],
    ]);
    // dbsf: one document or all scores equal, 0.5, as Qdrant's distr_norm / norm give.
    expectList(listOf(fuse(inputs, spec('combsum', 'dbsf')), table, 'q1'), [
      ['e', 0.5],
      ['d', 0.5],
      ['c', 0.5],
      ['b', 0.5],
      ['a', 0.5],
    ]);
    expectList(listOf(fuse(inputs, spec('combsum', 'tm2c2')), table, 'q1'), [
      // a, b and c all reach 1 (their list's best): a tie, higher docId first.
      ['c', (2 - 0) / (2 - 0)],
      ['b', (2 - 0) / (2 - 0)],
      ['a', (4 - 0) / (4 - 0)],
      ['e', 0],
      ['d', 0],
    ]);
  });
});

describe('a fusion of a fusion', () => {
  it('feeds an rrf run into a tm2c2 fusion with fusedTheoreticalMin as its minimum', () => {
    const { table, packed } = packAll(['q1'], runOf({ q1: { d1: 3, d2: 2, d3: 1 } }), runOf({ q1: { d2: 5, d4: 4 } }), runOf({ q1: { d4: 0.8, d5: 0.1 } }));
    const inner = [...inputsOf(packed.slice(0, 2))];
    const rrfSpec = rrf();
    const fused = fuse(inner, rrfSpec);
    const m = fusedTheoreticalMin(inner, rrfSpec);
    expect(m).toBe(0);
    const outer: FusionInput[] = [
      { run: fused, weight: 0.5, depth: Infinity, theoreticalMin: m! },
      { run: packed[2]!, weight: 0.5, depth: Infinity, theoreticalMin: -1 },
    ];
    const out = fuse(outer, spec('cc', 'tm2c2'));
    // Inner: d2 = 1/62 + 1/61 (the max), d1 = 1/61, d4 = 1/62, d3 = 1/63. Outer cosine-like: d4 0.8, d5 0.1 (m = -1).
    const top = 1 / (60 + 2) + 1 / (60 + 1);
    expectList(listOf(out, table, 'q1'), [
      ['d4', 0.5 * (1 / (60 + 2) / top) + 0.5 * ((0.8 + 1) / (0.8 + 1))],
      ['d2', 0.5 * (top / top)],
      ['d5', 0.5 * ((0.1 + 1) / (0.8 + 1))],
      ['d1', 0.5 * (1 / (60 + 1) / top)],
      ['d3', 0.5 * (1 / (60 + 3) / top)],
    ]);
  });

  it('fusedTheoreticalMin per method and normalization', () => {
    const ins = [
      { weight: 2, theoreticalMin: -1 },
      { weight: 1, theoreticalMin: 0 },
    ];
    expect(fusedTheoreticalMin(ins, rrf())).toBe(0);
    expect(fusedTheoreticalMin(ins, spec('cc', 'min-max'))).toBe(0);
    expect(fusedTheoreticalMin(ins, spec('combmnz', 'tm2c2'))).toBe(0);
    expect(fusedTheoreticalMin(ins, spec('combsum', 'z-score'))).toBeUndefined();
    expect(fusedTheoreticalMin(ins, spec('cc', 'dbsf'))).toBeUndefined();
    expect(fusedTheoreticalMin(ins, spec('combsum', 'none'))).toBe(2 * -1 + 1 * 0);
    expect(fusedTheoreticalMin(ins, spec('cc', 'none'))).toBe((2 * -1 + 1 * 0) / (2 + 1));
    expect(fusedTheoreticalMin(ins, spec('combmnz', 'none'))).toBe(2 * (2 * -1 + 1 * 0));
    expect(fusedTheoreticalMin([{ weight: 1 }, { weight: 1, theoreticalMin: 0 }], spec('combsum', 'none'))).toBeUndefined();
  });
});

describe('contract', () => {
  it('never modifies its inputs', () => {
    const { packed } = packAll(Q, A, B);
    const before = packed.map((p) => [p.offsets.slice(), p.docs.slice(), p.scores.slice()]);
    fuse(inputsOf(packed), spec('combmnz', 'z-score', { absent: 'min' }));
    packed.forEach((p, i) => {
      expect(p.offsets).toEqual(before[i]![0]);
      expect(p.docs).toEqual(before[i]![1]);
      expect(p.scores).toEqual(before[i]![2]);
    });
  });

  it('rejects inputs over different query lists, bad weights, depths and specs', () => {
    const { packed } = packAll(Q, A, B);
    const other = packAll(['q1'], B).packed[0]!;
    expect(() => fuse([...inputsOf(packed), { run: other, weight: 1, depth: 1 }], rrf())).toThrow(/query list differs/);
    expect(() => fuse(inputsOf(packed, [{ weight: -1 }]), rrf())).toThrow(/weight must be/);
    expect(() => fuse(inputsOf(packed, [{ depth: 1.5 }]), rrf())).toThrow(/depth must be/);
    expect(() => fuse(inputsOf(packed, [{ weight: 0 }, { weight: 0 }]), rrf())).toThrow(/every input has weight 0 or depth 0/);
    expect(() => fuse(inputsOf(packed), rrf({ topK: 0 }))).toThrow(/topK/);
    expect(() => fuse([], rrf())).toThrow(/at least one input/);
  });
});

/** A direct transcription of the formulas over Maps: the reference the typed kernel must equal. */
function reference(runs: readonly PackedRun[], inputs: readonly FusionInput[], s: FusionSpec, q: number): [number, number][] {
  const scores = new Map<number, number>();
  const count = new Map<number, number>();
  const absent: number[] = [];
  const present: Map<number, number>[] = [];
  inputs.forEach((input, i) => {
    const run = runs[i]!;
    const from = run.offsets[q]!;
    const to = Math.min(run.offsets[q + 1]!, from + input.depth);
    const vals = new Map<number, number>();
    const raw = Array.from(run.scores.subarray(from, to));
    const n = raw.length;
    const phi = (x: number): number => {
      const max = raw[0]!;
      const min = raw[n - 1]!;
      if (s.normalization === 'min-max') return max === min ? 1 : (x - min) / (max - min);
      if (s.normalization === 'tm2c2') return max === input.theoreticalMin! ? 0 : (x - input.theoreticalMin!) / (max - input.theoreticalMin!);
      if (s.normalization === 'z-score') {
        const mean = raw.reduce((a, b) => a + b, 0) / n;
        const sd = Math.sqrt(raw.reduce((a, b) => a + (b - mean) ** 2, 0) / n);
        return sd === 0 ? 0 : (x - mean) / sd;
      }
      if (s.normalization === 'dbsf') {
        if (n < 2) return 0.5;
        // Qdrant's welfords_mean_variance, line for line.
        let mean = 0;
        let agg = 0;
        raw.forEach((v, k) => {
          const old = v - mean;
          mean += old / (k + 1);
          agg += old * (v - mean);
        });
        const sd = Math.sqrt(agg / (n - 1));
        const [lo, hi] = [mean - 3 * sd, mean + 3 * sd];
        return lo === hi ? 0.5 : (x - lo) / (hi - lo);
      }
      return x;
    };
    // w / (rrfK + r) as written in the formula; w·φ for scores.
    const gain = (x: number, r: number): number => (s.method === 'rrf' ? input.weight / (s.rrfK + r) : input.weight * phi(x));
    for (let e = from; e < to; e++) vals.set(run.docs[e]!, gain(run.scores[e]!, e - from + 1));
    present.push(vals);
    absent.push(n === 0 || s.absent === 'zero' ? 0 : gain(raw[n - 1]!, n));
  });
  const wsum = inputs.reduce((a, i) => a + i.weight, 0);
  for (const vals of present) for (const d of vals.keys()) count.set(d, (count.get(d) ?? 0) + 1);
  for (const d of count.keys()) {
    let sum = 0;
    present.forEach((vals, i) => (sum += vals.get(d) ?? absent[i]!));
    scores.set(d, s.method === 'cc' ? sum / wsum : s.method === 'combmnz' ? count.get(d)! * sum : sum);
  }
  return [...scores].sort((a, b) => b[1] - a[1] || b[0] - a[0]).slice(0, s.topK);
}

describe('against a direct transcription of the formulas (seeded random runs)', () => {
  const rng = new Rng(7);
  const nq = 6;
  const queries = Array.from({ length: nq }, (_, q) => `q${q}`);
  const runs = Array.from({ length: 4 }, (_, i) => {
    const offsets = new Int32Array(nq + 1);
    const docs: number[] = [];
    const scores: number[] = [];
    for (let q = 0; q < nq; q++) {
      const n = q === 0 ? 0 : rng.nextInt(40);
      const chosen = new Set<number>();
      while (chosen.size < n) chosen.add(rng.nextInt(60));
      for (const d of chosen) {
        docs.push(d);
        // Coarse scores so that ties occur; cosine-like inputs go negative.
        scores.push(i % 2 === 0 ? rng.nextInt(8) : rng.nextInt(9) / 4 - 1);
      }
      offsets[q + 1] = docs.length;
    }
    return packArrays(queries, offsets, Int32Array.from(docs), Float64Array.from(scores));
  });
  const cases: FusionSpec[] = [];
  for (const absent of ['zero', 'min'] as const) {
    // topK 2 takes the bounded-heap path (most unions here exceed 16 topK); topK 1000 the quickselect path.
    cases.push(rrf({ absent, topK: 2 }), rrf({ absent, topK: 15 }), rrf({ absent, rrfK: 0, topK: 1000 }), spec('combmnz', 'min-max', { absent, topK: 2 }));
    for (const method of ['combsum', 'combmnz', 'cc'] as const) {
      for (const normalization of ['none', 'min-max', 'z-score', 'tm2c2', 'dbsf'] as const) cases.push(spec(method, normalization, { absent, topK: 12 }));
    }
  }
  // Cut depths (some documents of the union unread) and full reads with weights summing to 1 take different
  // paths through the kernel; both must equal the transcription.
  const shapes = [
    { name: 'cut depths', weights: [0.5, 1, 2, 0.75], depths: [Infinity, 25, 10, 40] },
    { name: 'full reads', weights: [0.25, 0.25, 0.375, 0.125], depths: [Infinity, Infinity, Infinity, Infinity] },
  ];
  const grid = cases.flatMap((c) => shapes.map((shape) => ({ c, shape, name: `${c.method} ${c.normalization} ${c.absent} topK ${c.topK}, ${shape.name}` })));
  it.each(grid)('$name', ({ c, shape }) => {
    const inputs: FusionInput[] = runs.map((run, i) => ({ run, weight: shape.weights[i]!, depth: shape.depths[i]!, theoreticalMin: i % 2 === 0 ? 0 : -1 }));
    const out = fuse(inputs, c);
    for (let q = 0; q < nq; q++) {
      const got = Array.from(out.docs.subarray(out.offsets[q]!, out.offsets[q + 1]!));
      const want = reference(runs, inputs, c, q);
      expect(got).toEqual(want.map(([d]) => d));
      want.forEach(([, s], j) => expect(out.scores[out.offsets[q]! + j]!).toBeCloseTo(s, 12));
    }
  });
});

describe('the sampled-threshold path against the general path, bit for bit (bench-sized unions)', () => {
  // A weight-0 copy of input 0 leaves every score unchanged but makes the kernel count reads, which sends each
  // query through the general path (every fused score written, then bucket sort or bounded heap); without it
  // every document of the union is read and the sampled-threshold selection runs. Both must agree exactly.
  const rng = new Rng(23);
  const nq = 8;
  const queries = Array.from({ length: nq }, (_, q) => `q${q}`);
  const runs = Array.from({ length: 5 }, (_, i) => {
    const offsets = new Int32Array(nq + 1);
    const docs: number[] = [];
    const scores: number[] = [];
    for (let q = 0; q < nq; q++) {
      const n = 300 + rng.nextInt(700);
      const chosen = new Set<number>();
      while (chosen.size < n) chosen.add(rng.nextFloat() < 0.6 ? rng.nextInt(800) : rng.nextInt(20000));
      let s = i % 2 === 0 ? 20 : 0.9;
      for (const d of chosen) {
        docs.push(d);
        // Steps from a small set, so that fused scores tie.
        if (rng.nextFloat() < 0.9) s -= (i % 2 === 0 ? 0.01 : 0.0005) * (1 + rng.nextInt(3));
        scores.push(s);
      }
      offsets[q + 1] = docs.length;
    }
    return packArrays(queries, offsets, Int32Array.from(docs), Float64Array.from(scores));
  });
  const specs: FusionSpec[] = [];
  for (const topK of [1, 10, 100, 1000]) {
    specs.push(rrf({ topK }), rrf({ topK, rrfK: 0 }));
    for (const normalization of ['none', 'min-max', 'z-score', 'tm2c2', 'dbsf'] as const) {
      specs.push(spec('cc', normalization, { topK }), spec('combsum', normalization, { topK }));
    }
  }
  const weightings = [
    [1, 1, 1, 1, 1],
    [0.3, 1, 2.5, 0.7, 1.1],
    [0.1, 0.2, 0.3, 0.25, 0.15],
  ];
  const cases = specs.flatMap((s) =>
    weightings.map((weights) => ({ s, weights, name: `${s.method} ${s.normalization} topK ${s.topK}, weights ${weights.join(' ')}` })),
  );
  it.each(cases)('$name', ({ s, weights }) => {
    const inputs: FusionInput[] = runs.map((run, i) => ({ run, weight: weights[i]!, depth: Infinity, theoreticalMin: i % 2 === 0 ? 0 : -1 }));
    const fast = fuse(inputs, s);
    const general = fuse([...inputs, { ...inputs[0]!, weight: 0 }], s);
    expect(Array.from(fast.offsets)).toEqual(Array.from(general.offsets));
    expect(Array.from(fast.docs)).toEqual(Array.from(general.docs));
    expect(fast.scores.every((x, j) => Object.is(x, general.scores[j]))).toBe(true);
  });
});
