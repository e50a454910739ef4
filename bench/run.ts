/**
 * `npm run bench`: every benchmark in one run. Each prints ratios against a reference measured in the same
 * run (or states plainly when the reference is absent). Benchmarks are never timed tests.
 */
import { availableParallelism, loadavg } from 'node:os';
import { collectGoals, summariseGoals } from './goals.js';

const benches: readonly { name: string; load: () => Promise<{ main: () => Promise<void> }> }[] = [
  { name: 'eval (harness eval vs trec_eval)', load: () => import('./eval.js') },
  { name: 'lexical arms (bm25 vs sqlite-fts5)', load: () => import('./lexical.js') },
  { name: 'statistics (randomization + bootstrap family)', load: () => import('./stats.js') },
  { name: 'ablate (rrf-vs-cc study, --jobs 1..cores)', load: () => import('./ablate.js') },
  { name: 'fusion (200-point grid vs reading the runs)', load: () => import('./fusion.js') },
  { name: 'dense (embedding passages/s, exact top-100 vs the memory-bandwidth floor)', load: () => import('./dense.js') },
  { name: 'graph (PPR per query vs a plain loop and scipy.sparse)', load: () => import('./graph.js') },
  { name: 'longmemeval (600 MB LongMemEval-M-schema file: streamed read, peak RSS vs 1.5 GB)', load: () => import('./longmemeval.js') },
];

const only = process.argv.slice(2);
const goals = collectGoals(process.stdout);
const started = performance.now();
const loadStart = loadavg()[0]!;
for (const b of benches) {
  if (only.length > 0 && !only.some((o) => b.name.startsWith(o))) continue;
  process.stdout.write(`\n=== ${b.name} ===\n`);
  await (await b.load()).main();
}
const minutes = (performance.now() - started) / 60_000;
process.stdout.write(
  `\n=== goals of issue 30 (${availableParallelism()} cores; load average ${loadStart.toFixed(2)} at the start, ${loadavg()[0]!.toFixed(2)} at the end; ${minutes.toFixed(1)} min) ===\n`,
);
process.stdout.write(summariseGoals(goals.lines(), only.length === 0));
