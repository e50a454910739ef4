import { describe, expect, it } from 'vitest';
import { Rng } from '../stats/rng.js';
import { SelectMemory } from './select-kernels.js';

/** The best k of (base + acc[l]) / div by a full comparator sort: score descending, then l descending. */
function byFullSort(acc: Float64Array, base: number, div: number, k: number): { locals: number[]; scores: number[] } {
  const scores = Array.from(acc, (a) => (base + a) / div);
  const locals = scores.map((_, l) => l).sort((a, b) => scores[b]! - scores[a]! || b - a);
  const top = locals.slice(0, k);
  return { locals: top, scores: top.map((l) => scores[l]!) };
}

interface Selected {
  readonly keep: number;
  readonly locals: number[];
  readonly scores: number[];
}

function select(memory: SelectMemory, acc: Float64Array, base: number, div: number, k: number): Selected {
  memory.acc.set(acc);
  const keep = memory.bestOfSums(base, div, acc.length, k);
  if (keep < 0) return { keep, locals: [], scores: [] };
  return { keep, locals: Array.from(memory.outL.subarray(0, keep)), scores: Array.from(memory.outS.subarray(0, keep)) };
}

describe('bestOfSums kernel: the js and wasm sets agree bit for bit, and with a full sort', () => {
  const capacity = 6000;
  const sets = { js: new SelectMemory(capacity, 'js'), wasm: new SelectMemory(capacity, 'wasm') };
  const rng = new Rng(45);
  const shapes: Record<string, () => number> = {
    'reciprocal-rank sums, many ties': () => 1 / (60 + rng.nextInt(1000)) + (rng.nextFloat() < 0.5 ? 1 / (60 + rng.nextInt(1000)) : 0),
    'spread scores': () => rng.nextFloat() * 40 - 20,
    'skewed, one outlier': () => (rng.nextFloat() < 0.002 ? 1e6 : rng.nextFloat() ** 8),
    'all equal': () => 0.25,
    'signed zeros and tiny values': () => [0, -0, Number.MIN_VALUE, -Number.MIN_VALUE][rng.nextInt(4)]!,
  };
  for (const [name, draw] of Object.entries(shapes)) {
    it(`${name}: the same count, positions and score bits in both sets; the full sort's where taken`, () => {
      let taken = 0;
      for (const size of [1, 7, 1000, 1003, 2999, capacity]) {
        const acc = Float64Array.from({ length: size }, draw);
        for (const [base, div] of [
          [0, 1],
          [0.5, 5],
          [-2, 0.3],
        ] as const) {
          for (const k of [1, 100, 1000, 7000]) {
            const js = select(sets.js, acc, base, div, k);
            const wasm = select(sets.wasm, acc, base, div, k);
            const where = `${name} size ${size} base ${base} div ${div} k ${k}`;
            expect(wasm.keep, where).toBe(js.keep);
            expect(wasm.locals, where).toEqual(js.locals);
            expect(
              wasm.scores.every((s, j) => Object.is(s, js.scores[j])),
              where,
            ).toBe(true);
            if (wasm.keep < 0) continue;
            taken++;
            const want = byFullSort(acc, base, div, k);
            expect(wasm.locals, where).toEqual(want.locals);
            expect(
              wasm.scores.every((s, j) => Object.is(s, want.scores[j])),
              where,
            ).toBe(true);
          }
        }
      }
      // The sampled path must run on the larger lists, not refuse them all.
      if (name !== 'signed zeros and tiny values') expect(taken).toBeGreaterThan(10);
    });
  }

  it('both sets refuse NaN, in the sample or between its positions', () => {
    for (const at of [8, 1998, 1999]) {
      const acc = Float64Array.from({ length: 2000 }, (_, l) => (l === at ? Number.NaN : l));
      for (const memory of Object.values(sets)) expect(select(memory, acc, 0, 1, 10).keep, `NaN at ${at}`).toBe(-1);
    }
  });

  it('a topK past 2^31 selects as topK = size (an i32 parameter would wrap it)', () => {
    const acc = Float64Array.from({ length: 3000 }, () => rng.nextFloat());
    for (const memory of Object.values(sets)) expect(select(memory, acc, 0, 1, 2 ** 32 + 5)).toEqual(select(memory, acc, 0, 1, 3000));
  });
});

describe('gatherIds kernel', () => {
  it('replaces the selected local positions by the union slice’s document indices, in both sets', () => {
    for (const set of ['js', 'wasm'] as const) {
      const memory = new SelectMemory(100, set, 400);
      new Int32Array(memory.buffer, memory.tailAt, 100).set(Int32Array.from({ length: 100 }, (_, l) => 1000 + 7 * l));
      memory.outL.set([99, 0, 42, 5]);
      memory.gatherIds(3, memory.tailAt);
      expect(Array.from(memory.outL.subarray(0, 4)), set).toEqual([1693, 1000, 1294, 5]);
    }
  });
});
