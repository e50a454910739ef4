import { describe, expect, it } from 'vitest';
import {
  adjustPValues,
  bootstrapCI,
  bootstrapCIMany,
  cohensDz,
  cohensKappa,
  pairedTTest,
  randomizationCI,
  randomizationCIMany,
  randomizationTest,
  randomizationTestMany,
  wilcoxonSignedRank,
  winTieLoss,
} from './index.js';

// Per-query values keyed by query id (what evaluate() returns) have no order to pair by. Read as vectors they
// have no length, and every function used to see an empty vector and return p = 1 or 0 wins: a plausible
// number. Each now throws a TypeError naming the argument.
// biome-ignore lint/suspicious/noExplicitAny: wrong types on purpose
const any = (v: unknown) => v as any;
const byQuery = new Map([
  ['q1', 0.5],
  ['q2', 0.25],
]);
const asObject = { q1: 0.5, q2: 0.25 };

describe('stats: a vector that is not one is a TypeError naming the argument', () => {
  const cases: [string, () => unknown, RegExp][] = [
    ['pairedTTest a Map', () => pairedTTest(any(byQuery), any(byQuery)), /^pairedTTest: a is a Map, not a vector; pass the per-query values as an array/],
    ['pairedTTest b an object', () => pairedTTest([0.1, 0.2], any(asObject)), /^pairedTTest: b is an object without a length, not a vector/],
    ['cohensDz a string', () => cohensDz(any('0.1 0.2'), [0.1, 0.2]), /^cohensDz: a is a string, not a vector/],
    ['winTieLoss undefined', () => winTieLoss(any(undefined), [0.1]), /^winTieLoss: a is undefined, not a vector/],
    ['wilcoxonSignedRank an object', () => wilcoxonSignedRank(any(asObject), any(asObject)), /^wilcoxonSignedRank: a is an object without a length/],
    ['randomizationTest a Set', () => randomizationTest(any(new Set([1])), [1]), /^randomizationTest: a is a Set, not a vector/],
    ['randomizationCI a Map', () => randomizationCI(any(byQuery)), /^randomizationCI: d is a Map, not a vector/],
    ['bootstrapCI an object', () => bootstrapCI(any(asObject)), /^bootstrapCI: values is an object without a length, not a vector/],
    ['bootstrapCIMany one Map', () => bootstrapCIMany([[0.1, 0.2], any(byQuery)]), /^bootstrapCIMany: values\[1\] is a Map, not a vector/],
    ['bootstrapCIMany not an array', () => bootstrapCIMany(any(new Map([['AP', [0.1]]]))), /^bootstrapCIMany: values must be an array of vectors; got a Map/],
    ['randomizationTestMany an object', () => randomizationTestMany(any({ a: [0.1] })), /^randomizationTestMany: diffs must be an array of difference vectors/],
    ['randomizationTestMany one Map', () => randomizationTestMany([any(byQuery)]), /^randomizationTestMany: diffs\[0\] is a Map/],
    ['randomizationCIMany alphas a number', () => randomizationCIMany([[0.1, 0.2]], any(0.05)), /^randomizationCI: alphas must be an array/],
    ['adjustPValues an object', () => adjustPValues(any({ AP: 0.01, RR: 0.04 })), /^adjustPValues: p is an object without a length, not a vector/],
    ['cohensKappa a Map', () => cohensKappa(any(new Map([['q1', 1]])), [1]), /^cohensKappa: a must be an array of ratings/],
  ];
  for (const [name, call, message] of cases) {
    it(name, () => {
      expect(call).toThrow(TypeError);
      expect(call).toThrow(message);
    });
  }

  it('arrays and typed arrays still work, with the same result', () => {
    const a = [0.1, 0.4, 0.3, 0.9];
    const b = [0.2, 0.5, 0.2, 1.0];
    expect(pairedTTest(Float64Array.from(a), Float64Array.from(b))).toEqual(pairedTTest(a, b));
    expect(randomizationTest(a, b, { seed: 7 })).toEqual(randomizationTest(Float64Array.from(a), Float64Array.from(b), { seed: 7 }));
  });
});
