import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HarnessError } from '../errors.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { type PpiOptions, type PpiResult, type PpiSample, ppiMean, stratifiedPpiMean, tunedLambda } from './ppi.js';
import { studentTQuantile } from './special.js';

/**
 * PPI against an independent numpy/scipy implementation written from the paper's formulas, whose intervals the
 * script itself checks against scipy's Welch interval (scripts/reference/ppi_reference.py). The committed JSON it
 * wrote is checked on every run; when python3 with numpy and scipy is present, the script is run again and its fresh output checked too, so a drift between the script
 * and the committed file cannot hide.
 */
interface Single {
  readonly name: string;
  readonly sample: string;
  readonly alpha: number;
  readonly lambda: 'tuned' | number;
  readonly result: PpiResult;
}
interface Stratified {
  readonly name: string;
  readonly strata: { readonly weight?: number; readonly sample: PpiSample }[];
  readonly alpha: number;
  readonly lambda: 'tuned' | number;
  readonly result: PpiResult & { strata: PpiResult[] };
}
interface Reference {
  readonly samples: Record<string, PpiSample>;
  readonly single: Single[];
  readonly stratified: Stratified[];
}

const SCRIPT = join(PROJECT_ROOT, 'scripts', 'reference', 'ppi_reference.py');
const committed = JSON.parse(readFileSync(join(PROJECT_ROOT, 'harness', 'stats', 'testdata', 'ppi-reference.json'), 'utf8')) as Reference;

