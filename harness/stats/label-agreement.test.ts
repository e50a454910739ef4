import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HarnessError } from '../errors.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { gwetAC1, krippendorffAlphaOrdinal } from './label-agreement.js';

/**
 * Published worked examples, then an independent Python implementation written from the definitions
 * (scripts/reference/agreement_reference.py: alpha in its pairwise form, not through the coincidence matrix)
 * on random inputs: its committed output always, a fresh run when python3 with numpy is present.
 */
interface Reference {
  readonly alpha: { units: (number | null)[][]; alpha: number }[];
  readonly ac1: { a: number[]; b: number[]; ac1: number }[];
}
const SCRIPT = join(PROJECT_ROOT, 'scripts', 'reference', 'agreement_reference.py');
const committed = JSON.parse(readFileSync(join(PROJECT_ROOT, 'harness', 'stats', 'testdata', 'agreement-reference.json'), 'utf8')) as Reference;

function close(actual: number, expected: number, what: string): void {
  if (!(Math.abs(actual - expected) <= 1e-12 * Math.max(1, Math.abs(expected)))) expect.fail(`${what}: got ${actual}, reference ${expected}`);
}

function checkAgainst(ref: Reference): void {
  expect(ref.alpha.length).toBeGreaterThanOrEqual(25);
  expect(ref.ac1.length).toBeGreaterThanOrEqual(25);
  ref.alpha.forEach((c, k) => close(krippendorffAlphaOrdinal(c.units), c.alpha, `alpha case ${k}`));
  ref.ac1.forEach((c, k) => close(gwetAC1(c.a, c.b), c.ac1, `AC1 case ${k}`));
}

describe("Krippendorff's alpha (ordinal): Krippendorff's worked example", () => {
  // K. Krippendorff, "Computing Krippendorff's Alpha-Reliability" (2011, Annenberg School for Communication,
  // repository.upenn.edu/asc_papers/43): 4 coders, 12 units, missing values; it states α for the nominal,
  // ordinal and interval metrics, the ordinal one 0.815, which the krippendorff Python package's test suite
  // (pln-fing-udelar/fast-krippendorff, tests/test_krippendorff.py) checks too. Unit 12 has one grade only
  // and is not pairable.
  const byCoder: (number | null)[][] = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, null, null, null],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, null, 3],
    [null, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, null],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, null],
  ];
  const units = (byCoder[0] as (number | null)[]).map((_, u) => byCoder.map((coder) => coder[u] as number | null));

  it('gives 0.815', () => {
    expect(krippendorffAlphaOrdinal(units)).toBeCloseTo(0.815, 3);
    // The reference script's value for the same data, to full precision.
    expect(krippendorffAlphaOrdinal(units)).toBeCloseTo(0.8153875037548813, 13);
  });

  it('depends only on the order of the grades, and is 1 for perfect agreement', () => {
    const stretched = units.map((u) => u.map((g) => (g === null ? null : ([0, 0, 0.1, 7, 8, 100][g] as number))));
    expect(krippendorffAlphaOrdinal(stretched)).toBeCloseTo(krippendorffAlphaOrdinal(units), 14);
    expect(
      krippendorffAlphaOrdinal([
        [0, 0, null],
        [3, 3, 3],
        [1, null, 1],
      ]),
    ).toBe(1);
  });

  it('throws a clear error when no unit is pairable or there is no variation', () => {
    expect(() =>
      krippendorffAlphaOrdinal([
        [1, null],
        [null, 2],
      ]),
    ).toThrow(HarnessError);
    expect(() =>
      krippendorffAlphaOrdinal([
        [1, null],
        [null, 2],
      ]),
    ).toThrow(/no unit has grades from 2 or more coders/);
    expect(() =>
      krippendorffAlphaOrdinal([
        [2, 2],
        [2, null],
        [2, 2],
      ]),
    ).toThrow(/every pairable grade is 2; alpha is undefined without variation/);
    // A unit with a single different grade is not pairable, so it does not rescue the variation.
    expect(() =>
      krippendorffAlphaOrdinal([
        [2, 2],
        [3, null],
      ]),
    ).toThrow(/every pairable grade is 2/);
  });

  it('refuses ragged units and non-finite grades, naming the cell', () => {
    expect(() => krippendorffAlphaOrdinal([[1, 2], [1]])).toThrow(/units\[1\] has 1 grades but units\[0\] has 2/);
    expect(() => krippendorffAlphaOrdinal([[1, Number.NaN]])).toThrow(/units\[0\]\[1\] is NaN/);
  });
});

