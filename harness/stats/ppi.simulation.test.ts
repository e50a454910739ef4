import { describe, expect, it } from 'vitest';
import { type PpiSample, ppiMean, stratifiedPpiMean } from './ppi.js';
import { type Rng, createRng } from './rng.js';

/**
 * Coverage of the PPI interval (classic λ = 1, Welch–Satterthwaite t) over simulated studies, at the label counts
 * a study has: 10, 25 and 60 labelled queries per stratum (of 80, 80 and 240), at 95% and at 1 − 0.05/3 (the
 * level of a gate over two strata and the overall row). The truth is the population mean of the human delta (exact, or
 * by 500,000 draws of the nDCG process): PPI treats labelled and unlabelled queries as draws from one population.
 *
 * Processes (each query draws a human delta Y and a judge delta f):
 * - `normal`: Y ~ N(0.05, 0.15²), f = Y + 0.08 + N(0, 0.05²) (a judge biased towards the candidate);
 * - `zero-inflated`: Y = 0 with probability 0.4, else N(0.05, 0.15²); f = Y + 0.08·U + N(0, 0.05²);
 * - `weak judge`: Y ~ N(0.03, 0.2²), f = 0.3·Y + 0.05 + N(0, 0.2²) (correlation about 0.29);
 * - `nDCG`: per-query nDCG in [0, 1] of both systems under humans and judge, 35% of queries 0 for both under
 *   humans, the judge over-grading the candidate by 0.15·U and grading with noise, all clipped to [0, 1]: skewed,
 *   tied differences with many zeros and a bias that differs between the systems.
 *
 * 20,000 studies per cell: a Monte Carlo standard error of 0.15 points at 95% and 0.09 at 98.33%, so the
 * tolerances (1 point at 10 labels, 0.5 at 25 and 60) are at least 3.2 standard errors wide.
 */
const STUDIES = 20_000;
const LEVELS = [0.05, 0.05 / 3] as const;

interface Query {
  readonly y: number;
  readonly f: number;
}

function gaussian(rng: Rng): number {
  // Box-Muller; 1 - u keeps the logarithm finite.
  const u = 1 - rng.nextFloat();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rng.nextFloat());
}

const clip = (x: number) => Math.min(1, Math.max(0, x));

/** One query of the nDCG process: both systems' nDCG under humans, then under a judge that favours the candidate. */
function ndcgQuery(r: Rng): Query {
  const hard = r.nextFloat() < 0.35;
  const base = hard ? 0 : clip(r.nextFloat() ** 1.5);
  const moved = r.nextFloat() < 0.3 ? 0.25 * gaussian(r) : 0.03 * gaussian(r);
  const cand = hard ? (r.nextFloat() < 0.15 ? clip(0.3 + 0.4 * r.nextFloat()) : 0) : clip(base + moved);
  const judgeBase = clip(base + 0.1 * gaussian(r) * (base > 0 ? 1 : 0.3));
  const judgeCand = clip(cand + 0.15 * r.nextFloat() + 0.1 * gaussian(r) * (cand > 0 ? 1 : 0.3));
  return { y: cand - base, f: judgeCand - judgeBase };
}

const PROCESSES: Record<string, (r: Rng) => Query> = {
  normal: (r) => {
    const y = 0.05 + 0.15 * gaussian(r);
    return { y, f: y + 0.08 + 0.05 * gaussian(r) };
  },
  'zero-inflated': (r) => {
    const y = r.nextFloat() < 0.4 ? 0 : 0.05 + 0.15 * gaussian(r);
    return { y, f: y + 0.08 * r.nextFloat() + 0.05 * gaussian(r) };
  },
  'weak judge': (r) => {
    const y = 0.03 + 0.2 * gaussian(r);
    return { y, f: 0.3 * y + 0.05 + 0.2 * gaussian(r) };
  },
  nDCG: ndcgQuery,
};

