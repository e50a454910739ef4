import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseTrecEvalArgs } from '../harness/cli/eval.command.js';
import { compileTrecPlan } from '../harness/trec-eval/plan.js';
import { busyThreads, chooseThreads, cpuSample } from '../harness/trec-eval/threads.js';
import { mulberry32 } from './prng.js';

const ALL_TREC_WIDTH = compileTrecPlan(parseTrecEvalArgs(['-q', '-m', 'all_trec', 'qrels', 'run']).settings).width;

/**
 * Benchmark of `harness eval -q -m all_trec` (the built CLI, run end to end as a user runs it, start-up
 * included) with `--threads 1`, `2` and `auto`, against trec_eval when env TREC_EVAL names its binary, on
 * generated runs: 5,000 queries x depth 1,000, 50,000 x 100 and 5,000 x 100, each with ~50 judged
 * documents per query graded 0-3. The commands run in rounds, in turn, and each ratio is the median of the
 * ratios within rounds (paired), which a shared machine's changing load disturbs least. Then the memory
 * workloads, 50,000, 200,000 and 500,000 x 100 (BENCH_EVAL_LARGE: other counts, or 0 to skip): `harness eval
 * -m all_trec` without -q at each size, and with -q at the largest, peak memory and time of each, no
 * reference. Data come from a seeded PRNG (BENCH_EVAL_SEED, default 20260101), so every machine measures the
 * same files, and another seed gives other data of the same shape. Every output is checked equal to the
 * others (and to trec_eval's) before any ratio is printed. Wall time from the clock; CPU time and peak RSS
 * from GNU time (/usr/bin/time -v) when present.
 */

const HERE = dirname(fileURLToPath(import.meta.url));
// bench/ in the source tree, dist/bench/ once built.
const ROOT = existsSync(join(HERE, '..', 'package.json')) ? resolve(HERE, '..') : resolve(HERE, '..', '..');
const BIN = join(ROOT, 'dist', 'harness', 'cli', 'bin.js');

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
  const rand = mulberry32(seed);
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

/** The median of a non-empty list (the mean of the middle two for an even length). */
export function median(xs: readonly number[]): number {
  const v = [...xs].sort((a, b) => a - b);
  const m = v.length >> 1;
  return v.length % 2 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
}

interface Command {
  readonly name: string;
  readonly cmd: string;
  readonly args: readonly string[];
}

/**
 * Every command is warmed up by one untimed run that also captures its output (the same page cache and
 * disk state for each side), then the commands are timed in rounds, one run of each per round in turn, the
 * order reversed every other round (A B C, C B A, ...): a change in the machine's load falls on all of them
 * alike, and no command always follows the same one. A command run right after a heavy one (two threads,
 * trec_eval's 400 MB) measured up to 1.5x slower on this machine whatever it was, so the commands compared
 * most closely are listed next to each other. Returns the rounds, each in the commands' order.
 */
function measureRounds(commands: readonly Command[], outPaths: readonly string[], repeat: number): Measurement[][] {
  commands.forEach((c, i) => measure(c.cmd, c.args, outPaths[i]));
  const rounds: Measurement[][] = [];
  for (let r = 0; r < repeat; r++) {
    const order = commands.map((_, i) => (r % 2 === 0 ? i : commands.length - 1 - i));
    const round: Measurement[] = [];
    for (const i of order) round[i] = measure(commands[i]!.cmd, commands[i]!.args);
    rounds.push(round);
  }
  return rounds;
}

/**
 * `extra` more rounds of two commands alone, back to back, in ABBA order: the pair goal 30.1 compares (auto and
 * one thread, the same code path wherever auto takes one thread). With four rounds the median paired ratio of two
 * equal commands spread 0.95-1.01 on this machine, and the goal takes the worst of three workloads, so a 2%
 * threshold read noise; sixteen pairs narrow it (bench/README.md).
 */
