import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Benchmark of `harness eval -q -m all_trec` (the built CLI, as a user runs it; once single-threaded and once
 * with `--threads`) on generated runs, against
 * trec_eval when env TREC_EVAL names its binary. Two workloads: 5,000 queries x depth 1,000 and 50,000
 * queries x depth 100, each with ~50 judged documents per query graded 0-3. Data come from a seeded PRNG,
 * so every machine measures the same files. Wall time and peak RSS come from GNU time (/usr/bin/time -v)
 * when present, else from the wall clock alone.
 */

const HERE = dirname(fileURLToPath(import.meta.url));
// bench/ in the source tree, dist/bench/ once built.
const ROOT = existsSync(join(HERE, '..', 'package.json')) ? resolve(HERE, '..') : resolve(HERE, '..', '..');
const BIN = join(ROOT, 'dist', 'harness', 'cli', 'bin.js');

/** mulberry32: a small, fast, seedable PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Workload {
  readonly name: string;
  readonly queries: number;
  readonly depth: number;
  readonly judged: number;
}

/** Writes qrels and a run in rank order (as retrieval systems write them), returns their paths. */
export function generate(dir: string, w: Workload, seed: number): { qrels: string; run: string; runBytes: number; qrelsBytes: number } {
  const rand = prng(seed);
  const qrelsPath = join(dir, `${w.name}.qrels`);
  const runPath = join(dir, `${w.name}.run`);
  const qf = openSync(qrelsPath, 'w');
  const rf = openSync(runPath, 'w');
  let runBytes = 0;
  let qrelsBytes = 0;
  const collection = 2_000_000;
  for (let q = 0; q < w.queries; q++) {
    const qid = `q${q + 1}`;
    const docs = new Set<number>();
    while (docs.size < w.depth) docs.add(Math.floor(rand() * collection));
    const ranked = [...docs];
    // Judged documents: ~70% drawn from the ranking (mostly near the top), the rest unretrieved.
    let qrels = '';
    const judged = new Set<number>();
    while (judged.size < w.judged) {
      const fromRun = rand() < 0.7;
      const d = fromRun ? ranked[Math.floor(rand() * rand() * w.depth)]! : Math.floor(rand() * collection);
      if (judged.has(d)) continue;
      judged.add(d);
      const u = rand();
      const grade = u < 0.55 ? 0 : u < 0.8 ? 1 : u < 0.93 ? 2 : 3;
      qrels += `${qid} 0 D${d} ${grade}\n`;
    }
    qrelsBytes += writeSync(qf, qrels);
    let run = '';
    let score = 30 + rand() * 5;
    for (let i = 0; i < w.depth; i++) {
      // Scores fall with rank; one step in twenty is a tie, to exercise the docno tie-break.
      if (rand() >= 0.05) score -= rand() * 0.02;
      run += `${qid} Q0 D${ranked[i]} ${i + 1} ${score.toFixed(6)} bench\n`;
      if (run.length > 1 << 20) {
        runBytes += writeSync(rf, run);
        run = '';
      }
    }
    runBytes += writeSync(rf, run);
  }
  closeSync(qf);
  closeSync(rf);
  return { qrels: qrelsPath, run: runPath, runBytes, qrelsBytes };
}

interface Measurement {
  readonly wallSeconds: number;
  readonly peakMb: number | undefined;
}

const GNU_TIME = '/usr/bin/time';

function measure(cmd: string, args: readonly string[]): Measurement {
  const devNull = openSync('/dev/null', 'w');
  try {
    const useTime = existsSync(GNU_TIME);
    const started = process.hrtime.bigint();
    const res = useTime
      ? spawnSync(GNU_TIME, ['-v', cmd, ...args], { stdio: ['ignore', devNull, 'pipe'], encoding: 'utf8', maxBuffer: 64 << 20 })
      : spawnSync(cmd, [...args], { stdio: ['ignore', devNull, 'pipe'], encoding: 'utf8', maxBuffer: 64 << 20 });
    const wall = Number(process.hrtime.bigint() - started) / 1e9;
    if (res.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${res.status}): ${res.stderr.slice(-2000)}`);
    const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(res.stderr ?? '');
    return { wallSeconds: wall, peakMb: rss ? Number(rss[1]) / 1024 : undefined };
  } finally {
    closeSync(devNull);
  }
}

function fmt(m: Measurement): string {
  return `${m.wallSeconds.toFixed(2)} s, ${m.peakMb === undefined ? 'peak RSS unknown' : `${m.peakMb.toFixed(0)} MB peak RSS`}`;
}

/** Runs both workloads and prints absolute numbers, and ratios when TREC_EVAL is set. */
export async function main(): Promise<void> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing; run \`npm run build\` first`);
  const trecEval = process.env['TREC_EVAL'];
  const workloads: Workload[] = [
    { name: '5k-x-1000', queries: 5_000, depth: 1_000, judged: 50 },
    { name: '50k-x-100', queries: 50_000, depth: 100, judged: 50 },
  ];
  const dir = mkdtempSync(join(tmpdir(), 'harness-bench-eval-'));
  try {
    process.stdout.write(`bench eval: harness eval -q -m all_trec (node ${process.version})${trecEval ? ` vs ${trecEval}` : ''}\n`);
    if (!trecEval) process.stdout.write('  TREC_EVAL is not set: reference trec_eval absent, printing our absolute numbers only\n');
    if (!existsSync(GNU_TIME)) process.stdout.write(`  ${GNU_TIME} not found: peak memory is not measured\n`);
    for (const [i, w] of workloads.entries()) {
      const t0 = Date.now();
      const files = generate(dir, w, 20260101 + i);
      process.stdout.write(`  ${w.name}: ${w.queries} queries x depth ${w.depth}, ~${w.judged} judged/query, run ${(files.runBytes / 1e6).toFixed(0)} MB (generated in ${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
      const args = ['eval', '-q', '-m', 'all_trec', files.qrels, files.run];
      const ours = measure(process.execPath, [BIN, '--threads', '1', ...args]);
      process.stdout.write(`    harness eval --threads 1: ${fmt(ours)}\n`);
      const threads = Math.min(availableParallelism(), 4);
      const oursParallel = threads > 1 ? measure(process.execPath, [BIN, '--threads', String(threads), ...args]) : undefined;
      if (oursParallel) process.stdout.write(`    harness eval --threads ${threads}: ${fmt(oursParallel)}\n`);
      process.stdout.write(`    (the default, --threads auto, uses ${files.qrelsBytes * 8 <= files.runBytes ? threads : 1} here)\n`);
      if (trecEval) {
        const ref = measure(trecEval, ['-q', '-m', 'all_trec', files.qrels, files.run]);
        process.stdout.write(`    trec_eval:                ${fmt(ref)}\n`);
        for (const [label, m] of [['1 thread', ours], [`${threads} threads`, oursParallel]] as const) {
          if (!m) continue;
          const speed = ref.wallSeconds / m.wallSeconds;
          const mem = m.peakMb !== undefined && ref.peakMb !== undefined ? m.peakMb / ref.peakMb : undefined;
          process.stdout.write(`    ratio (${label}): trec_eval wall time / ours = ${speed.toFixed(2)}x; peak memory ${mem === undefined ? 'n/a' : `${mem.toFixed(2)}x trec_eval's`}\n`);
        }
      }
      rmSync(files.run);
      rmSync(files.qrels);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench eval: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
