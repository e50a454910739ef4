import { describe, expect, it } from 'vitest';
import { type PpiSample, ppiMean, stratifiedPpiMean } from './ppi.js';
import { type Rng, createRng } from './rng.js';
import { normalQuantile } from './special.js';

/**
 * Coverage of PPI++ intervals when the Judge is biased towards one System, over simulated studies.
 *
 * One study: a Stratum's queries each have a true per-query delta Y (candidate minus baseline under human
 * labels): 0 with probability 0.4 (both Systems return equally good lists), otherwise mean m, sd 0.15. The Judge
 * over-grades the candidate's documents, so its delta is Y + bias·U + noise, U uniform on [0, 1] (the
 * over-grading varies by query), noise sd 0.05. A random sample of the queries is labelled by hand.
 *
 * The true delta is the population value the queries are drawn from, 0.6·m (the mean of Y), not the mean of
 * one study's queries: PPI treats labelled and unlabelled queries as draws from one population, and that
 * population mean is what its interval is for.
 *
 * 2,000 studies give a Monte Carlo standard error of sqrt(0.95·0.05/2000) = 0.49 points on a coverage of 95%,
 * so the ±1.5-point band is three standard errors wide.
 */
const STUDIES = 2_000;
const ALPHA = 0.05;
const P_ZERO = 0.4;
const SD_DELTA = 0.15;
const JUDGE_NOISE = 0.05;

interface StratumModel {
  readonly queries: number;
  readonly labelled: number;
  /** Mean of the non-zero deltas. */
  readonly m: number;
  /** The largest over-grading of the candidate's documents (the Judge's bias on the delta is bias·U). */
  readonly bias: number;
}

const trueDelta = (s: StratumModel) => (1 - P_ZERO) * s.m;

function gaussian(rng: Rng): number {
  // Box-Muller; 1 - u keeps the logarithm finite.
  const u = 1 - rng.nextFloat();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.nextFloat());
}

/** One study of one Stratum: the judged deltas of every query, and the human ones of a random labelled sample. */
function simulate(rng: Rng, s: StratumModel): { sample: PpiSample; judgeAll: number[] } {
  const human: number[] = [];
  const judge: number[] = [];
  for (let q = 0; q < s.queries; q++) {
    const y = rng.nextFloat() < P_ZERO ? 0 : s.m + SD_DELTA * gaussian(rng);
    human.push(y);
    judge.push(y + s.bias * rng.nextFloat() + JUDGE_NOISE * gaussian(rng));
  }
  // Partial Fisher-Yates: the first `labelled` positions become a uniform random sample without replacement.
  const order = human.map((_, i) => i);
  for (let i = 0; i < s.labelled; i++) {
    const j = i + rng.nextInt(s.queries - i);
    [order[i], order[j]] = [order[j] as number, order[i] as number];
  }
  const lab = order.slice(0, s.labelled);
  const unl = order.slice(s.labelled);
  return {
    sample: {
      human: lab.map((i) => human[i] as number),
      judgeOnLabelled: lab.map((i) => judge[i] as number),
      judgeOnUnlabelled: unl.map((i) => judge[i] as number),
    },
    judgeAll: judge,
  };
}

/** The interval a judged study reports today: mean of the judge deltas ± z·sd/√n. */
function judgeOnlyCovers(judge: readonly number[], truth: number): boolean {
  const n = judge.length;
  const mean = judge.reduce((a, b) => a + b, 0) / n;
  const sd = Math.sqrt(judge.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1));
  const half = normalQuantile(1 - ALPHA / 2) * (sd / Math.sqrt(n));
  return mean - half <= truth && truth <= mean + half;
}

const covers = (ci: readonly [number, number], truth: number) => ci[0] <= truth && truth <= ci[1];

describe(`PPI coverage over ${STUDIES} simulated studies with a judge biased towards the candidate`, () => {
  it('one stratum: the judge-only interval misses the true delta, tuned PPI++ covers it at 95% ± 1.5%', () => {
    const model: StratumModel = { queries: 600, labelled: 120, m: 0.05, bias: 0.08 };
    const rng = createRng(27);
    let judgeOnly = 0;
    let ppi = 0;
    let lambdaSum = 0;
    for (let study = 0; study < STUDIES; study++) {
      const { sample, judgeAll } = simulate(rng, model);
      if (judgeOnlyCovers(judgeAll, trueDelta(model))) judgeOnly++;
      const r = ppiMean(sample, { alpha: ALPHA });
      if (covers(r.ci, trueDelta(model))) ppi++;
      lambdaSum += r.lambda;
    }
    console.log(`ppi.simulation: judge-only coverage ${judgeOnly / STUDIES}, PPI++ coverage ${ppi / STUDIES}, mean lambda ${(lambdaSum / STUDIES).toFixed(3)}`);
    expect(judgeOnly / STUDIES).toBeLessThan(0.5);
    expect(Math.abs(ppi / STUDIES - (1 - ALPHA))).toBeLessThanOrEqual(0.015);
  });

  it('three strata, stratified PPI++ with share weights: covers the population delta at 95% ± 1.5%', () => {
    const strata: StratumModel[] = [
      { queries: 300, labelled: 60, m: 0.06, bias: 0.1 },
      { queries: 200, labelled: 50, m: 0.0, bias: 0.06 },
      { queries: 100, labelled: 40, m: -0.04, bias: 0.12 },
    ];
    const total = strata.reduce((a, s) => a + s.queries, 0);
    const truth = strata.reduce((a, s) => a + (s.queries / total) * trueDelta(s), 0);
    const rng = createRng(2027);
    let judgeOnly = 0;
    let ppi = 0;
    for (let study = 0; study < STUDIES; study++) {
      const runs = strata.map((s) => simulate(rng, s));
      if (
        judgeOnlyCovers(
          runs.flatMap((r) => r.judgeAll),
          truth,
        )
      )
        judgeOnly++;
      const r = stratifiedPpiMean(
        runs.map((run) => ({ sample: run.sample })),
        { alpha: ALPHA },
      );
      if (covers(r.ci, truth)) ppi++;
    }
    console.log(`ppi.simulation: stratified, judge-only coverage ${judgeOnly / STUDIES}, stratified PPI++ coverage ${ppi / STUDIES}`);
    expect(judgeOnly / STUDIES).toBeLessThan(0.5);
    expect(Math.abs(ppi / STUDIES - (1 - ALPHA))).toBeLessThanOrEqual(0.015);
  });
});
