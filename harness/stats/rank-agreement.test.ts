import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HarnessError } from '../errors.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { kendallTau, rankAgreementInterval, tauAP } from './rank-agreement.js';
import { createRng } from './rng.js';

/**
 * Kendall's tau-b against scipy.stats.kendalltau and tau_AP against a brute-force enumeration of the paper's
 * definition, both from scripts/reference/rank_reference.py: its committed output always, a fresh run when
 * python3 with scipy is present.
 */
interface RankCase {
  readonly a: number[];
  readonly b: number[];
  readonly tau: number | null;
  readonly tauAP: number;
  readonly tauAPReversed: number;
}
const SCRIPT = join(PROJECT_ROOT, 'scripts', 'reference', 'rank_reference.py');
const committed = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'harness', 'stats', 'testdata', 'rank-reference.json'), 'utf8')) as { cases: RankCase[] }).cases;

function close(actual: number, expected: number, what: string): void {
  if (!(Math.abs(actual - expected) <= 1e-12 * Math.max(1, Math.abs(expected)))) expect.fail(`${what}: got ${actual}, reference ${expected}`);
}

function checkAgainst(cases: readonly RankCase[]): void {
  expect(cases.length).toBeGreaterThanOrEqual(40);
  cases.forEach((c, k) => {
    const what = `case ${k} a=${JSON.stringify(c.a)} b=${JSON.stringify(c.b)}`;
    if (c.tau === null) expect(kendallTau(c.a, c.b), what).toBeNaN();
    else close(kendallTau(c.a, c.b), c.tau, `${what} tau`);
    close(tauAP(c.a, c.b), c.tauAP, `${what} tauAP`);
    close(tauAP(c.b, c.a), c.tauAPReversed, `${what} tauAP reversed`);
  });
}

describe('kendallTau and tauAP against the reference script', () => {
  it('agree with the committed scipy / brute-force output (ties in one and in both rankings included)', () => {
    checkAgainst(committed);
  });

  it('agree with a fresh run of the reference script (skipped without python3 + scipy)', (ctx) => {
    const probe = spawnSync('python3', ['-c', 'import numpy, scipy'], { encoding: 'utf8' });
    if (probe.status !== 0) {
      console.log(
        `rank-agreement.test.ts: live reference skipped: python3 with scipy is not available (${probe.error?.message ?? probe.stderr.trim().split('\n').at(-1)})`,
      );
      ctx.skip();
      return;
    }
    const run = spawnSync('python3', [SCRIPT, '--stdout'], { encoding: 'utf8', maxBuffer: 64 << 20 });
    expect(run.status, run.stderr).toBe(0);
    checkAgainst((JSON.parse(run.stdout) as { cases: RankCase[] }).cases);
  }, 120_000);
});

describe('tauAP by hand (Yilmaz, Aslam & Robertson 2008)', () => {
  // Reference ranking A > B > C > D. tau_AP = 2/(N-1) · Σ_{i≥2} C(i)/(i-1) − 1, walking the other ranking.
  const reference = [4, 3, 2, 1];

  it('a swap at the top (B A C D): C = 0/1, 2/2, 3/3, so tau_AP = 2/3·2 − 1 = 1/3 while tau is 2/3', () => {
    const other = [3, 4, 2, 1];
    expect(tauAP(reference, other)).toBeCloseTo(1 / 3, 15);
    expect(kendallTau(reference, other)).toBeCloseTo(2 / 3, 15);
  });

  it('the same swap at the bottom (A B D C): C = 1/1, 2/2, 2/3, so tau_AP = 2/3·8/3 − 1 = 7/9, tau still 2/3', () => {
    const other = [4, 3, 1, 2];
    expect(tauAP(reference, other)).toBeCloseTo(7 / 9, 15);
    expect(kendallTau(reference, other)).toBeCloseTo(2 / 3, 15);
  });

  it('is 1 for identical rankings (ties included), −1 for reversed ones without ties', () => {
    expect(tauAP(reference, reference)).toBe(1);
    expect(tauAP([1, 1, 2, 3], [5, 5, 6, 7])).toBe(1);
    expect(tauAP(reference, [1, 2, 3, 4])).toBe(-1);
    expect(kendallTau(reference, [1, 2, 3, 4])).toBe(-1);
  });

  it('equals tau where the two coincide: two systems (one pair, C(2) is 0 or 1), and no ties', () => {
    expect(tauAP([1, 2], [3, 4])).toBe(kendallTau([1, 2], [3, 4]));
    expect(tauAP([1, 2], [4, 3])).toBe(kendallTau([1, 2], [4, 3]));
    // With three systems they part: one swap at the top costs tau_AP more than tau.
    expect(tauAP([3, 2, 1], [2, 3, 1])).toBeLessThan(kendallTau([3, 2, 1], [2, 3, 1]));
  });

  it('is not symmetric: the reference comes first', () => {
    expect(tauAP([4, 3, 2, 1], [3, 4, 2, 1])).not.toBeCloseTo(tauAP([3, 1, 4, 2], [4, 3, 2, 1]), 3);
    const a = [0.67, 0.45, 0.29, 0.12, 0.57, 0.24, 0.94, 0.75, 0.08, 0.54];
    const b = [0.48, 0.68, 0.32, 0.09, 0.06, 0.61, 0.87, 0.22, 0.44, 0.84];
    expect(tauAP(a, b)).not.toBeCloseTo(tauAP(b, a), 3);
  });

  it("matches the R package ircor's documented example: tauAP 0.3928571, and tauAP_a 0.39903 with ties in the estimate", () => {
    // https://rdrr.io/cran/ircor/man/tauAP.html (Urbano & Marrero's package): x true scores, y estimated.
    const x = [0.67, 0.45, 0.29, 0.12, 0.57, 0.24, 0.94, 0.75, 0.08, 0.54];
    const y = [0.48, 0.68, 0.32, 0.09, 0.06, 0.61, 0.87, 0.22, 0.44, 0.84];
    expect(tauAP(x, y)).toBeCloseTo(0.3928571, 7);
    expect(
      tauAP(
        x,
        y.map((v) => Math.round(v * 10) / 10),
      ),
    ).toBeCloseTo(0.39903, 5);
  });
});

