/**
 * Fusion benchmark: 10 input runs x 1,000 queries x depth 1,000 over one shared DocTable (5 BM25-like inputs
 * with scores >= 0, 5 cosine-like in [-1, 1]), fused at 200 grid points: 100 RRF points (50 rrfK values x
 * uniform or one down-weighted input) and 100 convex-combination points (25 weightings x min-max, z-score,
 * tm2c2, none), every input read to its full depth, fused lists of `topK` documents. Against the floor
 * measured in the same run: one pass reading every entry (doc and score) of the 10 runs per grid point,
 * alternating with the fusions. Both sides are warmed up alike. Data come from the seeded xoshiro128** stream (harness/stats/rng.ts), so every
 * machine measures the same runs.
 *
 * Run: `npm run bench -- fusion` or, after `npm run build`, `node dist/bench/fusion.js`; with `--hash`, it times
 * nothing and prints the SHA-256 of every fused run of the grid at both topK (offsets, documents and score bits
 * in grid order), the check that a change to the kernels left every fused run bit-identical.
 */
import { createHash } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { docTable, fuse, packArrays, type FusionInput, type FusionSpec, type Normalization, type PackedRun } from '../harness/fusion/index.js';
import { Rng } from '../harness/stats/rng.js';

const INPUTS = 10;
const QUERIES = 1000;
const DEPTH = 1000;
const CORPUS = 200_000;
/** Documents per query that many inputs share (the relevant-looking core), so the union overlaps as real runs do. */
const SHARED_POOL = 2000;
const SHARED_SHARE = 0.7;
const GRID = 200;
const WARMUP = 5;
const GOAL_RATIO = 3;
const SEED = 42;
const TOP_KS = [100, 1000] as const;

interface Workload {
  readonly runs: readonly PackedRun[];
  readonly theoreticalMin: readonly number[];
}

function generate(): Workload {
  const rng = new Rng(SEED);
  const ids: string[] = [];
  for (let d = 0; d < CORPUS; d++) ids.push(`D${String(d).padStart(6, '0')}`);
  // Zero-padded ids sort in numeric order, so document d is DocTable index d.
  const table = docTable(ids);
  if (table.ids.some((id, i) => id !== ids[i])) throw new Error('bench: generated ids must sort in numeric order');
  const queries = Array.from({ length: QUERIES }, (_, q) => `q${q + 1}`);
  const offsets = Int32Array.from({ length: QUERIES + 1 }, (_, q) => q * DEPTH);
  const pools = Array.from({ length: QUERIES }, () => Int32Array.from({ length: SHARED_POOL }, () => rng.nextInt(CORPUS)));
  const runs: PackedRun[] = [];
  const theoreticalMin: number[] = [];
  const stamp = new Int32Array(CORPUS).fill(-1);
  let epoch = 0;
  for (let i = 0; i < INPUTS; i++) {
    const cosine = i >= INPUTS / 2;
    const docs = new Int32Array(QUERIES * DEPTH);
    const scores = new Float64Array(QUERIES * DEPTH);
    for (let q = 0; q < QUERIES; q++) {
      epoch++;
      const pool = pools[q]!;
      let score = cosine ? 0.6 + 0.3 * rng.nextFloat() : 15 + 10 * rng.nextFloat();
      for (let r = 0; r < DEPTH; r++) {
        let d: number;
        do d = rng.nextFloat() < SHARED_SHARE ? pool[rng.nextInt(SHARED_POOL)]! : rng.nextInt(CORPUS);
        while (stamp[d] === epoch);
        stamp[d] = epoch;
        docs[q * DEPTH + r] = d;
        // Falling scores with a tie one step in twenty, to exercise the tie order.
        if (rng.nextFloat() >= 0.05) score -= cosine ? rng.nextFloat() * 0.0012 : rng.nextFloat() * 0.015;
        scores[q * DEPTH + r] = score;
      }
    }
    runs.push(packArrays(queries, offsets, docs, scores));
    theoreticalMin.push(cosine ? -1 : 0);
  }
  return { runs, theoreticalMin };
}

type GridPoint = { readonly spec: FusionSpec; readonly weights: readonly number[] };

function grid(topK: number): GridPoint[] {
  const points: GridPoint[] = [];
  for (let k = 0; k < 50; k++) {
    const rrfK = 5 + 5 * k;
    const spec: FusionSpec = { method: 'rrf', rrfK, normalization: 'none', absent: 'zero', topK };
    points.push({ spec, weights: Array.from({ length: INPUTS }, () => 1) });
    points.push({ spec, weights: Array.from({ length: INPUTS }, (_, i) => (i === 0 ? 0.3 : 1)) });
  }
  const norms: readonly Normalization[] = ['min-max', 'z-score', 'tm2c2', 'none'];
  for (let a = 0; a < 25; a++) {
    const alpha = (a + 1) / 26;
    for (const normalization of norms) {
      points.push({
        spec: { method: 'cc', rrfK: 60, normalization, absent: 'zero', topK },
        weights: Array.from({ length: INPUTS }, (_, i) => (i < INPUTS / 2 ? alpha : 1 - alpha)),
      });
    }
  }
  return points;
}

