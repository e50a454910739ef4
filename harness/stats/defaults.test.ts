import { describe, expect, it } from 'vitest';
import {
  adjustPValues,
  bootstrapCI,
  bootstrapCIMany,
  cohensKappa,
  minimumDetectableEffect,
  randomizationCI,
  randomizationTest,
  randomizationTestMany,
  wilcoxonSignedRank,
} from './index.js';

// Every exported statistic runs with only its data; each default equals the config's (harness/compare/config.ts)
// or the reference library's, written out here so a changed default fails a test.
describe('defaults of the exported statistics', () => {
  const a = [0.1, 0.4, 0.35, 0.8, 0.5, 0.2, 0.9, 0.3, 0.45, 0.6, 0.15, 0.7, 0.05, 0.55, 0.25];
  const b = a.map((x, i) => Math.min(1, x + (i % 4) * 0.05 - 0.02));
  const d = b.map((x, i) => x - (a[i] as number));

  it('randomization: 10,000 sign flips, seed 42; its interval at 95%', () => {
    expect(randomizationTest(a, b)).toEqual(randomizationTest(a, b, { permutations: 10_000, seed: 42 }));
    expect(randomizationTestMany([d])).toEqual(randomizationTestMany([d], { permutations: 10_000, seed: 42 }));
    expect(randomizationCI(d)).toEqual(randomizationCI(d, { alpha: 0.05, permutations: 10_000, seed: 42 }));
  });

  it("bootstrap: 10,000 resamples, seed 42, BCa at 95% (scipy's method)", () => {
    const explicit = { resamples: 10_000, seed: 42, level: 0.95, method: 'bca' as const };
    expect(bootstrapCI(d)).toEqual(bootstrapCI(d, explicit));
    expect(bootstrapCIMany([d])).toEqual(bootstrapCIMany([d], explicit));
  });

  it("Wilcoxon: scipy's auto, wilcox, no continuity correction", () => {
    expect(wilcoxonSignedRank(a, b)).toEqual(wilcoxonSignedRank(a, b, { method: 'auto', zeroMethod: 'wilcox', correction: false }));
  });

  it('adjustment: Holm; kappa: unweighted over the observed labels; MDE: alpha 0.05, power 0.8', () => {
    const p = [0.01, 0.04, 0.03];
    expect(adjustPValues(p)).toEqual(adjustPValues(p, 'holm'));
    expect(cohensKappa([0, 1, 2, 1], [0, 2, 2, 1])).toEqual(cohensKappa([0, 1, 2, 1], [0, 2, 2, 1], { weights: 'none', labels: [0, 1, 2] }));
    expect(minimumDetectableEffect(30, 0.2)).toBe(minimumDetectableEffect(30, 0.2, { alpha: 0.05, power: 0.8 }));
  });
});
