/**
 * Ablation benchmark: `harness ablate --config configs/rrf-vs-cc.yaml` (the bundled alex-memory eval set, three
 * lexical arms, 41 systems, 20,000-permutation comparisons) through the built CLI at `--jobs` 1, 2, 4, … up to
 * the cores, the cores themselves, and `auto`, each run with a fresh cache and output folder so every run
 * indexes, searches, fuses, evaluates and tests from scratch.
 *
 * Rounds are paired: each round runs every setting once, the order reversed every other round, and the
 * speed-up of a setting is the median over rounds of `--jobs 1`'s time in that round over its own. Wall and
 * CPU time (user + system) and peak RSS come from GNU `/usr/bin/time -v` around the child (wall only, from
 * this process, when it is absent). Every run's report.json must equal the `--jobs 1` run's once timings are
 * dropped, and every written run file must be byte-identical; else the bench fails.
 *
 * Run: `npm run bench -- ablate`; HARNESS_BENCH_ABLATE_ROUNDS (default 2) sets the rounds.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const CONFIG = 'configs/rrf-vs-cc.yaml';
const TIME = '/usr/bin/time';

interface Measured {
  readonly wallS: number;
  readonly cpuS: number | undefined;
  readonly peakMB: number | undefined;
  /** report.json without timings, and every run file, for the identity check. */
  readonly report: string;
  readonly runs: ReadonlyMap<string, string>;
}

/** `--jobs` settings: powers of two below the cores, the cores, then auto. */
function settings(cores: number): string[] {
  const out: string[] = [];
  for (let n = 1; n < cores; n *= 2) out.push(String(n));
  out.push(String(cores), 'auto');
  return out;
}

/** Timings are the only fields allowed to differ between settings: keys ending in `Ms` or `MsP<n>`. */
function withoutTimings(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTimings);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!/Ms(P\d+)?$/.test(k)) out[k] = withoutTimings(v);
  return out;
}

/** `/usr/bin/time -v`'s field, as a number, or undefined when it did not print it. */
function timeField(text: string, label: string): number | undefined {
  const line = text.split('\n').find((l) => l.trim().startsWith(label));
  const x = line === undefined ? Number.NaN : Number(line.slice(line.lastIndexOf(':') + 1).trim());
  return Number.isFinite(x) ? x : undefined;
}

