import { describe, expect, it } from 'vitest';
import { cohensDz, minimumDetectableEffect, pairedTTest, wilcoxonSignedRank, winTieLoss } from './paired.js';
import { normalSf } from './special.js';

describe('pairedTTest by hand', () => {
  it('d = b − a = [1, 2, 3]: mean 2, sd 1, t = 2/(1/√3) = 2√3, df 2', () => {
    const r = pairedTTest([0, 0, 0], [1, 2, 3]);
    expect(r.meanDiff).toBe(2);
    expect(r.df).toBe(2);
    expect(r.t).toBeCloseTo(2 * Math.sqrt(3), 14);
    // Two-sided p with 2 df: 1 − |t|/√(t² + 2) = 1 − 2√3/√14.
    expect(r.p).toBeCloseTo(1 - (2 * Math.sqrt(3)) / Math.sqrt(14), 13);
    // t_{0.975, 2} = (2·0.975 − 1)/√(2·0.975·0.025) = 0.95/√0.04875.
    const half = 0.95 / Math.sqrt(0.04875) / Math.sqrt(3);
    expect(r.ci95[0]).toBeCloseTo(2 - half, 12);
    expect(r.ci95[1]).toBeCloseTo(2 + half, 12);
  });

  it('is positive when the challenger b is better and flips sign with the order', () => {
    expect(pairedTTest([0.2, 0.4, 0.1], [0.5, 0.6, 0.2]).t).toBeGreaterThan(0);
    expect(pairedTTest([0.5, 0.6, 0.2], [0.2, 0.4, 0.1]).t).toBeLessThan(0);
  });

  it('degenerate differences: all zero → t 0, p 1; constant non-zero → t ∞, p 0', () => {
    expect(pairedTTest([0.3, 0.5], [0.3, 0.5])).toMatchObject({ t: 0, p: 1, meanDiff: 0, ci95: [0, 0] });
    expect(pairedTTest([0, 0.25], [0.5, 0.75])).toMatchObject({ t: Infinity, p: 0, meanDiff: 0.5 });
  });

  it('rejects mismatched lengths, non-finite values and n < 2', () => {
    expect(() => pairedTTest([1, 2], [1])).toThrow(/length/);
    expect(() => pairedTTest([1, Number.NaN], [1, 2])).toThrow(/a\[1\]/);
    expect(() => pairedTTest([1], [2])).toThrow(/at least 2/);
  });
});

describe('effect size, win/tie/loss, MDE by hand', () => {
  it('cohensDz = mean/sd = 2/1 for d = [1, 2, 3]', () => {
    expect(cohensDz([0, 0, 0], [1, 2, 3])).toBeCloseTo(2, 15);
  });

  it('winTieLoss counts d = b − a > 0, = 0, < 0', () => {
    expect(winTieLoss([0.5, 0.5, 0.5, 0.2], [0.7, 0.5, 0.1, 0.3])).toEqual({ wins: 2, ties: 1, losses: 1 });
  });

  it('MDE (t approximation): n = 3 → (t_{.975,2} + t_{.8,2})·σ/√3 with closed-form 2-df quantiles', () => {
    const q = (p: number): number => (2 * p - 1) / Math.sqrt(2 * p * (1 - p));
    expect(minimumDetectableEffect(3, 0.2)).toBeCloseTo(((q(0.975) + q(0.8)) * 0.2) / Math.sqrt(3), 13);
    expect(minimumDetectableEffect(2, 1, { alpha: 0.05, power: 0.8 })).toBeCloseTo((Math.tan(Math.PI * 0.475) + Math.tan(Math.PI * 0.3)) / Math.SQRT2, 12);
  });

  it('MDE tends to the normal formula (1.959964 + 0.841621)·σ/√n for large n', () => {
    expect(minimumDetectableEffect(100_000, 1) * Math.sqrt(100_000)).toBeCloseTo(1.959964 + 0.841621, 3);
  });
});

describe('wilcoxonSignedRank by hand', () => {
  it('d = [1, −2, 3, 4]: W+ = 1 + 3 + 4 = 8, W− = 2, T = 2', () => {
    const a = [0, 0, 0, 0];
    const b = [1, -2, 3, 4];
    // Exact: subsets of {1, 2, 3, 4} with sum <= 2 are {}, {1}, {2}: P(W <= 2) = 3/16, p = 2·3/16.
    expect(wilcoxonSignedRank(a, b, { method: 'exact' })).toEqual({ statistic: 2, p: 6 / 16, n: 4, method: 'exact' });
    // Approx: mean 4·5/4 = 5, variance 4·5·9/24 = 7.5, z = −3/√7.5.
    const approx = wilcoxonSignedRank(a, b, { method: 'approx' });
    expect(approx.statistic).toBe(2);
    expect(approx.p).toBeCloseTo(2 * normalSf(3 / Math.sqrt(7.5)), 15);
  });

  it('drops zeros and corrects the variance for ties: d = [1, 1, 2, −3, 0]', () => {
    // n = 4, |d| ranks 1.5, 1.5, 3, 4; W+ = 6, W− = 4, T = 4; one tie group of 2: Σ t(t² − 1) = 6;
    // σ² = (4·5·9 − 6/2)/24 = 177/24; z = (4 − 5)/σ.
    const r = wilcoxonSignedRank([0, 0, 0, 0, 0], [1, 1, 2, -3, 0], { method: 'approx' });
    expect(r.n).toBe(4);
    expect(r.statistic).toBe(4);
    expect(r.p).toBeCloseTo(2 * normalSf(1 / Math.sqrt(177 / 24)), 15);
  });

  it('exact with ties and a zero: d = [1, 1, 2, −3, 0] over the 16 sign flips of the non-zero ranks', () => {
    // Doubled ranks 3, 3, 6, 8; observed W+ = 1.5 + 1.5 + 3 = 6 (12 doubled). Subset sums of {3, 3, 6, 8}:
    // 0 3 3 6 6 8 9 9 11 11 12 14 14 17 17 20, six of them >= 12, so p = 2 · 6/16.
    const r = wilcoxonSignedRank([0, 0, 0, 0, 0], [1, 1, 2, -3, 0], { method: 'exact' });
    expect(r).toEqual({ statistic: 4, p: 12 / 16, n: 4, method: 'exact' });
    // n = 5 <= 13 with ties and zeros: auto enumerates too.
    expect(wilcoxonSignedRank([0, 0, 0, 0, 0], [1, 1, 2, -3, 0])).toEqual(r);
  });

  it('rejects unknown options instead of guessing', () => {
    expect(() => wilcoxonSignedRank([0], [1], { method: 'exakt' as never })).toThrow(/unknown method/);
    expect(() => wilcoxonSignedRank([0], [1], { zeroMethod: 'drop' as never })).toThrow(/unknown zeroMethod/);
  });

  it('all differences zero: n 0, p 1', () => {
    expect(wilcoxonSignedRank([0.1, 0.2], [0.1, 0.2], { method: 'approx' })).toEqual({ statistic: 0, p: 1, n: 0, method: 'approx' });
  });
});
