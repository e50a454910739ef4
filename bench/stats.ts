/**
 * Statistics benchmark: the family a report needs for 100 systems × 3 strata × 4 measures = 1,200 paired
 * comparisons, each a 10,000-permutation randomization test and a 10,000-resample BCa bootstrap CI of the mean
 * difference. Every comparison is taken over all 500 queries (the stricter reading of the issue; splitting
 * 500 queries into 3 strata makes each test about 3× cheaper). Synthetic, seeded per-query data.
 *
 * Three paths, all measured in this run:
 * - naive: a straightforward loop per test (draw n signs / n indices per replicate, multiply-add), timed
 *   on a sample of tests and extrapolated;
 * - one at a time: `randomizationTest` / `bootstrapCI` per comparison (draws regenerated per call), sampled;
 * - shared: `randomizationTestMany` / `bootstrapCIMany` over the whole family (one set of draws).
 * numpy figures from the issue (this machine): ~20 ms per randomization test, ~27 ms per bootstrap.
 *
 * Run: `npm run bench` or, after `npm run build`, `node dist/bench/stats.js`.
 */
import { pathToFileURL } from 'node:url';
import { bootstrapCI, bootstrapCIMany, randomizationTest, randomizationTestMany, Rng } from '../harness/stats/index.js';

const SYSTEMS = 100;
const STRATA = 3;
const MEASURES = 4;
const QUERIES = 500;
const B = 10_000;
const SEED = 42;
const GOAL_SECONDS = 30;
const NUMPY_RANDOMIZATION_MS = 20;
const NUMPY_BOOTSTRAP_MS = 27;
const SAMPLE = 12;

/** Per-query values on a 1/20 grid in [0, 1] (ties and zero differences, like nDCG@10 or RR). */
function syntheticFamily(): { baseline: Float64Array[]; challengers: Float64Array[] } {
  const rng = new Rng(SEED);
  const grid = (x: number): number => Math.round(Math.min(1, Math.max(0, x)) * 20) / 20;
  const baseline: Float64Array[] = [];
  const challengers: Float64Array[] = [];
  const base: Float64Array[] = [];
  for (let k = 0; k < STRATA * MEASURES; k++) base.push(Float64Array.from({ length: QUERIES }, () => grid(rng.nextFloat())));
  for (let s = 0; s < SYSTEMS; s++) {
    const shift = (rng.nextFloat() - 0.5) * 0.06;
    for (let k = 0; k < STRATA * MEASURES; k++) {
      const a = base[k] as Float64Array;
      baseline.push(a);
      challengers.push(a.map((x) => grid(x + shift + (rng.nextFloat() - 0.5) * 0.4)));
    }
  }
  return { baseline, challengers };
}

function naiveRandomization(d: Float64Array, seed: number): number {
  const rng = new Rng(seed);
  const n = d.length;
  let observed = 0;
  for (let i = 0; i < n; i++) observed += d[i] as number;
  let count = 0;
  for (let b = 0; b < B; b++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += rng.nextU32() & 1 ? (d[i] as number) : -(d[i] as number);
    if (Math.abs(s) >= Math.abs(observed) - 1e-10) count++;
  }
  return (count + 1) / (B + 1);
}

function naiveBootstrapPercentile(d: Float64Array, seed: number): [number, number] {
  const rng = new Rng(seed);
  const n = d.length;
  const means = new Float64Array(B);
  for (let b = 0; b < B; b++) {
    let s = 0;
    for (let j = 0; j < n; j++) s += d[rng.nextInt(n)] as number;
    means[b] = s / n;
  }
  means.sort();
  return [means[Math.floor(0.025 * (B - 1))] as number, means[Math.ceil(0.975 * (B - 1))] as number];
}

function seconds(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}

