import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A study on disk for the tests that run `harness ablate` end to end against a served arm (HTTP, MCP, a
 * credentials check): a small memory-format eval set in `<dir>/es/` and a config that reads it. Every such test
 * writes the same eval-set files and the same config head; only the documents, the queries and the arms differ.
 */

/** Writes `<dir>/es/corpus.jsonl` and `<dir>/es/queries.jsonl`, one JSON object a line: the eval set of {@link writeStudy}. */
export function writeMemoryEvalSet(dir: string, corpus: readonly object[], queries: readonly object[]): void {
  mkdirSync(join(dir, 'es'));
  writeFileSync(join(dir, 'es', 'corpus.jsonl'), `${corpus.map((d) => JSON.stringify(d)).join('\n')}\n`);
  writeFileSync(join(dir, 'es', 'queries.jsonl'), `${queries.map((q) => JSON.stringify(q)).join('\n')}\n`);
}

/**
 * Writes `<dir>/<file>`: a config `name` over the memory eval set `es`, nDCG@10 at top 10, output in `out/` and
 * cache in `cache/`, then `rest` (the `arms:` and what else the test sets), as YAML lines. Returns its path.
 */
export function writeStudy(dir: string, file: string, name: string, rest: string): string {
  const path = join(dir, file);
  writeFileSync(path, `name: ${name}\nevalset: { format: memory, path: es }\nmeasures: [nDCG@10]\ntopK: 10\noutput: out\ncache: cache\n${rest}`);
  return path;
}
