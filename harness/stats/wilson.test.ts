import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../testing/shared.js';
import { wilsonInterval } from './wilson.js';
import { freshScipyReference } from '../testing/scipy.js';

/**
 * scipy's Wilson intervals (scripts/reference/answer_reference.py: binomtest(k, n).proportion_ci(level,
 * method="wilson")): its committed output always, a fresh run when python3 with scipy is present.
 */
interface Reference {
  readonly wilson: readonly { k: number; n: number; level: number; low: number; high: number }[];
}
const SCRIPT = join(PROJECT_ROOT, 'scripts', 'reference', 'answer_reference.py');
const committed = JSON.parse(readFileSync(join(PROJECT_ROOT, 'harness', 'stats', 'testdata', 'answer-reference.json'), 'utf8')) as Reference;

function checkAgainst(ref: Reference): void {
  expect(ref.wilson.length).toBeGreaterThanOrEqual(50);
  for (const { k, n, level, low, high } of ref.wilson) {
    const [l, h] = wilsonInterval(k, n, level);
    if (!(Math.abs(l - low) <= 1e-12 && Math.abs(h - high) <= 1e-12))
      expect.fail(`wilsonInterval(${k}, ${n}, ${level}): got [${l}, ${h}], scipy [${low}, ${high}]`);
  }
}

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

describe('wilsonInterval against scipy', () => {
  it('agrees with the committed reference to 1e-12, bounds of 0 and 1 exactly at k = 0 and k = n', () => {
    checkAgainst(committed);
    for (const c of committed.wilson) {
      if (c.k === 0) expect(wilsonInterval(c.k, c.n, c.level)[0]).toBe(0);
      if (c.k === c.n) expect(wilsonInterval(c.k, c.n, c.level)[1]).toBe(1);
    }
  });

  it('agrees with a fresh run of the reference script (skipped without python3 + scipy)', (ctx) => {
    const fresh = freshScipyReference<Reference>(ctx, 'wilson.test.ts', SCRIPT);
    if (fresh) checkAgainst(fresh);
  }, 60_000);
});