describe("Gwet's AC1: the irrCAC package's worked example", () => {
  // irrCAC vignette "Calculating Chance-corrected Agreement Coefficients" (K. L. Gwet,
  // cran.r-project.org/web/packages/irrCAC/vignettes/overview.html): the cont3x3abstractors table
  // (rows rater 1, columns rater 2; Ectopic, AIU, NIU) gives Gwet's AC1 0.8493305 (Cohen's kappa 0.7964094).
  const table = [
    [13, 0, 0],
    [0, 20, 7],
    [0, 4, 56],
  ];
  const a: number[] = [];
  const b: number[] = [];
  table.forEach((row, i) =>
    row.forEach((count, j) => {
      for (let t = 0; t < count; t++) {
        a.push(i);
        b.push(j);
      }
    }),
  );

  it('gives 0.8493305', () => {
    expect(gwetAC1(a, b)).toBeCloseTo(0.8493305, 7);
  });

  it('stays high where one category dominates and kappa collapses (the paradox AC1 answers)', () => {
    // 95 items both call 1, 5 that one rater calls 0: raw agreement 0.95, Cohen's kappa 0.
    const x = Array.from({ length: 100 }, () => 1);
    const y = x.map((v, i) => (i < 5 ? 0 : v));
    // π_0 = 0.025, π_1 = 0.975, p_e = 2·0.025·0.975 = 0.04875; AC1 = (0.95 − 0.04875)/(1 − 0.04875).
    expect(gwetAC1(x, y)).toBeCloseTo((0.95 - 0.04875) / (1 - 0.04875), 14);
  });

  it('throws a clear error for a single category, mismatched lengths and bad ratings', () => {
    expect(() => gwetAC1([2, 2, 2], [2, 2, 2])).toThrow(HarnessError);
    expect(() => gwetAC1([2, 2, 2], [2, 2, 2])).toThrow(/only the category 2; AC1 is undefined with a single category/);
    expect(() => gwetAC1([1, 2], [1])).toThrow(/a has 2 ratings but b has 1/);
    expect(() => gwetAC1([], [])).toThrow(/no rated items/);
    expect(() => gwetAC1([1, Number.POSITIVE_INFINITY], [1, 2])).toThrow(/a\[1\] is Infinity/);
  });
});

describe('label agreement against the reference script', () => {
  it('agrees with the committed output on random inputs (missing grades, 2-5 coders, uneven grade values)', () => {
    checkAgainst(committed);
  });

  it('agrees with a fresh run of the reference script (skipped without python3 + numpy)', (ctx) => {
    const probe = spawnSync('python3', ['-c', 'import numpy'], { encoding: 'utf8' });
    if (probe.status !== 0) {
      console.log(
        `label-agreement.test.ts: live reference skipped: python3 with numpy is not available (${probe.error?.message ?? probe.stderr.trim().split('\n').at(-1)})`,
      );
      ctx.skip();
      return;
    }
    const run = spawnSync('python3', [SCRIPT, '--stdout'], { encoding: 'utf8', maxBuffer: 64 << 20 });
    expect(run.status, run.stderr).toBe(0);
    checkAgainst(JSON.parse(run.stdout) as Reference);
  }, 60_000);
});