/** One `harness ablate` run at `jobs` with a fresh cache and output folder, removed afterwards. */
function runOnce(root: string, bin: string, jobs: string, useTime: boolean): Measured {
  const folder = mkdtempSync(join(tmpdir(), 'harness-bench-ablate-'));
  try {
    const cli = [bin, 'ablate', '--config', CONFIG, '--jobs', jobs, '--cache', join(folder, 'cache'), '--output', join(folder, 'out')];
    const timeFile = join(folder, 'time.txt');
    const [cmd, args] = useTime ? [TIME, ['-v', '-o', timeFile, process.execPath, ...cli]] : [process.execPath, cli];
    const t = process.hrtime.bigint();
    const run = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 });
    const wallS = Number(process.hrtime.bigint() - t) / 1e9;
    if (run.status !== 0)
      throw new Error(`bench: harness ablate --jobs ${jobs} failed (${run.status}): ${run.stderr.trim().split('\n').slice(-3).join(' | ')}`);
    const time = useTime ? readFileSync(timeFile, 'utf8') : '';
    const user = timeField(time, 'User time (seconds)');
    const sys = timeField(time, 'System time (seconds)');
    const rssKB = timeField(time, 'Maximum resident set size (kbytes)');
    const [report] = readdirSync(join(folder, 'out'));
    if (report === undefined) throw new Error(`bench: harness ablate --jobs ${jobs} wrote no report folder`);
    const dir = join(folder, 'out', report);
    const json = JSON.stringify(withoutTimings(JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8'))));
    const runs = new Map(readdirSync(join(dir, 'runs')).map((f) => [f, readFileSync(join(dir, 'runs', f), 'utf8')] as const));
    return {
      wallS,
      cpuS: user === undefined || sys === undefined ? undefined : user + sys,
      peakMB: rssKB === undefined ? undefined : rssKB / 1024,
      report: json,
      runs,
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** Whether `b` reproduced `a`: the timing-free report and every run file, byte for byte. */
function sameOutputs(a: Measured, b: Measured): boolean {
  if (a.report !== b.report || a.runs.size !== b.runs.size) return false;
  for (const [name, text] of a.runs) if (b.runs.get(name) !== text) return false;
  return true;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

const fmt = (x: number | undefined, digits: number): string => (x === undefined ? 'n/a' : x.toFixed(digits));

/** One line per setting: medians over rounds, and the paired speed-ups against `--jobs 1`. */
function curveLines(all: ReadonlyMap<string, Measured[]>): string[] {
  const ones = all.get('1') as Measured[];
  const lines: string[] = [];
  for (const [jobs, ms] of all) {
    const wallUp = median(ms.map((m, r) => (ones[r] as Measured).wallS / m.wallS));
    const cpus = ms.map((m) => m.cpuS).filter((x): x is number => x !== undefined);
    const peaks = ms.map((m) => m.peakMB).filter((x): x is number => x !== undefined);
    lines.push(
      `--jobs ${jobs.padEnd(4)}: wall ${median(ms.map((m) => m.wallS)).toFixed(2)} s, CPU ${cpus.length > 0 ? median(cpus).toFixed(2) : 'n/a'} s, peak RSS ${fmt(peaks.length > 0 ? Math.max(...peaks) : undefined, 0)} MB; speed-up against --jobs 1 (paired median of ${ms.length}): ${wallUp.toFixed(2)}x wall`,
    );
  }
  return lines;
}

export async function main(): Promise<void> {
  const out = (line: string): void => void process.stdout.write(`${line}\n`);
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const bin = fileURLToPath(new URL('../harness/cli/bin.js', import.meta.url));
  const cores = availableParallelism();
  if (!existsSync(join(root, CONFIG)) || !existsSync(bin)) {
    out(`goal 30.8 (ablate --jobs scaling): not measured (${CONFIG} or the built CLI ${bin} is absent): MISSED`);
    return;
  }
  const rounds = Math.max(1, Number(process.env.HARNESS_BENCH_ABLATE_ROUNDS ?? 2) || 2);
  const useTime = existsSync(TIME);
  const list = settings(cores);
  const [loadStart] = loadavg();
  out(`${CONFIG} (bundled alex-memory eval set, offline); cores ${cores}; --jobs ${list.join(', ')}; ${rounds} paired round(s), fresh cache each run`);
  if (!useTime) out(`${TIME} is absent: wall time only, no CPU time or peak RSS`);
  const all = new Map<string, Measured[]>(list.map((j) => [j, []]));
  for (let r = 0; r < rounds; r++) {
    for (const jobs of r % 2 === 0 ? list : [...list].reverse()) (all.get(jobs) as Measured[]).push(runOnce(root, bin, jobs, useTime));
  }
  const reference = (all.get('1') as Measured[])[0] as Measured;
  const differ = [...all].filter(([, ms]) => !ms.every((m) => sameOutputs(reference, m))).map(([j]) => j);
  for (const line of curveLines(all)) out(line);
  out(
    `outputs: report.json (timings aside) and every run file ${differ.length === 0 ? 'IDENTICAL across every --jobs setting and round' : `DIFFERENT at --jobs ${differ.join(', ')}`}`,
  );
  if (differ.length > 0) throw new Error(`bench: harness ablate gives other outputs at --jobs ${differ.join(', ')} than at --jobs 1`);
  const auto = median((all.get('auto') as Measured[]).map((m, r) => ((all.get('1') as Measured[])[r] as Measured).wallS / m.wallS));
  const [loadEnd] = loadavg();
  out(
    `--jobs auto: ${auto.toFixed(2)}x against --jobs 1 (paired wall); load average ${loadStart?.toFixed(2)} at the start and ${loadEnd?.toFixed(2)} at the end`,
  );
  out(`goal 30.8 (ablate --jobs scaling): printed for 1..${cores} cores: MET`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
