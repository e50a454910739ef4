import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HarnessError } from '../errors.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { discordance, mcnemarExact } from './mcnemar.js';
import { freshScipyReference } from '../testing/scipy.js';

/**
 * Exact McNemar against scipy (scripts/reference/answer_reference.py: min(1, 2 binom.cdf(min(b, c), b + c, 1/2)),
 * which is statsmodels' mcnemar(exact=True), checked there against binomtest): its committed output always, a
 * fresh run when python3 with scipy is present; and sums worked by hand.
 */
interface Reference {
  readonly mcnemar: readonly { b: number; c: number; p: number }[];
}
const SCRIPT = join(PROJECT_ROOT, 'scripts', 'reference', 'answer_reference.py');
const committed = JSON.parse(readFileSync(join(PROJECT_ROOT, 'harness', 'stats', 'testdata', 'answer-reference.json'), 'utf8')) as Reference;

function checkAgainst(ref: Reference): void {
  expect(ref.mcnemar.length).toBeGreaterThanOrEqual(15);
  for (const { b, c, p } of ref.mcnemar) {
    const got = mcnemarExact(b, c);
    if (!(Math.abs(got - p) <= 1e-12 * p)) expect.fail(`mcnemarExact(${b}, ${c}): got ${got}, scipy ${p}`);
  }
}

describe('mcnemarExact', () => {
  it('is twice the binomial(b + c, 1/2) lower tail at min(b, c), worked by hand', () => {
    // C(22, i) for i = 0..5: 1 + 22 + 231 + 1540 + 7315 + 26334 = 35443; p = 2 · 35443 / 2^22, exact in doubles.
    expect(mcnemarExact(5, 17)).toBe((2 * 35443) / 2 ** 22);
    expect(mcnemarExact(17, 5)).toBe(mcnemarExact(5, 17));
    // All ten discordant questions favour one system: 2 · 2^-10.
    expect(mcnemarExact(10, 0)).toBe(2 / 1024);
    // Nothing discordant, or as balanced as the counts allow: no evidence either way.
    expect(mcnemarExact(0, 0)).toBe(1);
    expect(mcnemarExact(1, 0)).toBe(1);
    expect(mcnemarExact(150, 151)).toBe(1);
    expect(mcnemarExact(40, 40)).toBe(1);
  });

  it('agrees with scipy on the committed reference, n up to 8,200 and p down to 1e-18', () => {
    checkAgainst(committed);
  });

  it('agrees with a fresh run of the reference script (skipped without python3 + scipy)', (ctx) => {
    const fresh = freshScipyReference<Reference>(ctx, 'mcnemar.test.ts', SCRIPT);
    if (fresh) checkAgainst(fresh);
  }, 60_000);

  it('refuses counts that are not whole numbers >= 0', () => {
    for (const [b, c] of [
      [-1, 3],
      [2.5, 3],
      [3, Number.NaN],
      [3, Number.POSITIVE_INFINITY],
    ] as const) {
      expect(() => mcnemarExact(b, c)).toThrow(HarnessError);
    }
    expect(() => mcnemarExact(-1, 3)).toThrow(/b is -1; a discordant count must be a whole number >= 0/);
  });
});

describe('discordance', () => {
  it('splits two outcome vectors into both, only A, only B and neither', () => {
    expect(discordance([1, 1, 0, 0, 1, 0], [1, 0, 1, 0, 0, 0])).toEqual({ both: 1, onlyA: 2, onlyB: 1, neither: 2 });
    expect(discordance([true, false], [true, true])).toEqual({ both: 1, onlyA: 0, onlyB: 1, neither: 0 });
    expect(discordance([], [])).toEqual({ both: 0, onlyA: 0, onlyB: 0, neither: 0 });
  });

  it('feeds McNemar its discordant counts', () => {
    const a = [...Array(17).fill(1), ...Array(5).fill(0), ...Array(30).fill(1)];
    const b = [...Array(17).fill(0), ...Array(5).fill(1), ...Array(30).fill(1)];
    const d = discordance(a, b);
    expect(mcnemarExact(d.onlyA, d.onlyB)).toBe((2 * 35443) / 2 ** 22);
  });

  it('refuses outcomes that are not 0 or 1, and vectors of different lengths', () => {
    expect(() => discordance([1, 2], [1, 0])).toThrow(/a\[1\] is 2; an outcome must be 0 or 1/);
    expect(() => discordance([1, 0], [0.5, 0])).toThrow(/b\[0\] is 0.5/);
    expect(() => discordance([Number.NaN], [0])).toThrow(HarnessError);
    expect(() => discordance([1], [1, 0])).toThrow(/a has 1 outcomes but b has 2/);
  });
});
