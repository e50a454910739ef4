/**
 * LongMemEval in bounded memory (docs/adr/0042-streamed-json-datasets.md), in one run:
 * - generates two Synthetic LongMemEval files (LongMemEval-M's schema, seeded) under data/bench/longmemeval/
 *   (gitignored): the reference size (default 100 MB, which the old whole-file read can still load) and the
 *   bound size (default 600 MB, past V8's 512 MiB string cap);
 * - loads each in a fresh Node process (`bench/longmemeval-load.ts`, `--max-old-space-size=4096` so the heap
 *   limit is not what is measured) with the streamed read and with the old whole-file read, and prints time and
 *   peak RSS (`process.resourceUsage().maxRSS`), the ratios of the two at the reference size, and at the bound
 *   size the streamed read's peak against the 1.5 GB bound: MET or MISSED;
 * - checks every successful load's counts (questions, haystack sessions, turns, `_abs` questions, documents)
 *   against what the generator wrote; a difference fails the bench (exit 1);
 * - deletes the generated files.
 *
 * Sizes: `HARNESS_BENCH_LME_MB` (default 600), `HARNESS_BENCH_LME_REF_MB` (default 100; 0 skips the reference),
 * seed `HARNESS_BENCH_LME_SEED` (default 20261126). Run: `npm run bench -- longmemeval`.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type SyntheticLongMemEvalCounts, writeSyntheticLongMemEval } from '../evalset/adapters/longmemeval-synthetic.js';
import { projectRoot } from '../harness/util/project.js';
import type { LoadOutcome } from './longmemeval-load.js';

const BOUND_BYTES = 1.5e9;
const MB = 1e6;

function envNumber(name: string, fallback: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got ${JSON.stringify(v)}`);
  return n;
}

function load(mode: 'stream' | 'whole', file: string): LoadOutcome {
  const script = fileURLToPath(new URL('./longmemeval-load.js', import.meta.url));
  const r = spawnSync(process.execPath, ['--max-old-space-size=4096', script, mode, file], { encoding: 'utf8', maxBuffer: 1 << 20 });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  if (r.status !== 0 || line === '') return { ok: false, ms: 0, maxRss: 0, error: `exit ${r.status ?? r.signal}: ${r.stderr.trim().slice(-300)}` };
  return JSON.parse(line) as LoadOutcome;
}

/** The counts a load saw that differ from what was written, as `name: saw N, wrote M`. */
function countProblems(o: LoadOutcome, wrote: SyntheticLongMemEvalCounts): string[] {
  const pairs: [string, number | undefined, number][] = [
    ['questions', o.questions, wrote.questions],
    ['haystack sessions', o.sessions, wrote.haystackSessions],
    ['turns', o.turns, wrote.turns],
    ['_abs questions', o.abstention, wrote.abstention],
    ['documents (distinct sessions)', o.documents, wrote.distinctSessionsKept],
  ];
  return pairs.filter(([, saw, want]) => saw !== want).map(([name, saw, want]) => `${name}: saw ${saw}, wrote ${want}`);
}

const fmt = (o: LoadOutcome) =>
  o.ok ? `${(o.ms / 1000).toFixed(1)} s, peak RSS ${(o.maxRss / MB).toFixed(0)} MB` : `FAILED after ${(o.ms / 1000).toFixed(1)} s (${o.error})`;

/** Generates one file, loads it both ways, prints and checks; returns the problems found. */
async function measure(dir: string, mb: number, seed: number, isBound: boolean): Promise<string[]> {
  const file = join(dir, `longmemeval_m_synthetic_${mb}mb.json`);
  const t0 = performance.now();
  const wrote = await writeSyntheticLongMemEval(file, { bytes: mb * MB, seed, sessionsPerQuestion: 500 });
  process.stdout.write(
    `${mb} MB file: ${(wrote.bytes / MB).toFixed(1)} MB, ${wrote.questions} questions (${wrote.abstention} _abs), ` +
      `${wrote.haystackSessions.toLocaleString('en-US')} haystack sessions, ${wrote.turns.toLocaleString('en-US')} turns; ` +
      `generated in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
  );
  const problems: string[] = [];
  try {
    const stream = load('stream', file);
    process.stdout.write(`  streamed read:   ${fmt(stream)}\n`);
    const whole = load('whole', file);
    process.stdout.write(`  whole-file read: ${fmt(whole)}\n`);
    for (const [name, o] of [['streamed', stream] as const, ['whole-file', whole] as const]) {
      if (o.ok) problems.push(...countProblems(o, wrote).map((p) => `${mb} MB ${name}: ${p}`));
    }
    if (!stream.ok) problems.push(`${mb} MB streamed read failed: ${stream.error}`);
    if (stream.ok && whole.ok) {
      process.stdout.write(`  whole-file / streamed: time ${(whole.ms / stream.ms).toFixed(2)}x, peak RSS ${(whole.maxRss / stream.maxRss).toFixed(2)}x\n`);
    }
    if (stream.ok) process.stdout.write(`  counts checked against the generator: ${problems.length === 0 ? 'equal' : 'DIFFERENT'}\n`);
    if (isBound && stream.ok) {
      const met = stream.maxRss < BOUND_BYTES;
      process.stdout.write(`  bound: streamed peak RSS ${(stream.maxRss / MB).toFixed(0)} MB against 1,500 MB: ${met ? 'MET' : 'MISSED'}\n`);
      if (!met) problems.push(`${mb} MB streamed peak RSS ${(stream.maxRss / MB).toFixed(0)} MB is over the 1.5 GB bound`);
    }
  } finally {
    rmSync(file, { force: true });
  }
  return problems;
}

export async function main(): Promise<void> {
  const mb = envNumber('HARNESS_BENCH_LME_MB', 600);
  const refMb = envNumber('HARNESS_BENCH_LME_REF_MB', 100);
  const seed = envNumber('HARNESS_BENCH_LME_SEED', 20261126);
  const dir = join(projectRoot(), 'data', 'bench', 'longmemeval');
  mkdirSync(dir, { recursive: true });
  process.stdout.write(
    `machine: ${cpus().length} cores, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} at the start\n`,
  );
  const problems: string[] = [];
  try {
    if (refMb > 0) problems.push(...(await measure(dir, refMb, seed, false)));
    problems.push(...(await measure(dir, mb, seed, true)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(
    `machine: load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} at the end\n`,
  );
  if (problems.length > 0) {
    process.stdout.write(`PROBLEMS:\n${problems.map((p) => `  ${p}`).join('\n')}\n`);
    process.exitCode = 1;
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main();
