/**
 * Statistics benchmark: the family a report needs for 100 systems × 3 strata × 4 measures = 1,200 paired
 * comparisons over 500 queries, each a 10,000-permutation randomization test and a 10,000-resample BCa
 * bootstrap CI of the mean difference, with shared draws. Synthetic, seeded per-query data on a 1/20 grid.
 *
 * The reference is numpy doing the same shared-draw computation in this run (python3, skipped with the reason
 * when numpy is not importable): the sign flips and resample multiplicities our kernels draw are handed to it
 * as matrices S (B × n, ±1) and C (B × n), and it computes S·D and C·D (D the n × 1,200 differences) through
 * BLAS, the p-values, the BCa levels and the interval bounds. Both sides warm up alike (the same 96-comparison
 * slice, untimed), then alternate in paired rounds (HARNESS_BENCH_STATS_ROUNDS, default 3; the goal is the median
 * of the per-round CPU ratios); numpy's time to draw matrices of the same shape with
 * its own generator is measured too and added to its side, since ours includes drawing. The outputs are
 * checked equal: every p exactly, every bound to 1e-12 (the sums are added in another order).
 *
 * Run: `npm run bench -- statistics`, or after `npm run build`, `node dist/bench/stats.js`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { chunkCount, drawResamples, drawSignBytes } from '../harness/stats/draws.js';
import {
  type BootstrapResult,
  bootstrapCI,
  bootstrapCIMany,
  type RandomizationResult,
  randomizationTest,
  randomizationTestMany,
  Rng,
} from '../harness/stats/index.js';

const SYSTEMS = 100;
const STRATA = 3;
const MEASURES = 4;
const QUERIES = 500;
const B = 10_000;
const SEED = 42;
const WARMUP = 96;
const LEVEL = 0.95;

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

/**
 * numpy's side, given the differences and our draws: S·D and C·D through BLAS, then the same decisions as
 * harness/stats (tolerance 1e-10·Σ|d| on sums, BCa's ẑ0 and jackknife â, numpy's linear percentile). The
 * order statistics come from np.partition per comparison when that beats one np.sort of the whole B × V
 * block (both are timed on the warm-up; the faster is used). Prints one JSON line.
 */
