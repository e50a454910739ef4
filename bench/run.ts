/**
 * `npm run bench`: every benchmark in one run. Each prints ratios against a reference measured in the same
 * run (or states plainly when the reference is absent). Benchmarks are never timed tests.
 */
import { availableParallelism, loadavg } from 'node:os';
import { runIsolated } from './isolate.js';
import { collectGoals, summariseGoals } from './goals.js';

const benches: readonly { name: string; file: string }[] = [
  { name: 'eval (harness eval vs trec_eval)', file: 'eval.js' },
  { name: 'lexical arms (bm25 vs sqlite-fts5)', file: 'lexical.js' },
  { name: 'statistics (randomization + bootstrap family)', file: 'stats.js' },
  { name: 'ablate (rrf-vs-cc study, --jobs 1..cores)', file: 'ablate.js' },
  { name: 'fusion (200-point grid vs reading the runs)', file: 'fusion.js' },
  { name: 'dense (embedding passages/s, exact top-100 vs the memory-bandwidth floor)', file: 'dense.js' },
  { name: 'graph (PPR per query vs a plain loop and scipy.sparse)', file: 'graph.js' },
  { name: 'longmemeval (600 MB LongMemEval-M-schema file: streamed read, peak RSS vs 1.5 GB)', file: 'longmemeval.js' },
  { name: 'llm batch judging (100,000-pair pool through OpenAI batches at the default batch settings: peak RSS vs 1 GB)', file: 'llm-batch.js' },
];

const only = process.argv.slice(2);
const goals = collectGoals(process.stdout);
const started = performance.now();
const loadStart = loadavg()[0]!;
const failed: string[] = [];
for (const b of benches) {
  if (only.length > 0 && !only.some((o) => b.name.startsWith(o))) continue;
  process.stdout.write(`\n=== ${b.name} ===\n`);
  const code = await runIsolated(new URL(b.file, import.meta.url), process.stdout);
  if (code !== 0) {
    process.stdout.write(`=== ${b.file} exited with ${code}: its goals are not printed ===\n`);
    failed.push(b.file);
  }
}
const minutes = (performance.now() - started) / 60_000;
process.stdout.write(
  `\n=== goals of issue 30 (${availableParallelism()} cores; load average ${loadStart.toFixed(2)} at the start, ${loadavg()[0]!.toFixed(2)} at the end; ${minutes.toFixed(1)} min) ===\n`,
);
process.stdout.write(summariseGoals(goals.lines(), only.length === 0));
if (failed.length > 0) {
  process.stderr.write(`bench: ${failed.join(', ')} failed (see above)\n`);
  process.exitCode = 1;
}