/** The floor: read every doc and score of every input once. The sum is returned so the pass cannot be elided. */
function readAll(runs: readonly PackedRun[]): number {
  let sum = 0;
  for (const run of runs) {
    const { docs, scores } = run;
    for (let e = 0; e < docs.length; e++) sum += scores[e]! + docs[e]!;
  }
  return sum;
}

function fusePoint(w: Workload, p: GridPoint): PackedRun {
  const inputs: FusionInput[] = w.runs.map((run, i) => ({ run, weight: p.weights[i]!, depth: DEPTH, theoreticalMin: w.theoreticalMin[i]! }));
  return fuse(inputs, p.spec);
}

/** The SHA-256 of every fused run of the grid at both topK, in grid order. */
function fusedHash(w: Workload): string {
  const hash = createHash('sha256');
  for (const topK of TOP_KS) {
    for (const p of grid(topK)) {
      const { offsets, docs, scores } = fusePoint(w, p);
      for (const a of [offsets, docs, scores]) hash.update(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
    }
  }
  return hash.digest('hex');
}

function cpuSeconds(start: NodeJS.CpuUsage): number {
  const c = process.cpuUsage(start);
  return (c.user + c.system) / 1e6;
}

function seconds(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e9;
}

export async function main(args: readonly string[] = process.argv.slice(2)): Promise<void> {
  const out = (line: string): void => void process.stdout.write(`${line}\n`);
  let t = process.hrtime.bigint();
  const w = generate();
  out(
    `workload: ${INPUTS} inputs x ${QUERIES} queries x depth ${DEPTH} over ${CORPUS} documents (generated in ${seconds(t).toFixed(1)} s); ${GRID} grid points`,
  );
  if (args.includes('--hash')) {
    out(`fused runs of the grid at topK ${TOP_KS.join(' and ')}: sha256 ${fusedHash(w)}`);
    return;
  }
  for (const topK of TOP_KS) {
    const points = grid(topK);
    let sink = 0;
    for (let i = 0; i < WARMUP; i++) {
      sink += readAll(w.runs);
      sink += fusePoint(w, points[(i * 41) % points.length]!).docs.length;
    }
    // Floor and fusion alternate, one floor pass before each grid point, so that both sides meet the same load
    // on a shared machine.
    let floor = 0;
    // CPU time as well as wall time: on a shared machine the wall clock also counts other jobs' turns.
    let floorCpu = 0;
    let fuseCpu = 0;
    const perMethod = new Map<string, { seconds: number; points: number }>();
    for (const p of points) {
      t = process.hrtime.bigint();
      let c = process.cpuUsage();
      sink += readAll(w.runs);
      floor += seconds(t);
      floorCpu += cpuSeconds(c);
      t = process.hrtime.bigint();
      c = process.cpuUsage();
      sink += fusePoint(w, p).docs.length;
      fuseCpu += cpuSeconds(c);
      const key = p.spec.method === 'rrf' ? 'rrf' : `cc ${p.spec.normalization}`;
      const m = perMethod.get(key) ?? { seconds: 0, points: 0 };
      perMethod.set(key, { seconds: m.seconds + seconds(t), points: m.points + 1 });
    }
    const fused = [...perMethod.values()].reduce((a, m) => a + m.seconds, 0);
    const ratio = fused / floor;
    out(
      `topK ${topK}: floor (read every entry once per grid point) ${floor.toFixed(2)} s = ${((floor * 1000) / GRID).toFixed(1)} ms/point; fuse ${fused.toFixed(2)} s = ${((fused * 1000) / GRID).toFixed(1)} ms/point`,
    );
    const floorPerPoint = floor / GRID;
    out(
      `topK ${topK}: per method, ms/point (x floor): ${[...perMethod].map(([k, m]) => `${k} ${((m.seconds * 1000) / m.points).toFixed(1)} (${(m.seconds / m.points / floorPerPoint).toFixed(1)}x)`).join(', ')}`,
    );
    out(
      `topK ${topK}: ratio fuse / floor = ${ratio.toFixed(2)}x in wall time, ${(fuseCpu / floorCpu).toFixed(2)}x in CPU time (checksum ${sink.toExponential(3)})`,
    );
    out(
      `goal 30.4 (fusion topK ${topK}): ${ratio.toFixed(2)}x against the floor (one read of the runs per grid point, same run); goal <= ${GOAL_RATIO}x: ${ratio <= GOAL_RATIO ? 'MET' : 'MISSED'}`,
    );
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