/** The mean of Y: exact where the process gives it (0.05, 0.6·0.05, 0.03), else by 500,000 draws (SE about 2e-4). */
const TRUTH: Record<string, number> = { normal: 0.05, 'zero-inflated': 0.03, 'weak judge': 0.03 };
function populationMean(name: string): number {
  if (TRUTH[name] !== undefined) return TRUTH[name];
  const draw = PROCESSES[name] as (r: Rng) => Query;
  const r = createRng(999);
  let s = 0;
  for (let i = 0; i < 500_000; i++) s += draw(r).y;
  TRUTH[name] = s / 500_000;
  return TRUTH[name];
}

function study(r: Rng, draw: (r: Rng) => Query, n: number, N: number): PpiSample {
  const labelled = Array.from({ length: n }, () => draw(r));
  return { human: labelled.map((q) => q.y), judgeOnLabelled: labelled.map((q) => q.f), judgeOnUnlabelled: Array.from({ length: N }, () => draw(r).f) };
}

const covers = (ci: readonly [number, number], truth: number) => ci[0] <= truth && truth <= ci[1];

const CELLS = [
  { n: 10, N: 70, tolerance: 0.01 },
  { n: 25, N: 55, tolerance: 0.005 },
  { n: 60, N: 180, tolerance: 0.005 },
] as const;

describe(`PPI interval coverage over ${STUDIES} simulated studies per cell`, () => {
  for (const [name, draw] of Object.entries(PROCESSES)) {
    it(`${name}: within 1 point of nominal at 10 labels, 0.5 at 25 and 60, at 95% and 98.33%`, () => {
      const truth = populationMean(name);
      const lines: string[] = [];
      for (const cell of CELLS) {
        const rng = createRng(20_260_041 + cell.n);
        const hits = LEVELS.map(() => 0);
        for (let s = 0; s < STUDIES; s++) {
          const sample = study(rng, draw, cell.n, cell.N);
          LEVELS.forEach((alpha, k) => {
            if (covers(ppiMean(sample, { alpha }).ci, truth)) hits[k] = (hits[k] as number) + 1;
          });
        }
        const coverage = hits.map((h) => h / STUDIES);
        lines.push(`n=${cell.n} N=${cell.N}: ${coverage.map((c) => `${(100 * c).toFixed(2)}%`).join(' / ')}`);
        LEVELS.forEach((alpha, k) => {
          expect(Math.abs((coverage[k] as number) - (1 - alpha)), `${name} n=${cell.n} level ${1 - alpha}`).toBeLessThanOrEqual(cell.tolerance);
        });
      }
      console.log(`ppi.simulation ${name} (95% / 98.33%, seed 20260041+n): ${lines.join('; ')}`);
    }, 60_000);
  }

  it('three strata of 80 with 10 labels each, stratified with share weights: within 1 point at 98.33%', () => {
    const names = ['nDCG', 'zero-inflated', 'weak judge'];
    const draws = names.map((k) => PROCESSES[k] as (r: Rng) => Query);
    const truth = names.reduce((t, k) => t + populationMean(k) / 3, 0);
    const rng = createRng(2027);
    let hits = 0;
    for (let s = 0; s < STUDIES / 4; s++) {
      const r = stratifiedPpiMean(
        draws.map((d) => ({ sample: study(rng, d, 10, 70) })),
        { alpha: 0.05 / 3 },
      );
      if (covers(r.ci, truth)) hits++;
    }
    const coverage = hits / (STUDIES / 4);
    console.log(`ppi.simulation stratified (3 x 10 of 80, seed 2027, ${STUDIES / 4} studies): ${(100 * coverage).toFixed(2)}% at 98.33%`);
    // 5,000 studies: standard error 0.18 points; 1 point is 5.5 of them.
    expect(Math.abs(coverage - (1 - 0.05 / 3))).toBeLessThanOrEqual(0.01);
  }, 60_000);
});