const NUMPY_SCRIPT = `
import json, sys, time, resource
import numpy as np
from statistics import NormalDist
folder, V, n, B, chunks, level = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
D = np.fromfile(folder + '/diffs.f64', dtype=np.float64).reshape(V, n).T.copy()
sign_bytes = np.fromfile(folder + '/signs.u8', dtype=np.uint8).reshape(B, chunks)
S = np.unpackbits(sign_bytes, axis=1, bitorder='little')[:, :n].astype(np.float64) * 2.0 - 1.0
p0 = np.fromfile(folder + '/plane0.u8', dtype=np.uint8).reshape(B, chunks)
p1 = np.fromfile(folder + '/plane1.u8', dtype=np.uint8).reshape(B, chunks)
C = (np.unpackbits(p0, axis=1, bitorder='little')[:, :n].astype(np.float64)
     + 2.0 * np.unpackbits(p1, axis=1, bitorder='little')[:, :n])
hi_start = np.fromfile(folder + '/histart.u32', dtype=np.uint32).astype(np.int64)
hi_index = np.fromfile(folder + '/hiindex.u32', dtype=np.uint32).astype(np.int64)
hi_weight = np.fromfile(folder + '/hiweight.u32', dtype=np.uint32).astype(np.float64)
rows = np.repeat(np.arange(B), np.diff(hi_start))
np.add.at(C, (rows, hi_index), 4.0 * hi_weight)
nd = NormalDist()
ndtri = np.vectorize(nd.inv_cdf)
ncdf = np.vectorize(nd.cdf)
alpha = (1 - level) / 2

def family(D, order):
    V = D.shape[1]
    total = D.sum(axis=0)
    tol = 1e-10 * np.abs(D).sum(axis=0)
    T = S @ D
    p = ((np.abs(T) >= np.abs(total) - tol).sum(axis=0) + 1) / (B + 1)
    sums = C @ D
    below = (sums < total - tol).sum(axis=0)
    beq = (sums <= total + tol).sum(axis=0)
    z0 = ndtri((below + beq) / (2 * B))
    u = D - total / n
    a = (u ** 3).sum(axis=0) / (6 * ((u ** 2).sum(axis=0)) ** 1.5)
    zl = nd.inv_cdf(alpha)
    q = np.stack([ncdf(z0 + (z0 + z) / (1 - a * (z0 + z))) for z in (zl, -zl)])
    pos = q * (B - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, B - 1)
    frac = pos - lo
    if order == 'sort':
        srt = np.sort(sums, axis=0)
        cols = np.arange(V)
        av, bv = srt[lo, cols] / n, srt[hi, cols] / n
    else:
        av = np.empty_like(q)
        bv = np.empty_like(q)
        for j in range(V):
            ks = sorted(set(lo[:, j].tolist() + hi[:, j].tolist()))
            part = np.partition(sums[:, j], ks)
            av[:, j] = part[lo[:, j]] / n
            bv[:, j] = part[hi[:, j]] / n
    ci = np.where(frac < 0.5, av + (bv - av) * frac, bv - (bv - av) * (1 - frac))
    return p, ci[0], ci[1]

warm = D[:, :int(sys.argv[7])]
times = {}
for order in ('sort', 'partition'):
    t = time.perf_counter(); family(warm, order); times[order] = time.perf_counter() - t
order = min(times, key=times.get)
t, c = time.perf_counter(), time.process_time()
p, lo, hi = family(D, order)
compute, compute_cpu = time.perf_counter() - t, time.process_time() - c
rng = np.random.default_rng(42)
t, c = time.perf_counter(), time.process_time()
own_signs = rng.integers(0, 2, size=(B, n), dtype=np.int8).astype(np.float64) * 2 - 1
idx = rng.integers(0, n, size=(B, n))
own_counts = np.zeros((B, n))
np.add.at(own_counts, (np.repeat(np.arange(B), n), idx.ravel()), 1.0)
draw, draw_cpu = time.perf_counter() - t, time.process_time() - c
np.concatenate([p, lo, hi]).astype(np.float64).tofile(folder + '/numpy.f64')
try:
    import threadpoolctl
    blas = ', '.join(f"{x['internal_api']} {x['num_threads']} thread(s)" for x in threadpoolctl.threadpool_info())
except Exception:
    blas = 'BLAS threads: numpy default'
print(json.dumps({'computeS': compute, 'drawS': draw, 'computeCpuS': compute_cpu, 'drawCpuS': draw_cpu, 'order': order, 'numpy': np.__version__, 'blas': blas,
                  'peakRssMB': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
`;

interface NumpyResult {
  readonly computeS: number;
  readonly drawS: number;
  readonly computeCpuS: number;
  readonly drawCpuS: number;
  readonly order: string;
  readonly numpy: string;
  readonly blas: string;
  readonly peakRssMB: number;
  readonly values: Float64Array;
}

