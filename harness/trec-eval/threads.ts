import { readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';

/** How many threads `harness eval --threads auto` takes: the run's size, its scoring work, the idle cores (/proc). */

/**
 * Below this size `--threads N` scores the run on the main thread alone. A worker must start a V8 isolate and
 * load the metrics modules before it reads a byte (0.1-0.2 s on an idle core, 0.7-0.9 s wall measured on a
 * 2-core machine at load 11), then runs cold (its JIT starts over: ~0.3 s of CPU), while one thread scores
 * ~50 MB of run per CPU second at depth 100-1,000 (bench/eval.ts).
 */
export const PARALLEL_MIN_BYTES = 32 << 20;
/**
 * `--threads auto` adds a thread per this much run: twice PARALLEL_MIN_BYTES, so that the half of the run a
 * worker can take (over a second of scoring) is at least twice what the worker costs to start.
 */
const AUTO_BYTES_PER_THREAD = 64 << 20;
/**
 * Never more threads than this: the main thread's merge and printing do not shrink with more workers, and each
 * worker adds its isolate (~40 MB). 8, not 4: on a machine with 8 or more idle cores a run of 512 MB or more
 * may take 8, the least that can score a 500k x 100 run 4x faster than one thread (issue 30, goal 3; ADR 0043).
 */
export const MAX_THREADS = 8;
/**
 * One thread's scoring pace at `eval -q -m all_trec` (bench/eval.ts on the 2-core machine, ADR 0023 "auto by
 * the work"): reading, parsing and sorting a run byte, and computing one value of a query's row. 185 MB at
 * depth 1,000 (5,000 queries) scored in 1.1-1.35 s, the same bytes at depth 100 (50,000 queries) in 1.3 s
 * for one measure and 2.1 s for all_trec's 99 values.
 */
const SCORING_NS_PER_RUN_BYTE = 6;
const SCORING_NS_PER_VALUE = 160;
/**
 * `--threads auto` gives a run a worker only when one thread would score it for this long. A worker starts
 * ~0.2 s late and runs its first pieces cold, and on the 2-core machine two threads each score ~1.5x slower
 * than one alone (a single thread already keeps ~1.2 cores busy with its collector and compiler), so a worker
 * saves time only on long runs. Paired wall ratios of `--threads 2` against one thread, 2026-11-24: 5k x 1,000
 * (1.2 s estimated) 0.98-1.05; 50k x 100 (1.9 s) 0.93-1.13, median 0.99; 150k x 100 (5.8 s) 1.05-1.27,
 * median 1.14 (ADR 0023, "auto by the work").
 */
const AUTO_MIN_SCORING_SECONDS = 4;

/** What a run asks of its scoring: the queries with judgments and the values of each query's row (plan.width). */
export interface ScoringWork {
  readonly queries: number;
  readonly width: number;
}

/** The seconds one thread is expected to score a run in: runBytes x 6 ns + queries x width x 160 ns. */
export function scoringSeconds(runBytes: number, work: ScoringWork): number {
  return (runBytes * SCORING_NS_PER_RUN_BYTE + work.queries * work.width * SCORING_NS_PER_VALUE) / 1e9;
}

/**
 * How many threads `--threads auto` gives a run of `runBytes` bytes: one per AUTO_BYTES_PER_THREAD of run
 * (so one below 128 MB), up to MAX_THREADS (8) and the cores no other thread is running on now (`cores - busy`).
 * A worker with no idle core only competes with the main thread for one and costs its start-up, memory and
 * cold JIT: then one thread. `busy` is what runs now (busyThreads), not the 1-minute load average, which
 * lags by a minute and counts this process's own previous runs. Given the `work` (known once the qrels are
 * read), one thread as well when its scoring is shorter than AUTO_MIN_SCORING_SECONDS (4 s).
 */
export function chooseThreads(runBytes: number, cores = availableParallelism(), busy: number | (() => number) = busyThreads, work?: ScoringWork): number {
  // The byte and work rules first: they need no reading of /proc, which most runs (one thread) then skip.
  if (!autoMayThread(runBytes) || cores < 2) return 1;
  if (work !== undefined && scoringSeconds(runBytes, work) < AUTO_MIN_SCORING_SECONDS) return 1;
  // A quarter core of slack for what a measurement over a short window calls busy (daemons, this process's GC).
  const idle = Math.floor(cores - (typeof busy === 'number' ? busy : busy()) + 0.25);
  return Math.max(1, Math.min(idle, MAX_THREADS, Math.floor(runBytes / AUTO_BYTES_PER_THREAD)));
}

/** Whether `--threads auto` may give a run of `runBytes` bytes more than one thread on any machine. */
export function autoMayThread(runBytes: number): boolean {
  return runBytes >= 2 * AUTO_BYTES_PER_THREAD;
}

/** The machine's CPU time counters (/proc/stat, clock ticks) and this process's CPU time, at one moment. */
export interface CpuSample {
  /** Ticks all cores spent idle (idle + iowait), and in all states. */
  readonly idle: number;
  readonly total: number;
  /** This process's CPU time (user + system, microseconds) and the monotonic clock (milliseconds). */
  readonly own: number;
  readonly at: number;
}

/**
 * The cores other processes kept busy between two CpuSamples: cores x (1 - idle ticks / all ticks), less this
 * process's CPU seconds per second of the window.
 */
export function busyBetween(since: CpuSample, now: CpuSample, cores: number): number {
  const machine = cores * (1 - (now.idle - since.idle) / (now.total - since.total));
  const own = (now.own - since.own) / 1000 / (now.at - since.at);
  return Math.max(0, machine - own);
}

/** A CpuSample, or undefined where /proc/stat is absent. */
export function cpuSample(): CpuSample | undefined {
  try {
    const text = readFileSync('/proc/stat', 'latin1');
    const f = text.slice(0, text.indexOf('\n')).trim().split(/\s+/);
    // cpu user nice system idle iowait irq softirq steal
    const v = f.slice(1, 9).map(Number);
    if (f[0] !== 'cpu' || v.length < 8 || !v.every(Number.isFinite)) return undefined;
    const own = process.cpuUsage();
    return { idle: v[3]! + v[4]!, total: v.reduce((a, b) => a + b, 0), own: own.user + own.system, at: performance.now() };
  } catch {
    return undefined;
  }
}

/**
 * The cores other processes keep busy. Measured when `since` is a CpuSample taken long enough ago (20 clock
 * ticks, ~100 ms on 2 cores; harness eval takes it before reading the qrels): the cores not idle since then,
 * less the ones this process used. Otherwise a snapshot: the threads runnable right now (the fourth field of
 * /proc/loadavg, `runnable/total`) less this one, or the 1-minute load average where /proc is absent.
 */
export function busyThreads(since?: CpuSample, cores = availableParallelism()): number {
  const now = since && cpuSample();
  if (since && now && now.total - since.total >= 20 && now.at > since.at) return busyBetween(since, now, cores);
  try {
    const runnable = Number.parseInt(readFileSync('/proc/loadavg', 'latin1').split(' ')[3]!, 10);
    if (Number.isInteger(runnable)) return Math.max(0, runnable - 1);
  } catch {
    // Not Linux: the load average is what there is.
  }
  return loadavg()[0]!;
}
