import { describe, expect, it } from 'vitest';
import { adjustPValues } from './adjust.js';

const expectClose = (actual: Float64Array, expected: number[]): void => {
  expect(actual.length).toBe(expected.length);
  expected.forEach((e, i) => expect(actual[i]).toBeCloseTo(e, 14));
};

describe('adjustPValues by hand on p = [0.01, 0.04, 0.03] (m = 3)', () => {
  const p = [0.01, 0.04, 0.03];
  it('holm: sorted .01, .03, .04 times 3, 2, 1 = .03, .06, .04; running max .03, .06, .06', () => {
    expectClose(adjustPValues(p, 'holm'), [0.03, 0.06, 0.06]);
  });
  it('bonferroni: times 3', () => {
    expectClose(adjustPValues(p, 'bonferroni'), [0.03, 0.12, 0.09]);
  });
  it('bh: m·p/rank = .03, .045, .04; running min from the top = .03, .04, .04', () => {
    expectClose(adjustPValues(p, 'bh'), [0.03, 0.04, 0.04]);
  });
  it('by: bh times 1 + 1/2 + 1/3 = 11/6', () => {
    expectClose(adjustPValues(p, 'by'), [(0.03 * 11) / 6, (0.04 * 11) / 6, (0.04 * 11) / 6]);
  });
  it('hommel: size 3 cim = min(.03, .045, .04) = .03; size 2 cim = min(.06, .04) = .04 → .03, .04, .04', () => {
    expectClose(adjustPValues(p, 'hommel'), [0.03, 0.04, 0.04]);
  });
});

describe('adjustPValues edge cases', () => {
  it('caps at 1 and keeps input order', () => {
    expectClose(adjustPValues([0.6, 0.5], 'bonferroni'), [1, 1]);
    expectClose(adjustPValues([0.9, 0.2], 'holm'), [0.9, 0.4]);
  });
  it('rejects an empty family and p outside [0, 1]', () => {
    expect(() => adjustPValues([], 'holm')).toThrow(/empty/);
    expect(() => adjustPValues([0.1, Number.NaN], 'holm')).toThrow(/p\[1\]/);
    expect(() => adjustPValues([1.2], 'bh')).toThrow(/\[0, 1\]/);
  });
});
