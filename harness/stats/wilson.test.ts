import { describe, expect, it } from 'vitest';
import { wilsonInterval } from './wilson.js';

describe('wilsonInterval', () => {
  it("reproduces Newcombe's (1998) worked examples of the Wilson score interval (Table I, method 3)", () => {
    // Newcombe, Stat. Med. 17:857-872, Table I: 81/263, 15/148, 0/20, 1/29 at 95%.
    const cases: [number, number, number, number][] = [
      [81, 263, 0.2553, 0.3662],
      [15, 148, 0.0624, 0.1605],
      [0, 20, 0, 0.1611],
      [1, 29, 0.0061, 0.1718],
    ];
    for (const [x, n, lo, hi] of cases) {
      const [l, h] = wilsonInterval(x, n);
      expect(l).toBeCloseTo(lo, 4);
      expect(h).toBeCloseTo(hi, 4);
    }
  });
  it('is symmetric under x -> n - x, narrows with n, and widens with the level', () => {
    const [l, h] = wilsonInterval(3, 10);
    const [l2, h2] = wilsonInterval(7, 10);
    expect(l).toBeCloseTo(1 - h2, 12);
    expect(h).toBeCloseTo(1 - l2, 12);
    expect(wilsonInterval(30, 100)[1] - wilsonInterval(30, 100)[0]).toBeLessThan(h - l);
    expect(wilsonInterval(3, 10, 0.99)[1]).toBeGreaterThan(h);
    expect(wilsonInterval(10, 10)).toEqual([expect.closeTo(0.7225, 4), 1]);
  });
  it('refuses counts that are not a proportion', () => {
    expect(() => wilsonInterval(1, 0)).toThrow(/n must be a positive integer/);
    expect(() => wilsonInterval(5, 4)).toThrow(/successes must be an integer in \[0, 4\]/);
    expect(() => wilsonInterval(1, 4, 1)).toThrow(/level/);
  });
});
