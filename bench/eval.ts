import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chooseThreads } from '../harness/metrics/stream-eval.js';

/**
 * Benchmark of `harness eval -q -m all_trec` (the built CLI, run end to end as a user runs it, start-up
 * included) with `--threads 1`, `2` and `auto`, against trec_eval when env TREC_EVAL names its binary, on
 * generated runs: 5,000 queries x depth 1,000, 50,000 x 100 and 5,000 x 100, each with ~50 judged
 * documents per query graded 0-3. Then the memory workload, 500,000 x 100 (BENCH_EVAL_LARGE=0 skips it):
 * `harness eval -m all_trec` once without -q and once with, peak memory and time of each, no reference. Data come from a seeded PRNG (BENCH_EVAL_SEED, default 20260101), so
 * every machine measures the same files, and another seed gives other data of the same shape. Every
 * output is checked equal to the others (and to trec_eval's) before any ratio is printed. Wall time from
 * the clock; CPU time and peak RSS from GNU time (/usr/bin/time -v) when present.
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
  /**
   * Zero-padded query ids (q0000001): the run then lists its queries in trec_eval's order (ids sorted
   * bytewise), the order in which harness eval without -q keeps running sums only. Unpadded ids (q1, q2,
   * ..., q10) are in numeric order, which trec_eval's is not.
   */
  readonly padded?: boolean;
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
    const qid = w.padded ? `q${String(q + 1).padStart(7, '0')}` : `q${q + 1}`;
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
  /** User + system CPU seconds (all threads); undefined without GNU time. */
  readonly cpuSeconds: number | undefined;
  readonly peakMb: number | undefined;
}

const GNU_TIME = '/usr/bin/time';