/** numpy's side on our draws, or the reason it cannot run here. */
function runNumpy(diffs: readonly Float64Array[]): NumpyResult | string {
  const probe = spawnSync('python3', ['-c', 'import numpy'], { encoding: 'utf8' });
  if (probe.error) return `python3 is not runnable (${probe.error.message})`;
  if (probe.status !== 0) return `numpy is not importable (${probe.stderr.trim().split('\n').pop()})`;
  const folder = mkdtempSync(join(tmpdir(), 'harness-bench-stats-'));
  try {
    const n = QUERIES;
    const all = new Float64Array(diffs.length * n);
    diffs.forEach((d, i) => all.set(d, i * n));
    writeFileSync(join(folder, 'diffs.f64'), all);
    writeFileSync(join(folder, 'signs.u8'), drawSignBytes(n, B, SEED));
    const r = drawResamples(n, B, SEED);
    writeFileSync(join(folder, 'plane0.u8'), r.plane0);
    writeFileSync(join(folder, 'plane1.u8'), r.plane1);
    writeFileSync(join(folder, 'histart.u32'), r.hiStart);
    writeFileSync(join(folder, 'hiindex.u32'), r.hiIndex);
    writeFileSync(join(folder, 'hiweight.u32'), r.hiWeight);
    const args = [folder, diffs.length, n, B, chunkCount(n), LEVEL, WARMUP].map(String);
    const run = spawnSync('python3', ['-c', NUMPY_SCRIPT, ...args], { encoding: 'utf8', maxBuffer: 1 << 20 });
    if (run.status !== 0) return `the numpy script failed: ${run.stderr.trim().split('\n').slice(-3).join(' | ')}`;
    const out = JSON.parse(run.stdout.trim().split('\n').pop() as string) as Omit<NumpyResult, 'values'>;
    const buf = readFileSync(join(folder, 'numpy.f64'));
    return { ...out, values: new Float64Array(buf.buffer, buf.byteOffset, buf.byteLength / 8) };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** A worker's share of the family: its comparisons' differences, one vector after another. */
interface Share {
  readonly diffs: Float64Array;
}

/** Both tests on `diffs` (n values each): [p…, lo…, hi…] in input order. */
function familyResults(diffs: readonly Float64Array[]): Float64Array {
  const rand = randomizationTestMany(diffs, { permutations: B, seed: SEED });
  return familyValues(rand, bootstrapCIMany(diffs, { resamples: B, seed: SEED, method: 'bca', level: LEVEL }));
}

function unpack(flat: Float64Array): Float64Array[] {
  return Array.from({ length: flat.length / QUERIES }, (_, k) => flat.subarray(k * QUERIES, (k + 1) * QUERIES));
}

/**
 * Ours on every core: the family split into contiguous shares, one per worker thread, each computing both
 * tests on its share with the library's batch API (each redraws the shared draws: that work is charged).
 * Every result depends only on its own vector and the options, so the concatenated results must equal the
 * one-thread run's, which the caller checks. Workers start and warm up on the same slice untimed; the timed
 * part is posting the shares (transferred) until the last result is back. CPU time is the process's, every
 * thread included.
 */
async function oursOnAllCores(diffs: readonly Float64Array[], threads: number): Promise<{ values: Float64Array; wallS: number; cpuS: number }> {
  const workers = Array.from({ length: threads }, () => new Worker(new URL(import.meta.url), { workerData: { benchStatsWorker: true } }));
  const next = (w: Worker): Promise<Float64Array> =>
    new Promise((resolve, reject) => {
      w.once('message', resolve);
      w.once('error', reject);
    });
  const pack = (part: readonly Float64Array[]): Float64Array => {
    const flat = new Float64Array(part.length * QUERIES);
    part.forEach((d, k) => flat.set(d, k * QUERIES));
    return flat;
  };
  try {
    const warm = diffs.slice(0, WARMUP);
    await Promise.all(
      workers.map((w) => {
        const flat = pack(warm);
        const done = next(w);
        w.postMessage({ diffs: flat } satisfies Share, [flat.buffer as ArrayBuffer]);
        return done;
      }),
    );
    const per = Math.ceil(diffs.length / threads);
    const shares = workers.map((_, j) => pack(diffs.slice(j * per, (j + 1) * per)));
    const t = process.hrtime.bigint();
    const c = process.cpuUsage();
    const parts = await Promise.all(
      workers.map((w, j) => {
        const done = next(w);
        const flat = shares[j] as Float64Array;
        w.postMessage({ diffs: flat } satisfies Share, [flat.buffer as ArrayBuffer]);
        return done;
      }),
    );
    const wallS = seconds(t);
    const cpuS = cpuSeconds(c);
    // Reassemble [p…, lo…, hi…] over the whole family from each share's own three blocks.
    const v = diffs.length;
    const values = new Float64Array(3 * v);
    let at = 0;
    for (const part of parts) {
      const m = part.length / 3;
      for (let block = 0; block < 3; block++) values.set(part.subarray(block * m, (block + 1) * m), block * v + at);
      at += m;
    }
    return { values, wallS, cpuS };
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

if (!isMainThread && (workerData as { benchStatsWorker?: boolean } | undefined)?.benchStatsWorker === true) {
  parentPort?.on('message', (share: Share) => {
    const values = familyResults(unpack(share.diffs));
    parentPort?.postMessage(values, [values.buffer as ArrayBuffer]);
  });
}

function seconds(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** CPU seconds (user + system, every thread) of this process since `start`. */
function cpuSeconds(start: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1e6;
}

/** One timed computation of the whole family on this thread: both tests, CPU and wall time of each. */
function oursOnce(diffs: readonly Float64Array[]): { rand: RandomizationResult[]; boot: BootstrapResult[]; randCpuS: number; bootCpuS: number; wallS: number } {
  let t = process.hrtime.bigint();
  let c = process.cpuUsage();
  const rand = randomizationTestMany(diffs, { permutations: B, seed: SEED });
  let wallS = seconds(t);
  const randCpuS = cpuSeconds(c);
  t = process.hrtime.bigint();
  c = process.cpuUsage();
  const boot = bootstrapCIMany(diffs, { resamples: B, seed: SEED, method: 'bca', level: LEVEL });
  wallS += seconds(t);
  return { rand, boot, randCpuS, bootCpuS: cpuSeconds(c), wallS };
}

/** The largest differences between numpy's [p…, lo…, hi…] and ours. */
function worstDifferences(values: Float64Array, ours: Float64Array, family: number): { worstP: number; worstCi: number } {
  let worstP = 0;
  let worstCi = 0;
  for (let k = 0; k < family; k++) worstP = Math.max(worstP, Math.abs((values[k] as number) - (ours[k] as number)));
  for (let k = family; k < 3 * family; k++) worstCi = Math.max(worstCi, Math.abs((values[k] as number) - (ours[k] as number)));
  return { worstP, worstCi };
}

export async function main(): Promise<void> {
  const out = (line: string): void => void process.stdout.write(`${line}\n`);
  const [loadStart] = loadavg();
  const { baseline, challengers } = syntheticFamily();
  const family = baseline.length;
  const diffs = baseline.map((a, i) => (challengers[i] as Float64Array).map((x, q) => x - (a[q] as number)));
  const rounds = Math.max(1, Number(process.env.HARNESS_BENCH_STATS_ROUNDS ?? 3) || 3);
  out(
    `family: ${SYSTEMS} systems x ${STRATA} strata x ${MEASURES} measures = ${family} comparisons, ${QUERIES} queries each, B = ${B}, shared draws; ${rounds} paired round(s) against numpy`,
  );

  // Warm-up, the same slice as numpy's, untimed.
  const warm = diffs.slice(0, WARMUP);
  randomizationTestMany(warm, { permutations: B, seed: SEED });
  bootstrapCIMany(warm, { resamples: B, seed: SEED, method: 'bca', level: LEVEL });

  // Rounds alternate ours (one thread) and numpy, so both see the same load; the goal is the median of the
  // per-round ratios of CPU time.
  const ours: ReturnType<typeof oursOnce>[] = [];
  const numpy: NumpyResult[] = [];
  let skipped: string | undefined;
  for (let r = 0; r < rounds; r++) {
    ours.push(oursOnce(diffs));
    const np = skipped === undefined ? runNumpy(diffs) : skipped;
    if (typeof np === 'string') skipped = np;
    else numpy.push(np);
  }
  const first = ours[0] as ReturnType<typeof oursOnce>;
  const { rand, boot } = first;
  const peakMB = process.resourceUsage().maxRSS / 1024;
  checkAgainstOneAtATime(baseline, challengers, diffs, rand, boot);
  const single = familyValues(rand, boot);
  if (!ours.every((o) => familyValues(o.rand, o.boot).every((x, k) => x === single[k]))) throw new Error('bench: two runs of the family differ');
  const med = (f: (o: ReturnType<typeof oursOnce>) => number): number => median(ours.map(f));
  const oursCpuS = med((o) => o.randCpuS + o.bootCpuS);
  out(
    `ours (harness/stats, 1 thread, median of ${rounds}): CPU ${oursCpuS.toFixed(2)} s (randomization ${med((o) => o.randCpuS).toFixed(2)} s, BCa bootstrap ${med((o) => o.bootCpuS).toFixed(2)} s; draws included), wall ${med((o) => o.wallS).toFixed(2)} s, peak RSS ${peakMB.toFixed(0)} MB`,
  );
  const threads = availableParallelism();
  const all = await oursOnAllCores(diffs, threads);
  const same = all.values.every((x, k) => x === single[k]);
  out(
    `ours on all ${threads} cores (the family split across ${threads} worker threads, each on the batch API): CPU ${all.cpuS.toFixed(2)} s, wall ${all.wallS.toFixed(2)} s; results ${same ? 'IDENTICAL to' : 'DIFFERENT from'} the 1-thread run`,
  );
  if (!same) throw new Error('bench: the family split across threads gives other results than one thread');
  if (skipped !== undefined || numpy.length === 0) {
    out(`goal 30.5 (statistics family CPU): not measured (${skipped ?? 'no numpy run'}): MISSED`);
    return;
  }
  reportAgainstNumpy(out, { ours, numpy, single, family, threads, all, loadStart });
}

/** The numpy comparison: output check, CPU ratios (the goal), wall ratios (information). */
function reportAgainstNumpy(
  out: (line: string) => void,
  r: {
    ours: readonly ReturnType<typeof oursOnce>[];
    numpy: readonly NumpyResult[];
    single: Float64Array;
    family: number;
    threads: number;
    all: { wallS: number; cpuS: number };
    loadStart: number | undefined;
  },
): void {
  const { ours, numpy, single, family, threads, all } = r;
  const np = numpy[0] as NumpyResult;
  const { worstP, worstCi } = worstDifferences(np.values, single, family);
  const equal = numpy.every((x) => worstDifferences(x.values, single, family).worstP === 0) && worstCi <= 1e-12;
  const npCpuOf = (x: NumpyResult): number => x.computeCpuS + x.drawCpuS;
  const npCpu = median(numpy.map(npCpuOf));
  const npWall = median(numpy.map((x) => x.computeS + x.drawS));
  out(
    `numpy ${np.numpy} (${np.blas}; order statistics by ${np.order}; median of ${numpy.length}): CPU ${npCpu.toFixed(2)} s (compute on our draws ${median(numpy.map((x) => x.computeCpuS)).toFixed(2)} s + drawing its own ${median(numpy.map((x) => x.drawCpuS)).toFixed(2)} s), wall ${npWall.toFixed(2)} s, peak RSS ${np.peakRssMB.toFixed(0)} MB`,
  );
  out(`output check: ${equal ? 'EQUAL' : 'DIFFERENT'} (max |p - p_numpy| = ${worstP}, max |bound - bound_numpy| = ${worstCi.toExponential(1)})`);
  const pairs = ours.map((o, k) => npCpuOf(numpy[k] as NumpyResult) / (o.randCpuS + o.bootCpuS));
  const cpuRatio = median(pairs);
  const oursWall = median(ours.map((o) => o.wallS));
  out(`numpy / ours CPU per round: ${pairs.map((x) => `${x.toFixed(2)}x`).join(', ')}`);
  out(
    `information, wall-clock: numpy (its BLAS threads) / ours on all ${threads} cores (worker threads) ${(npWall / all.wallS).toFixed(2)}x; / ours on 1 thread ${(npWall / oursWall).toFixed(2)}x; CPU numpy / ours on ${threads} threads ${(npCpu / all.cpuS).toFixed(2)}x`,
  );
  const [loadEnd] = loadavg();
  out(`load average ${r.loadStart?.toFixed(2)} at the start and ${loadEnd?.toFixed(2)} at the end on ${threads} cores`);
  out(
    `goal 30.5 (statistics family CPU): ${cpuRatio.toFixed(2)}x against numpy's CPU on the same draws (numpy / ours on 1 thread, paired median of ${pairs.length}); goal >= 1x: ${cpuRatio >= 1 ? 'MET' : 'MISSED'}`,
  );
  if (!equal) throw new Error('bench: our statistics and numpy disagree on the same draws');
}

/** The batch API must give each comparison what it gives alone. */
function checkAgainstOneAtATime(
  baseline: readonly Float64Array[],
  challengers: readonly Float64Array[],
  diffs: readonly Float64Array[],
  rand: readonly RandomizationResult[],
  boot: readonly BootstrapResult[],
): void {
  for (const k of [0, 1, diffs.length - 1]) {
    const one = randomizationTest(baseline[k] as Float64Array, challengers[k] as Float64Array, { permutations: B, seed: SEED }).p;
    const ci = bootstrapCI(diffs[k] as Float64Array, { resamples: B, seed: SEED, method: 'bca', level: LEVEL });
    if (rand[k]?.p !== one || boot[k]?.lo !== ci.lo || boot[k]?.hi !== ci.hi)
      throw new Error(`bench: shared and one-at-a-time results differ at comparison ${k}`);
  }
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/** [p…, lo…, hi…] of the family, the layout the workers return. */
function familyValues(rand: readonly { p: number }[], boot: readonly { lo: number; hi: number }[]): Float64Array {
  const v = rand.length;
  const values = new Float64Array(3 * v);
  for (let k = 0; k < v; k++) {
    values[k] = (rand[k] as { p: number }).p;
    values[v + k] = (boot[k] as { lo: number }).lo;
    values[2 * v + k] = (boot[k] as { hi: number }).hi;
  }
  return values;
}

if (isMainThread && process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