export async function main(): Promise<void> {
  const out = (line: string): void => void process.stdout.write(`${line}\n`);
  const { baseline, challengers } = syntheticFamily();
  const family = baseline.length;
  const diffs = baseline.map((a, i) => (challengers[i] as Float64Array).map((x, q) => x - (a[q] as number)));
  out(`family: ${SYSTEMS} systems x ${STRATA} strata x ${MEASURES} measures = ${family} comparisons, ${QUERIES} queries each, B = ${B}`);

  let t = process.hrtime.bigint();
  for (let k = 0; k < SAMPLE; k++) naiveRandomization(diffs[k] as Float64Array, SEED);
  const naiveRandMs = (seconds(t) * 1000) / SAMPLE;
  t = process.hrtime.bigint();
  for (let k = 0; k < SAMPLE; k++) naiveBootstrapPercentile(diffs[k] as Float64Array, SEED);
  const naiveBootMs = (seconds(t) * 1000) / SAMPLE;

  t = process.hrtime.bigint();
  const single: number[] = [];
  for (let k = 0; k < SAMPLE; k++)
    single.push(randomizationTest(baseline[k] as Float64Array, challengers[k] as Float64Array, { permutations: B, seed: SEED }).p);
  const singleRandMs = (seconds(t) * 1000) / SAMPLE;
  t = process.hrtime.bigint();
  const singleBoot: number[] = [];
  for (let k = 0; k < SAMPLE; k++) singleBoot.push(bootstrapCI(diffs[k] as Float64Array, { resamples: B, seed: SEED, method: 'bca' }).lo);
  const singleBootMs = (seconds(t) * 1000) / SAMPLE;

  t = process.hrtime.bigint();
  const rand = randomizationTestMany(diffs, { permutations: B, seed: SEED });
  const sharedRandS = seconds(t);
  t = process.hrtime.bigint();
  const boot = bootstrapCIMany(diffs, { resamples: B, seed: SEED, method: 'bca' });
  const sharedBootS = seconds(t);
  const sharedTotal = sharedRandS + sharedBootS;

  for (let k = 0; k < SAMPLE; k++) {
    if (rand[k]?.p !== single[k] || boot[k]?.lo !== singleBoot[k]) {
      throw new Error(`bench: shared and one-at-a-time results differ at comparison ${k}`);
    }
  }

  const row = (label: string, randMs: number, bootMs: number, note: string): void =>
    out(
      `${label.padEnd(34)} ${randMs.toFixed(3).padStart(9)} ms ${bootMs.toFixed(3).padStart(9)} ms ${(((randMs + bootMs) * family) / 1000).toFixed(1).padStart(8)} s  ${note}`,
    );
  out(`${'path'.padEnd(34)} ${'randomiz.'.padStart(12)} ${'bootstrap'.padStart(12)} ${'family'.padStart(10)}`);
  row('numpy (issue, stated reference)', NUMPY_RANDOMIZATION_MS, NUMPY_BOOTSTRAP_MS, 'not measured here');
  row('naive JS loop (percentile boot)', naiveRandMs, naiveBootMs, `measured on ${SAMPLE} tests, extrapolated`);
  row('one at a time (API, BCa)', singleRandMs, singleBootMs, `measured on ${SAMPLE} tests, extrapolated`);
  row('shared draws (API, BCa)', (sharedRandS * 1000) / family, (sharedBootS * 1000) / family, `measured on all ${family}`);
  const naiveTotal = ((naiveRandMs + naiveBootMs) * family) / 1000;
  const numpyTotal = ((NUMPY_RANDOMIZATION_MS + NUMPY_BOOTSTRAP_MS) * family) / 1000;
  out(
    `shared-draw family total: ${sharedTotal.toFixed(2)} s (randomization ${sharedRandS.toFixed(2)} s, bootstrap ${sharedBootS.toFixed(2)} s); goal < ${GOAL_SECONDS} s: ${sharedTotal < GOAL_SECONDS ? 'MET' : 'MISSED'}`,
  );
  out(
    `speed-up of shared draws: ${(naiveTotal / sharedTotal).toFixed(1)}x vs naive JS, ${(((singleRandMs + singleBootMs) * family) / 1000 / sharedTotal).toFixed(1)}x vs one at a time, ${(numpyTotal / sharedTotal).toFixed(1)}x vs numpy's stated figures`,
  );
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