/** Runs cmd with stdout to `outPath` (or /dev/null); wall clock, and CPU and peak RSS from GNU time. */
function measure(cmd: string, args: readonly string[], outPath = '/dev/null'): Measurement {
  const out = openSync(outPath, 'w');
  try {
    const useTime = existsSync(GNU_TIME);
    const started = process.hrtime.bigint();
    const res = useTime
      ? spawnSync(GNU_TIME, ['-v', cmd, ...args], { stdio: ['ignore', out, 'pipe'], encoding: 'utf8', maxBuffer: 64 << 20 })
      : spawnSync(cmd, [...args], { stdio: ['ignore', out, 'pipe'], encoding: 'utf8', maxBuffer: 64 << 20 });
    const wall = Number(process.hrtime.bigint() - started) / 1e9;
    if (res.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${res.status}): ${res.stderr.slice(-2000)}`);
    const field = (name: string) => {
      const m = new RegExp(`${name}: ([\\d.]+)`).exec(res.stderr ?? '');
      return m ? Number(m[1]) : undefined;
    };
    const user = field('User time \\(seconds\\)');
    const sys = field('System time \\(seconds\\)');
    const rss = field('Maximum resident set size \\(kbytes\\)');
    return {
      wallSeconds: wall,
      cpuSeconds: user === undefined || sys === undefined ? undefined : user + sys,
      peakMb: rss === undefined ? undefined : rss / 1024,
    };
  } finally {
    closeSync(out);
  }
}

/**
 * Every command is warmed up by one untimed run that also captures its output (the same page cache and
 * disk state for each side), then timed `repeat` times; the fastest run counts, the usual estimate of a
 * command's cost on a machine with other load (each side's CPU time and peak memory from that same run).
 */
function measureBest(cmd: string, args: readonly string[], outPath: string, repeat: number): Measurement {
  measure(cmd, args, outPath);
  let best: Measurement | undefined;
  for (let i = 0; i < repeat; i++) {
    const m = measure(cmd, args);
    if (best === undefined || m.wallSeconds < best.wallSeconds) best = m;
  }
  return best!;
}

function fmt(m: Measurement): string {
  const cpu = m.cpuSeconds === undefined ? '' : `, ${m.cpuSeconds.toFixed(2)} s CPU`;
  return `${m.wallSeconds.toFixed(2)} s wall${cpu}, ${m.peakMb === undefined ? 'peak RSS unknown' : `${m.peakMb.toFixed(0)} MB peak RSS`}`;
}

/**
 * Checks that two trec_eval-format outputs are the same, line for line. The values of `rbp` are left out:
 * trec_eval 10.0 computes them from uninitialised variables (m_rbp.c reads `min` and `max` before setting
 * them), so its own rbp lines change with the compiler and the stack; their query ids are still compared.
 */
export function sameTrecOutput(ours: string, reference: string): { readonly same: boolean; readonly lines: number; readonly firstDiff?: string } {
  const a = ours.split('\n');
  const b = reference.split('\n');
  if (a.length !== b.length) return { same: false, lines: a.length, firstDiff: `${a.length} lines against ${b.length}` };
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) continue;
    const fa = a[i]!.split('\t');
    const fb = b[i]!.split('\t');
    if (fa[0]!.trimEnd() === 'rbp' && fb[0]!.trimEnd() === 'rbp' && fa[1] === fb[1]) continue;
    return { same: false, lines: a.length, firstDiff: `line ${i + 1}: "${a[i]}" against "${b[i]}"` };
  }
  return { same: true, lines: a.length };
}

/** Runs the workloads and prints absolute numbers, and ratios against trec_eval when TREC_EVAL is set. */
export async function main(): Promise<void> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing; run \`npm run build\` first`);
  const trecEval = process.env['TREC_EVAL'];
  const repeat = Number(process.env['BENCH_EVAL_REPEAT'] ?? 3);
  if (!Number.isInteger(repeat) || repeat < 1) throw new Error(`BENCH_EVAL_REPEAT=${process.env['BENCH_EVAL_REPEAT']}: give a positive integer`);
  const workloads: Workload[] = [
    { name: '5k-x-1000', queries: 5_000, depth: 1_000, judged: 50 },
    { name: '50k-x-100', queries: 50_000, depth: 100, judged: 50 },
    { name: '5k-x-100', queries: 5_000, depth: 100, judged: 50 },
  ];
  const cores = availableParallelism();
  const seed = Number(process.env['BENCH_EVAL_SEED'] ?? 20260101);
  if (!Number.isInteger(seed)) throw new Error(`BENCH_EVAL_SEED=${process.env['BENCH_EVAL_SEED']}: give an integer`);
  const dir = mkdtempSync(join(tmpdir(), 'harness-bench-eval-'));
  try {
    process.stdout.write(
      `bench eval: harness eval -q -m all_trec (node ${process.version}, ${cores} cores, load average ${loadavg()[0]!.toFixed(1)})${trecEval ? ` vs ${trecEval}` : ''}\n`,
    );
    process.stdout.write(`  each command: 1 warm-up run (output kept and compared), then the best of ${repeat} timed runs (BENCH_EVAL_REPEAT)\n`);
    if (!trecEval) process.stdout.write('  TREC_EVAL is not set: reference trec_eval absent, printing our absolute numbers only\n');
    if (!existsSync(GNU_TIME)) process.stdout.write(`  ${GNU_TIME} not found: CPU time and peak memory are not measured\n`);
    for (const [i, w] of workloads.entries()) {
      const t0 = Date.now();
      const files = generate(dir, w, seed + i);
      const auto = chooseThreads(files.runBytes, cores);
      process.stdout.write(
        `  ${w.name}: ${w.queries} queries x depth ${w.depth}, ~${w.judged} judged/query, run ${(files.runBytes / 1e6).toFixed(0)} MB (generated in ${((Date.now() - t0) / 1000).toFixed(1)} s); --threads auto would use ${auto} at the current load average\n`,
      );
      const args = ['eval', '-q', '-m', 'all_trec', files.qrels, files.run];
      const configs = [...new Set(['1', ...(cores > 1 ? ['2'] : []), 'auto'])];
      const ours = new Map<string, Measurement>();
      const outputs = new Map<string, string>();
      for (const t of configs) {
        const outPath = join(dir, `out-${t}`);
        ours.set(t, measureBest(process.execPath, [BIN, '--threads', t, ...args], outPath, repeat));
        outputs.set(t, outPath);
        process.stdout.write(`    harness eval --threads ${t.padEnd(4)}: ${fmt(ours.get(t)!)}\n`);
      }
      const first = readFileSync(outputs.get('1')!, 'utf8');
      for (const t of configs.slice(1)) {
        if (readFileSync(outputs.get(t)!, 'utf8') !== first) throw new Error(`${w.name}: --threads ${t} printed something else than --threads 1`);
      }
      const one = ours.get('1')!;
      const autoM = ours.get('auto')!;
      const autoRatio = one.wallSeconds / autoM.wallSeconds;
      process.stdout.write(`    --threads auto vs --threads 1: ${autoRatio.toFixed(2)}x the speed (${autoRatio >= 1 ? 'not slower' : 'SLOWER'})\n`);
      if (trecEval) {
        const refOut = join(dir, 'out-ref');
        const ref = measureBest(trecEval, ['-q', '-m', 'all_trec', files.qrels, files.run], refOut, repeat);
        process.stdout.write(`    trec_eval              : ${fmt(ref)}\n`);
        const check = sameTrecOutput(first, readFileSync(refOut, 'utf8'));
        if (!check.same) throw new Error(`${w.name}: harness eval and trec_eval printed different output (${check.firstDiff})`);
        process.stdout.write(`    output: the same ${check.lines} lines as trec_eval (rbp values not compared, see sameTrecOutput)\n`);
        for (const t of configs) {
          const m = ours.get(t)!;
          const speed = ref.wallSeconds / m.wallSeconds;
          const cpu = m.cpuSeconds !== undefined && ref.cpuSeconds !== undefined ? `, CPU ${(ref.cpuSeconds / m.cpuSeconds).toFixed(2)}` : '';
          const mem = m.peakMb !== undefined && ref.peakMb !== undefined ? `${(m.peakMb / ref.peakMb).toFixed(2)}x trec_eval's` : 'n/a';
          process.stdout.write(`    ratio (--threads ${t}): trec_eval / ours = wall ${speed.toFixed(2)}${cpu} (above 1: we are faster); peak memory ${mem}\n`);
        }
        rmSync(refOut);
      }
      for (const o of outputs.values()) rmSync(o);
      rmSync(files.run);
      rmSync(files.qrels);
    }
    if (process.env['BENCH_EVAL_LARGE'] !== '0') largeWorkload(dir, seed + workloads.length);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * 500,000 queries x depth 100, for memory: each command once (a warm-up would double minutes of work), without
 * -q (only running sums kept) and with -q (a row per query until printed), with `--threads auto`.
 */
export function largeWorkload(dir: string, seed: number, queries = 500_000): void {
  const w: Workload = { name: `${queries / 1000}k-x-100`, queries, depth: 100, judged: 50, padded: true };
  const t0 = Date.now();
  const files = generate(dir, w, seed);
  process.stdout.write(
    `  ${w.name}: ${w.queries} queries x depth ${w.depth}, ~${w.judged} judged/query, run ${(files.runBytes / 1e6).toFixed(0)} MB, qrels ${(files.qrelsBytes / 1e6).toFixed(0)} MB, query ids in trec_eval's order (generated in ${((Date.now() - t0) / 1000).toFixed(1)} s); one run each, no reference\n`,
  );
  try {
    const sums = measure(process.execPath, [BIN, 'eval', '-m', 'all_trec', files.qrels, files.run]);
    process.stdout.write(`    harness eval (no -q): ${fmt(sums)}\n`);
    const rows = measure(process.execPath, [BIN, 'eval', '-q', '-m', 'all_trec', files.qrels, files.run]);
    process.stdout.write(`    harness eval -q     : ${fmt(rows)}\n`);
    if (sums.peakMb !== undefined && rows.peakMb !== undefined) {
      process.stdout.write(
        `    without -q the per-query state is ${(rows.peakMb - sums.peakMb).toFixed(0)} MB smaller (${(((rows.peakMb - sums.peakMb) * 1048576) / w.queries).toFixed(0)} bytes a query); what remains is mostly the qrels index (${(files.qrelsBytes / 1e6).toFixed(0)} MB of qrels text)\n`,
      );
    }
  } finally {
    rmSync(files.run);
    rmSync(files.qrels);
  }
}

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench eval: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