function pairRounds(a: Command, b: Command, extra: number): Measurement[][] {
  const rounds: Measurement[][] = [];
  for (let r = 0; r < extra; r++) {
    const bFirst = r % 4 === 1 || r % 4 === 2;
    const first = measure((bFirst ? b : a).cmd, (bFirst ? b : a).args);
    const second = measure((bFirst ? a : b).cmd, (bFirst ? a : b).args);
    rounds.push(bFirst ? [second, first] : [first, second]);
  }
  return rounds;
}

/** Medians over the rounds of command i: wall, CPU, peak RSS. */
function medianOf(rounds: readonly Measurement[][], i: number): Measurement {
  const col = rounds.map((r) => r[i]!);
  const cpu = col.map((m) => m.cpuSeconds);
  const rss = col.map((m) => m.peakMb);
  return {
    wallSeconds: median(col.map((m) => m.wallSeconds)),
    cpuSeconds: cpu.every((x) => x !== undefined) ? median(cpu as number[]) : undefined,
    peakMb: rss.every((x) => x !== undefined) ? median(rss as number[]) : undefined,
  };
}

/** The ratio of command a's time to command b's in each round (above 1: b is faster), its median, min and max. */
function pairedRatios(
  rounds: readonly Measurement[][],
  a: number,
  b: number,
  of: 'wallSeconds' | 'cpuSeconds',
): { median: number; min: number; max: number } | undefined {
  const xs: number[] = [];
  for (const r of rounds) {
    const x = r[a]![of];
    const y = r[b]![of];
    if (x === undefined || y === undefined) return undefined;
    xs.push(x / y);
  }
  return { median: median(xs), min: Math.min(...xs), max: Math.max(...xs) };
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

/** A paired ratio: the median of the per-round ratios, their min and max. */
interface Paired {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

/** What one workload measured for the goal lines. */
interface WorkloadResult {
  readonly name: string;
  /** `--threads 1`'s time over auto's in each round (above 1: auto is faster), wall and CPU. */
  readonly autoVsOne: Paired;
  readonly autoVsOneCpu?: Paired;
  /** trec_eval's time over `--threads 1`'s (above 1: we are faster), and our peak RSS over trec_eval's. */
  readonly vsTrec?: { readonly wall: Paired; readonly cpu?: Paired; readonly memory?: number };
}

/**
 * A goal line, as the summary of `npm run bench` collects it: `goal 30.N (name): <ratio>x against <reference>;
 * goal <op> <target>: MET|MISSED`, or `not measured (<reason>): MISSED` without a ratio.
 */
export function goalLine(n: number, name: string, ratio: number | string, against: string, op: '>=' | '<=', target: number): string {
  if (typeof ratio === 'string') return `goal 30.${n} (${name}): not measured (${ratio}): MISSED`;
  const met = op === '>=' ? ratio >= target : ratio <= target;
  return `goal 30.${n} (${name}): ${ratio.toFixed(3)}x against ${against}; goal ${op} ${target}x: ${met ? 'MET' : 'MISSED'}`;
}

/** Runs the workloads and prints absolute numbers, ratios against trec_eval when TREC_EVAL is set, and the goal lines. */
export async function main(): Promise<void> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing; run \`npm run build\` first`);
  const trecEval = process.env['TREC_EVAL'];
  const repeat = Number(process.env['BENCH_EVAL_REPEAT'] ?? 4);
  if (!Number.isInteger(repeat) || repeat < 1) throw new Error(`BENCH_EVAL_REPEAT=${process.env['BENCH_EVAL_REPEAT']}: give a positive integer`);
  const pairs = Number(process.env['BENCH_EVAL_PAIRS'] ?? 12);
  if (!Number.isInteger(pairs) || pairs < 0) throw new Error(`BENCH_EVAL_PAIRS=${process.env['BENCH_EVAL_PAIRS']}: give an integer >= 0`);
  const workloads: Workload[] = [
    { name: '5k-x-1000', queries: 5_000, depth: 1_000, judged: 50 },
    { name: '50k-x-100', queries: 50_000, depth: 100, judged: 50 },
    { name: '5k-x-100', queries: 5_000, depth: 100, judged: 50 },
  ];
  const cores = availableParallelism();
  const seed = Number(process.env['BENCH_EVAL_SEED'] ?? 20260101);
  if (!Number.isInteger(seed)) throw new Error(`BENCH_EVAL_SEED=${process.env['BENCH_EVAL_SEED']}: give an integer`);
  const dir = mkdtempSync(join(tmpdir(), 'harness-bench-eval-'));
  const results: WorkloadResult[] = [];
  try {
    process.stdout.write(
      `bench eval: harness eval -q -m all_trec (node ${process.version}, ${cores} cores, load average ${loadavg()[0]!.toFixed(1)})${trecEval ? ` vs ${trecEval}` : ''}\n`,
    );
    process.stdout.write(
      `  each command: 1 warm-up run (output kept and compared), then ${repeat} timed rounds (BENCH_EVAL_REPEAT), the commands in turn in each; medians; then ${pairs} more rounds of --threads 1 and auto alone, back to back (BENCH_EVAL_PAIRS), for their paired ratio\n`,
    );
    if (!trecEval) process.stdout.write('  TREC_EVAL is not set: reference trec_eval absent, printing our absolute numbers only\n');
    if (!existsSync(GNU_TIME)) process.stdout.write(`  ${GNU_TIME} not found: CPU time and peak memory are not measured\n`);
    const choice = choiceCost(cores);
    // BENCH_EVAL_SMALL=0 runs the memory workloads alone (a few minutes at 500k).
    // BENCH_EVAL_WORKLOADS=5k-x-1000,...: only the paired workloads named (each keeps its seed).
    const only = process.env['BENCH_EVAL_WORKLOADS']?.split(',');
    for (const [i, w] of (process.env['BENCH_EVAL_SMALL'] === '0' ? [] : workloads).entries())
      if (only === undefined || only.includes(w.name)) results.push(smallWorkload(dir, w, seed + i, { repeat, pairs }, cores, trecEval));
    if (process.env['BENCH_EVAL_THREADS'] !== '0' && process.env['BENCH_EVAL_SMALL'] !== '0' && cores > 1)
      results.push(threadsWorkload(dir, seed + workloads.length + 1, repeat, cores));
    const scale = scalingWorkload(dir, seed + workloads.length + 2, cores);
    const large = process.env['BENCH_EVAL_LARGE'] ?? '50000,200000,500000';
    if (large !== '0') {
      const sizes = large.split(',').map(Number);
      if (!sizes.every((n) => Number.isInteger(n) && n >= 1000))
        throw new Error(`BENCH_EVAL_LARGE=${large}: give 0 or query counts (integers >= 1000), comma-separated`);
      memoryWorkloads(dir, seed + workloads.length, sizes);
    }
    printGoals(results, choice, scale, cores, trecEval !== undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * What `--threads auto`'s choice costs, timed in this process: its costliest path as harness eval takes it on
 * a run large enough to weigh (a /proc/stat sample, then chooseThreads asking busyThreads), median and
 * maximum milliseconds over 200 calls. Below 128 MB of run the choice is one comparison.
 */
export function choiceCost(cores: number, calls = 200): { readonly median: number; readonly max: number } {
  const ms: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    const since = cpuSample();
    chooseThreads(1 << 30, cores, () => busyThreads(since, cores));
    ms.push(performance.now() - t0);
  }
  const cost = { median: median(ms), max: Math.max(...ms) };
  process.stdout.write(
    `  --threads auto's choice (sample /proc, weigh the run): median ${cost.median.toFixed(3)} ms, max ${cost.max.toFixed(3)} ms over ${calls} calls\n`,
  );
  return cost;
}

/** One of the paired workloads: `--threads 1`, `2` and auto (and trec_eval), outputs compared, ratios printed. */
function smallWorkload(
  dir: string,
  w: Workload,
  seed: number,
  { repeat, pairs }: { readonly repeat: number; readonly pairs: number },
  cores: number,
  trecEval: string | undefined,
): WorkloadResult {
  const t0 = Date.now();
  const files = generate(dir, w, seed);
  // What `--threads auto` weighs once the qrels are read: every query judged, all_trec's row.
  const auto = chooseThreads(files.runBytes, cores, undefined, { queries: w.queries, width: ALL_TREC_WIDTH });
  process.stdout.write(
    `  ${w.name}: ${w.queries} queries x depth ${w.depth}, ~${w.judged} judged/query, run ${(files.runBytes / 1e6).toFixed(0)} MB (generated in ${((Date.now() - t0) / 1000).toFixed(1)} s); --threads auto would use ${auto} with what runs now\n`,
  );
  const args = ['eval', '-q', '-m', 'all_trec', files.qrels, files.run];
  // Auto next to one thread, the pair goal 30.1 compares (measureRounds).
  const configs = [...new Set(['1', 'auto', ...(cores > 1 ? ['2'] : [])])];
  const commands: Command[] = configs.map((t) => ({ name: `harness eval --threads ${t}`, cmd: process.execPath, args: [BIN, '--threads', t, ...args] }));
  if (trecEval) commands.push({ name: 'trec_eval', cmd: trecEval, args: ['-q', '-m', 'all_trec', files.qrels, files.run] });
  const outPaths = commands.map((_, i) => join(dir, `out-${i}`));
  try {
    const rounds = measureRounds(commands, outPaths, repeat);
    const width = Math.max(...commands.map((c) => c.name.length));
    commands.forEach((c, i) => process.stdout.write(`    ${c.name.padEnd(width)}: ${fmt(medianOf(rounds, i))} (medians of ${repeat})\n`));
    const first = readFileSync(outPaths[0]!, 'utf8');
    configs.forEach((t, i) => {
      if (readFileSync(outPaths[i]!, 'utf8') !== first) throw new Error(`${w.name}: --threads ${t} printed something else than --threads 1`);
    });
    const verdict = (x: number) => (x >= 1 ? 'not slower' : x >= 0.98 ? 'within 2% (noise)' : 'SLOWER');
    for (const t of configs.slice(1)) {
      const k = configs.indexOf(t);
      const wall = pairedRatios(rounds, 0, k, 'wallSeconds')!;
      const cpu = pairedRatios(rounds, 0, k, 'cpuSeconds');
      process.stdout.write(
        `    --threads ${t} vs --threads 1: ${wall.median.toFixed(2)}x the speed (median of ${repeat} paired wall ratios, ${wall.min.toFixed(2)}-${wall.max.toFixed(2)}; ${verdict(wall.median)})${cpu ? `, CPU ratio ${cpu.median.toFixed(2)}` : ''}\n`,
      );
    }
    const a = configs.indexOf('auto');
    // Every round's (one thread, auto) pair: the main rounds' and the extra back-to-back ones.
    const both = [...rounds.map((r) => [r[0]!, r[a]!]), ...pairRounds(commands[0]!, commands[a]!, pairs)];
    const wall = pairedRatios(both, 0, 1, 'wallSeconds')!;
    const cpu = pairedRatios(both, 0, 1, 'cpuSeconds');
    process.stdout.write(
      `    goal 30.1's pair, --threads auto vs --threads 1 over ${both.length} rounds (${pairs} of them the two alone): ${wall.median.toFixed(3)}x the speed (median paired wall ratio, ${wall.min.toFixed(2)}-${wall.max.toFixed(2)})${cpu ? `, CPU ${cpu.median.toFixed(3)}` : ''}\n`,
    );
    return {
      name: w.name,
      autoVsOne: wall,
      ...(cpu ? { autoVsOneCpu: cpu } : {}),
      ...(trecEval ? { vsTrec: compareTrec(w, rounds, configs, outPaths, first) } : {}),
    };
  } finally {
    for (const o of [...outPaths, files.run, files.qrels]) rmSync(o, { force: true });
  }
}

/** Checks our output against trec_eval's (the last command) and prints trec_eval / ours for each thread setting. */
function compareTrec(w: Workload, rounds: readonly Measurement[][], configs: readonly string[], outPaths: readonly string[], first: string) {
  const ref = configs.length;
  const check = sameTrecOutput(first, readFileSync(outPaths[ref]!, 'utf8'));
  if (!check.same) throw new Error(`${w.name}: harness eval and trec_eval printed different output (${check.firstDiff})`);
  process.stdout.write(`    output: the same ${check.lines} lines as trec_eval (rbp values not compared, see sameTrecOutput)\n`);
  const refM = medianOf(rounds, ref);
  const memoryOf = (i: number) => {
    const m = medianOf(rounds, i);
    return m.peakMb !== undefined && refM.peakMb !== undefined ? m.peakMb / refM.peakMb : undefined;
  };
  configs.forEach((t, i) => {
    const wall = pairedRatios(rounds, ref, i, 'wallSeconds')!;
    const cpu = pairedRatios(rounds, ref, i, 'cpuSeconds');
    const mem = memoryOf(i);
    process.stdout.write(
      `    ratio (--threads ${t}): trec_eval / ours = wall ${wall.median.toFixed(2)}${cpu ? `, CPU ${cpu.median.toFixed(2)}` : ''} (medians of paired ratios; above 1: we are faster); peak memory ${mem === undefined ? 'n/a' : `${mem.toFixed(2)}x trec_eval's`}\n`,
    );
  });
  const cpu = pairedRatios(rounds, ref, 0, 'cpuSeconds');
  const memory = memoryOf(0);
  return { wall: pairedRatios(rounds, ref, 0, 'wallSeconds')!, ...(cpu ? { cpu } : {}), ...(memory !== undefined ? { memory } : {}) };
}

/**
 * Whether two threads pay off where `--threads auto` takes them: a run three times the bench's 50k x 100
 * (150,000 queries x depth 100, 564 MB, ~5.8 s of one thread's scoring by stream-eval's estimate), `--threads 1`
 * against `auto`, paired rounds, outputs compared; no reference (trec_eval would take minutes a run).
 * BENCH_EVAL_THREADS=0 skips it.
 */
export function threadsWorkload(dir: string, seed: number, repeat: number, cores: number): WorkloadResult {
  const w: Workload = { name: '150k-x-100', queries: 150_000, depth: 100, judged: 50 };
  const t0 = Date.now();
  const files = generate(dir, w, seed);
  const auto = chooseThreads(files.runBytes, cores, undefined, { queries: w.queries, width: ALL_TREC_WIDTH });
  process.stdout.write(
    `  ${w.name} (threads): run ${(files.runBytes / 1e6).toFixed(0)} MB (generated in ${((Date.now() - t0) / 1000).toFixed(1)} s); --threads auto would use ${auto} with what runs now; no reference\n`,
  );
  const outPaths = [join(dir, 'threads-1'), join(dir, 'threads-auto')];
  try {
    const commands: Command[] = ['1', 'auto'].map((t) => ({
      name: `harness eval --threads ${t}`,
      cmd: process.execPath,
      args: [BIN, 'eval', '--threads', t, '-q', '-m', 'all_trec', files.qrels, files.run],
    }));
    const rounds = measureRounds(commands, outPaths, repeat);
    const width = Math.max(...commands.map((c) => c.name.length));
    commands.forEach((c, i) => process.stdout.write(`    ${c.name.padEnd(width)}: ${fmt(medianOf(rounds, i))} (medians of ${repeat})\n`));
    if (readFileSync(outPaths[1]!, 'utf8') !== readFileSync(outPaths[0]!, 'utf8'))
      throw new Error(`${w.name}: --threads auto printed something else than --threads 1`);
    const wall = pairedRatios(rounds, 0, 1, 'wallSeconds')!;
    const cpu = pairedRatios(rounds, 0, 1, 'cpuSeconds');
    process.stdout.write(
      `    --threads auto vs --threads 1: ${wall.median.toFixed(2)}x the speed (median of ${repeat} paired wall ratios, ${wall.min.toFixed(2)}-${wall.max.toFixed(2)}; ${wall.median >= 1.05 ? 'pays off' : wall.median >= 0.98 ? 'no clear gain' : 'SLOWER'})${cpu ? `, CPU ratio ${cpu.median.toFixed(2)}` : ''}\n`,
    );
    return { name: w.name, autoVsOne: wall, ...(cpu ? { autoVsOneCpu: cpu } : {}) };
  } finally {
    for (const o of [...outPaths, files.run, files.qrels]) rmSync(o, { force: true });
  }
}

/** The scaling curve of goal 30.3: each thread count's time and peak RSS on one large run, against one thread's. */
interface Scaling {
  /** Why it was not measured, when it was not. */
  readonly skipped?: string;
  /** One thread's time over auto's, and auto's peak RSS over one thread's. */
  readonly autoSpeedup?: number;
  readonly autoMemory?: number;
}

/**
 * Goal 30.3's run: BENCH_EVAL_SCALE queries x depth 100 (default 500,000, ~1.9 GB of run; 0 skips it),
 * unpadded query ids (out of trec_eval's order, so the qrels are indexed and threads apply), `eval -m
 * all_trec` with `--threads` 1, 2, 4 and 8 (those above the core count printed as skipped) and auto, one run
 * each, outputs compared; wall, CPU and peak RSS of each against one thread's.
 */
export function scalingWorkload(dir: string, seed: number, cores: number): Scaling {
  const queries = Number(process.env['BENCH_EVAL_SCALE'] ?? 500_000);
  if (!Number.isInteger(queries) || queries < 0) throw new Error(`BENCH_EVAL_SCALE=${process.env['BENCH_EVAL_SCALE']}: give 0 or a query count`);
  if (queries === 0) return { skipped: 'BENCH_EVAL_SCALE=0' };
  const w: Workload = { name: `${queries / 1000}k-x-100`, queries, depth: 100, judged: 50 };
  const t0 = Date.now();
  const files = generate(dir, w, seed);
  const auto = chooseThreads(files.runBytes, cores, undefined, { queries, width: ALL_TREC_WIDTH });
  process.stdout.write(
    `  ${w.name} (scaling, ${cores} cores): run ${(files.runBytes / 1e6).toFixed(0)} MB (generated in ${((Date.now() - t0) / 1000).toFixed(1)} s); --threads auto would use ${auto} with what runs now; one run each\n`,
  );
  const outPaths: string[] = [];
  try {
    let one: Measurement | undefined;
    let first: string | undefined;
    const run = (t: string): Measurement => {
      const out = join(dir, `scale-${t}`);
      outPaths.push(out);
      const m = measure(process.execPath, [BIN, 'eval', '--threads', t, '-m', 'all_trec', files.qrels, files.run], out);
      const text = readFileSync(out, 'utf8');
      first ??= text;
      if (text !== first) throw new Error(`${w.name}: --threads ${t} printed something else than --threads 1`);
      one ??= m;
      const vs = `${(one.wallSeconds / m.wallSeconds).toFixed(2)}x one thread's speed, peak RSS ${m.peakMb !== undefined && one.peakMb !== undefined ? `${(m.peakMb / one.peakMb).toFixed(2)}x` : 'n/a'}`;
      process.stdout.write(`    --threads ${t.padEnd(4)}: ${fmt(m)}; ${vs}\n`);
      return m;
    };
    for (const t of [1, 2, 4, 8]) {
      if (t > cores) process.stdout.write(`    --threads ${String(t).padEnd(4)}: skipped (${cores} cores < ${t})\n`);
      else run(String(t));
    }
    const a = run('auto');
    return {
      autoSpeedup: one!.wallSeconds / a.wallSeconds,
      ...(a.peakMb !== undefined && one!.peakMb !== undefined ? { autoMemory: a.peakMb / one!.peakMb } : {}),
    };
  } finally {
    for (const o of [...outPaths, files.run, files.qrels]) rmSync(o, { force: true });
  }
}

/** A bare Node's peak RSS (`node -e 0`, median of 3): the floor under any harness command's memory. */
function nodeFloorMb(): number | undefined {
  const rss = [0, 1, 2].map(() => measure(process.execPath, ['-e', '0']).peakMb);
  return rss.every((x) => x !== undefined) ? median(rss as number[]) : undefined;
}

/** The goal lines of issue 30's goals 1-3 (harness eval and its threads), from what this run measured. */
function printGoals(
  results: readonly WorkloadResult[],
  choice: { readonly median: number; readonly max: number },
  scale: Scaling,
  cores: number,
  withTrec: boolean,
): void {
  const say = (line: string) => process.stdout.write(`${line}\n`);
  process.stdout.write('  goals (issue 30):\n');
  const worst = results.reduce<WorkloadResult | undefined>((w, r) => (w === undefined || r.autoVsOne.median < w.autoVsOne.median ? r : w), undefined);
  say(
    worst
      ? `${goalLine(1, 'auto vs one thread, worst workload', worst.autoVsOne.median, `--threads 1 (paired wall, ${worst.name}${worst.autoVsOneCpu ? `; CPU ${worst.autoVsOneCpu.median.toFixed(2)}x` : ''})`, '>=', 0.98)}`
      : goalLine(1, 'auto vs one thread, worst workload', 'no paired workload ran (BENCH_EVAL_SMALL=0)', '', '>=', 0.98),
  );
  // The median call: the slowest of 200 on a shared machine is mostly the scheduler's (printed above).
  say(goalLine(1, "auto's choice cost", choice.median / 10, `10 ms (median call; slowest ${choice.max.toFixed(2)} ms)`, '<=', 1));
  const trec = (name: string) => results.find((r) => r.name === name)?.vsTrec;
  const why = withTrec ? 'workload not run' : 'TREC_EVAL not set';
  const deep = trec('5k-x-1000');
  say(goalLine(2, 'speed at 5k x 1,000, one thread', deep?.wall.median ?? why, "trec_eval's wall time", '>=', 5));
  const wide = trec('50k-x-100');
  say(goalLine(2, 'speed at 50k x 100, one thread', wide?.wall.median ?? why, "trec_eval's wall time", '>=', 8));
  const small = trec('5k-x-100');
  say(goalLine(2, 'CPU at 5k x 100, one thread', small?.cpu?.median ?? (small ? 'no GNU time' : why), "trec_eval's CPU time", '>=', 2));
  const floor = nodeFloorMb();
  say(
    `${goalLine(2, 'peak RSS at 5k x 100, one thread', small?.memory ?? (small ? 'no GNU time' : why), "trec_eval's peak RSS", '<=', 1)}${floor === undefined ? '' : ` (a bare \`node -e 0\`: ${floor.toFixed(0)} MB)`}`,
  );
  const g3 = 'auto vs one thread at scale';
  if (scale.skipped !== undefined) say(goalLine(3, g3, `scaling run skipped: ${scale.skipped}`, '', '>=', 4));
  else if (cores < 8) say(goalLine(3, g3, `${cores} cores < 8; auto ${scale.autoSpeedup!.toFixed(2)}x here`, '', '>=', 4));
  else {
    say(goalLine(3, g3, scale.autoSpeedup!, "one thread's wall time", '>=', 4));
    say(goalLine(3, 'peak RSS of auto at scale', scale.autoMemory ?? 'no GNU time', "one thread's peak RSS", '<=', 1.5));
  }
}

/**
 * The memory workloads: `sizes` queries x depth 100 (default 50,000, 200,000 and 500,000), query ids in
 * trec_eval's order, each evaluated once without -q and once with -q (`--threads auto`: qrels and run
 * streamed, the -q lines spooled, ADR 0023), and, at the two smallest sizes, once with `--threads 2 -q`,
 * which indexes the qrels as any input out of trec_eval's order does. Peak RSS of each, no reference.
 */
export function memoryWorkloads(dir: string, seed: number, sizes: readonly number[]): void {
  const peaks = { sums: [] as [number, number][], rows: [] as [number, number][], index: [] as [number, number][] };
  const sorted = [...sizes].sort((a, b) => a - b);
  for (const queries of sizes) {
    const w: Workload = { name: `${queries / 1000}k-x-100`, queries, depth: 100, judged: 50, padded: true };
    const t0 = Date.now();
    const files = generate(dir, w, seed);
    process.stdout.write(
      `  ${w.name} (memory): run ${(files.runBytes / 1e6).toFixed(0)} MB, qrels ${(files.qrelsBytes / 1e6).toFixed(0)} MB, query ids in trec_eval's order (generated in ${((Date.now() - t0) / 1000).toFixed(1)} s); one run each, no reference\n`,
    );
    try {
      const sums = measure(process.execPath, [BIN, 'eval', '-m', 'all_trec', files.qrels, files.run]);
      process.stdout.write(`    harness eval (no -q)         : ${fmt(sums)}\n`);
      if (sums.peakMb !== undefined) peaks.sums.push([queries, sums.peakMb]);
      const rows = measure(process.execPath, [BIN, 'eval', '-q', '-m', 'all_trec', files.qrels, files.run]);
      process.stdout.write(`    harness eval -q              : ${fmt(rows)}\n`);
      if (rows.peakMb !== undefined) peaks.rows.push([queries, rows.peakMb]);
      if (sorted.indexOf(queries) < 2) {
        const index = measure(process.execPath, [BIN, 'eval', '--threads', '2', '-q', '-m', 'all_trec', files.qrels, files.run]);
        process.stdout.write(
          `    harness eval --threads 2 -q  : ${fmt(index)} (qrels indexed, a row per query kept: ${(((index.peakMb ?? 0) * 1048576) / queries).toFixed(0)} bytes of peak RSS a query)\n`,
        );
        if (index.peakMb !== undefined) peaks.index.push([queries, index.peakMb]);
      }
    } finally {
      rmSync(files.run);
      rmSync(files.qrels);
    }
  }
  const line = (what: string, p: readonly [number, number][], verdict: (growth: number, lastStep: number) => string) => {
    if (p.length < 2) return;
    const [q0, m0] = p[0]!;
    const [q1, m1] = p[p.length - 1]!;
    const [qb, mb] = p[p.length - 2]!;
    // What a query added between the two largest sizes: the size of whatever is kept per query.
    const perQuery = (((m1 - mb) * 1048576) / (q1 - qb)).toFixed(0);
    process.stdout.write(
      `  peak RSS ${what}: ${p.map(([q, m]) => `${q / 1000}k ${m.toFixed(0)} MB`).join(', ')}; ${q1 / q0}x the queries, ${(m1 / m0).toFixed(2)}x the memory; ${perQuery} bytes a query from ${qb / 1000}k to ${q1 / 1000}k (${verdict(m1 / m0, m1 / mb)})\n`,
    );
  };
  line('without -q', peaks.sums, (g) => (g < 1.2 ? 'flat' : 'NOT flat'));
  // Bounded: no growth left between the two largest sizes (a row per query would add 7 kB each).
  line('with -q (streamed, spooled)', peaks.rows, (g, last) =>
    g < 1.2 ? 'flat' : peaks.rows.length > 2 && last < 1.1 ? 'bounded: no longer grows' : 'NOT bounded',
  );
  line('with -q on the index path', peaks.index, (g) =>
    g < 1.2 ? 'flat' : 'grows: the qrels index must hold every judgment, and a row per query is kept until printed',
  );
}

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench eval: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