describe('kendallTau and tauAP input errors', () => {
  it('refuses length mismatches, fewer than 2 systems and non-finite scores', () => {
    expect(() => kendallTau([1, 2], [1, 2, 3])).toThrow(HarnessError);
    expect(() => kendallTau([1, 2], [1, 2, 3])).toThrow(/a has 2 systems but b has 3/);
    expect(() => tauAP([1], [1])).toThrow(/at least 2 systems/);
    expect(() => tauAP([1, Number.NaN], [1, 2])).toThrow(/reference\[1\] is NaN/);
  });
});

/** S systems × Q queries: system s has true level s/S; the judge sees it plus `noise`. */
function matrices(S: number, Q: number, noise: number, seed: number): { human: number[][]; judge: number[][] } {
  const rng = createRng(seed);
  const human = Array.from({ length: S }, (_, s) => Array.from({ length: Q }, () => s / S + 0.5 * rng.nextFloat()));
  const judge = human.map((row) => row.map((v) => v + noise * (rng.nextFloat() - 0.5)));
  return { human, judge };
}

describe('rankAgreementInterval', () => {
  const o = { resamples: 400, seed: 7, level: 0.95 };

  it('its value is the statistic on the systems means over all queries', () => {
    const { human, judge } = matrices(6, 30, 1, 1);
    const mean = (row: number[]) => row.reduce((a, b) => a + b, 0) / row.length;
    expect(rankAgreementInterval('tau', human, judge, o).value).toBe(kendallTau(human.map(mean), judge.map(mean)));
    expect(rankAgreementInterval('tauAP', human, judge, o).value).toBe(tauAP(human.map(mean), judge.map(mean)));
  });

  it('is [1, 1] when the judge reproduces the human values, and is reproducible from its seed', () => {
    const { human } = matrices(5, 20, 0, 2);
    expect(rankAgreementInterval('tauAP', human, human, o)).toEqual({ value: 1, ci: [1, 1], undefinedResamples: 0 });
    const { judge } = matrices(5, 20, 2, 2);
    const first = rankAgreementInterval('tau', human, judge, o);
    expect(rankAgreementInterval('tau', human, judge, o)).toEqual(first);
    expect(rankAgreementInterval('tau', human, judge, { ...o, seed: 8 }).ci).not.toEqual(first.ci);
  });

  it('is narrow and high for a faithful judge, wide and covering 0 for a judge that ignores the systems', () => {
    const good = matrices(8, 200, 0.05, 3);
    const g = rankAgreementInterval('tau', good.human, good.judge, o);
    expect(g.ci[0]).toBeGreaterThan(0.7);
    const rng = createRng(4);
    const blind = good.human.map((row) => row.map(() => rng.nextFloat()));
    const b = rankAgreementInterval('tauAP', good.human, blind, o);
    expect(b.ci[0]).toBeLessThan(0);
    expect(b.ci[1]).toBeGreaterThan(0);
    expect(b.ci[0]).toBeLessThanOrEqual(b.ci[1]);
  });

  it('counts the resamples where tau is undefined (every mean tied) and leaves them out', () => {
    // Two systems equal on every query but one: a resample that misses that query ties them.
    const human = [
      [0, 0, 0, 1],
      [0, 0, 0, 0],
    ];
    const r = rankAgreementInterval('tau', human, human, o);
    expect(r.value).toBe(1);
    expect(r.undefinedResamples).toBeGreaterThan(0);
    expect(r.undefinedResamples).toBeLessThan(o.resamples);
    expect(r.ci).toEqual([1, 1]);
  });

  it('refuses ragged matrices, a single system and bad options, naming the cell', () => {
    expect(() =>
      rankAgreementInterval(
        'tau',
        [[1, 2], [1]],
        [
          [1, 2],
          [1, 2],
        ],
        o,
      ),
    ).toThrow(/human\[1\] has 1 values, expected 2/);
    expect(() => rankAgreementInterval('tau', [[1, 2]], [[1, 2]], o)).toThrow(/at least 2 systems/);
    expect(() => rankAgreementInterval('tau', [[1], [2]], [[1], [Number.NaN]], o)).toThrow(/judge\[1\]\[0\] is NaN/);
    expect(() => rankAgreementInterval('tau', [[1], [2]], [[1], [2]], { ...o, level: 95 })).toThrow(/level must be in \(0, 1\)/);
    expect(() => rankAgreementInterval('tau', [[1], [2]], [[1], [2]], { ...o, resamples: 0 })).toThrow(/resamples must be a positive integer/);
  });
});