function liveReference(): Reference | string {
  const probe = spawnSync('python3', ['-c', 'import numpy, scipy'], { encoding: 'utf8' });
  if (probe.status !== 0) return `python3 with numpy and scipy is not available (${probe.error?.message ?? probe.stderr.trim().split('\n').at(-1)})`;
  const run = spawnSync('python3', [SCRIPT, '--stdout'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (run.status !== 0) throw new Error(`${SCRIPT} failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as Reference;
}

/** 1e-12 relative, with an absolute floor for values that are 0 (a zero se, a lambda clipped to 0). */
function close(actual: number, expected: number, what: string): void {
  const tol = 1e-12 * Math.max(Math.abs(expected), 1e-3);
  if (!(Math.abs(actual - expected) <= tol)) expect.fail(`${what}: got ${actual}, reference ${expected}`);
}

function sameResult(actual: PpiResult, expected: PpiResult, what: string): void {
  close(actual.estimate, expected.estimate, `${what} estimate`);
  close(actual.se, expected.se, `${what} se`);
  close(actual.lambda, expected.lambda, `${what} lambda`);
  close(actual.df, expected.df, `${what} df`);
  close(actual.ci[0], expected.ci[0], `${what} ci low`);
  close(actual.ci[1], expected.ci[1], `${what} ci high`);
  expect([actual.n, actual.N], what).toEqual([expected.n, expected.N]);
}

function checkAgainst(ref: Reference): void {
  expect(ref.single.length).toBeGreaterThanOrEqual(40);
  for (const c of ref.single) {
    const s = ref.samples[c.sample] as PpiSample;
    sameResult(ppiMean(s, { alpha: c.alpha, lambda: c.lambda }), c.result, c.name);
  }
  expect(ref.stratified.length).toBe(3);
  for (const c of ref.stratified) {
    const got = stratifiedPpiMean(c.strata, { alpha: c.alpha, lambda: c.lambda });
    sameResult(got, c.result, c.name);
    got.strata.forEach((r, k) => sameResult(r, c.result.strata[k] as PpiResult, `${c.name} stratum ${k}`));
  }
}

describe('ppiMean and stratifiedPpiMean against the numpy reference', () => {
  it('agree with the committed reference output to 1e-12 relative', () => {
    checkAgainst(committed);
  });

  it('agree with a fresh run of the reference script (skipped without python3 + numpy + scipy)', (ctx) => {
    const live = liveReference();
    if (typeof live === 'string') {
      console.log(`ppi.test.ts: live reference skipped: ${live}`);
      ctx.skip();
      return;
    }
    checkAgainst(live);
  }, 60_000);
});

describe('ppiMean by hand', () => {
  // n = 3, N = 2. Y = (0.1, -0.2, 0.4), f = (0.3, 0, 0.5), f̃ = (0.2, 0.6).
  const s: PpiSample = { human: [0.1, -0.2, 0.4], judgeOnLabelled: [0.3, 0, 0.5], judgeOnUnlabelled: [0.2, 0.6] };

  it('lambda 1 (the default) is classic PPI: mean(f̃) + mean(Y - f), Welch se and df', () => {
    const r = ppiMean(s, { alpha: 0.05 });
    // 0.4 + mean(-0.2, -0.2, -0.1) = 0.4 - 0.5/3
    expect(r.estimate).toBeCloseTo(0.4 - 0.5 / 3, 14);
    expect(r.lambda).toBe(1);
    // var1(f̃) = 0.08; Y - f = (-0.2, -0.2, -0.1), squared deviations sum 6/900, var1 = 3/900
    const [a, b] = [0.08 / 2, 3 / 900 / 3];
    expect(r.se).toBeCloseTo(Math.sqrt(a + b), 14);
    expect(r.df).toBeCloseTo((a + b) ** 2 / (a * a + (b * b) / 2), 12);
    // scipy.stats.t.ppf(0.975, 1.0528925619834711) = 11.825..., checked by the reference script's Welch check
    expect(r.ci[1] - r.estimate).toBeCloseTo(studentTQuantile(0.975, r.df) * r.se, 13);
  });

  it('lambda 0 is the human mean with its t(n - 1) interval, whatever the judge says', () => {
    const r = ppiMean(s, { alpha: 0.05, lambda: 0 });
    expect(r.estimate).toBeCloseTo(0.1, 15);
    const judgeMoved = ppiMean({ ...s, judgeOnUnlabelled: [9, -9] }, { alpha: 0.05, lambda: 0 });
    expect(judgeMoved).toEqual(r);
    expect(r.df).toBe(2);
    // t_{0.975, 2} = 4.302652729749464 (scipy.stats.t.ppf)
    expect(r.ci[1] - r.estimate).toBeCloseTo(4.302652729749464 * r.se, 12);
  });

  it('tuned lambda is clipped to [0, 1]: a judge anti-correlated with the humans gets 0', () => {
    const anti = ppiMean({ human: [1, 2, 3, 4], judgeOnLabelled: [4, 3, 2, 1], judgeOnUnlabelled: [1, 4] }, { alpha: 0.1, lambda: 'tuned' });
    expect(anti.lambda).toBe(0);
    expect(anti.estimate).toBe(2.5);
  });

  it("classic PPI removes a constant judge bias exactly: the estimate is the unlabelled queries' true mean", () => {
    const human = [0.1, 0.5, -0.3, 0.2, 0.0];
    const truthUnlabelled = [0.3, -0.1, 0.4];
    const r = ppiMean(
      { human, judgeOnLabelled: human.map((y) => y + 0.2), judgeOnUnlabelled: truthUnlabelled.map((y) => y + 0.2) },
      { alpha: 0.05, lambda: 1 },
    );
    expect(r.estimate).toBeCloseTo(0.2, 14);
    // The rectifier Y - f is the constant -0.2: no variance; what is left is var1(f̃)/N, on N - 1 df.
    expect(r.se).toBeCloseTo(Math.sqrt((0.01 + 0.09 + 0.04) / 2 / 3), 14);
    expect(r.df).toBeCloseTo(2, 12);
  });
});

describe('ppiMean input errors', () => {
  const ok: PpiSample = { human: [0, 1], judgeOnLabelled: [0, 1], judgeOnUnlabelled: [1, 2] };
  const o: PpiOptions = { alpha: 0.05 };
  const cases: [string, PpiSample, PpiOptions, RegExp][] = [
    ['n < 2', { ...ok, human: [0], judgeOnLabelled: [0] }, o, /human has 1 value; PPI needs at least 2/],
    ['N < 2', { ...ok, judgeOnUnlabelled: [1] }, o, /judgeOnUnlabelled has 1 value; PPI needs at least 2/],
    ['length mismatch', { ...ok, judgeOnLabelled: [0, 1, 2] }, o, /human has 2 values but judgeOnLabelled has 3/],
    ['NaN', { ...ok, human: [0, Number.NaN] }, o, /human\[1\] is NaN/],
    ['Infinity', { ...ok, judgeOnUnlabelled: [Number.POSITIVE_INFINITY, 0] }, o, /judgeOnUnlabelled\[0\] is Infinity/],
    ['alpha', ok, { alpha: 1 }, /alpha must be in \(0, 1\), got 1/],
    ['lambda', ok, { alpha: 0.05, lambda: 1.5 }, /lambda must be 'tuned' or a number in \[0, 1\], got 1.5/],
  ];
  for (const [name, s, opts, message] of cases) {
    it(`refuses ${name}`, () => {
      expect(() => ppiMean(s, opts)).toThrow(HarnessError);
      expect(() => ppiMean(s, opts)).toThrow(message);
    });
  }

  it('tunedLambda checks its sample too', () => {
    expect(() => tunedLambda({ ...ok, judgeOnLabelled: [1, 2, 3] })).toThrow(/tunedLambda: human has 2 values but judgeOnLabelled has 3/);
  });

  it('stratifiedPpiMean names the stratum and refuses partial or non-positive weights', () => {
    expect(() => stratifiedPpiMean([{ sample: ok }, { sample: { ...ok, human: [1] } }], o)).toThrow(/strata\[1\]: human has 1 value/);
    expect(() => stratifiedPpiMean([{ sample: ok, weight: 1 }, { sample: ok }], o)).toThrow(/1 of 2 strata have a weight/);
    expect(() => stratifiedPpiMean([{ sample: ok, weight: 0 }], o)).toThrow(/strata\[0\]\.weight is 0/);
    expect(() => stratifiedPpiMean([], o)).toThrow(/at least one stratum/);
  });
});
