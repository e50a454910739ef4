import { describe, expect, it } from 'vitest';
import { cohensKappa } from './kappa.js';

describe('cohensKappa by hand', () => {
  // a: 1 1 0 0 1 0 1 1;  b: 1 0 0 0 1 1 1 1 → confusion (rows a) [[2, 1], [1, 4]], n = 8.
  const a = [1, 1, 0, 0, 1, 0, 1, 1];
  const b = [1, 0, 0, 0, 1, 1, 1, 1];
  it('2 x 2: p_o = 6/8, p_e = (3·3 + 5·5)/64 = 34/64, κ = (p_o − p_e)/(1 − p_e) = 7/15', () => {
    const r = cohensKappa(a, b, { weights: 'none' });
    expect(r.confusion).toEqual([
      [2, 1],
      [1, 4],
    ]);
    expect(r.labels).toEqual([0, 1]);
    expect(r.n).toBe(8);
    expect(r.observed).toBeCloseTo(6 / 8, 15);
    expect(r.expected).toBeCloseTo(34 / 64, 15);
    expect(r.kappa).toBeCloseTo(7 / 15, 15);
    // With two labels every weighting is the same.
    expect(cohensKappa(a, b, { weights: 'quadratic' }).kappa).toBeCloseTo(7 / 15, 15);
  });

  it('3 labels, a = [0, 1, 2], b = [0, 2, 2]: linear 1 − 1/3 = 2/3, quadratic 1 − 1/5 = 0.8', () => {
    // rows (1, 1, 1), cols (1, 0, 2); Σw·O = 1 (one 1→2 cell); Σw·E = (1/3)Σ_i Σ_j w_ij col_j:
    // linear (4 + 3 + 2)/3 = 3, quadratic (8 + 3 + 4)/3 = 5.
    expect(cohensKappa([0, 1, 2], [0, 2, 2], { weights: 'linear' }).kappa).toBeCloseTo(2 / 3, 15);
    expect(cohensKappa([0, 1, 2], [0, 2, 2], { weights: 'quadratic' }).kappa).toBeCloseTo(0.8, 15);
  });

  it('uses the given label order, including labels nobody used', () => {
    const r = cohensKappa([1, 2], [1, 2], { weights: 'none', labels: [0, 1, 2, 3] });
    expect(r.confusion).toEqual([
      [0, 0, 0, 0],
      [0, 1, 0, 0],
      [0, 0, 1, 0],
      [0, 0, 0, 0],
    ]);
    expect(r.kappa).toBe(1);
  });

  it('refuses ratings outside the labels, unequal lengths and the undefined single-label case', () => {
    expect(() => cohensKappa([0, 5], [0, 1], { weights: 'none', labels: [0, 1] })).toThrow(/a\[1\] = 5/);
    expect(() => cohensKappa([0], [0, 1], { weights: 'none' })).toThrow(/length/);
    expect(() => cohensKappa([1, 1], [1, 1], { weights: 'none' })).toThrow(/undefined/);
  });
});
