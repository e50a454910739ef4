import { join } from 'node:path';
import type { EvalSet, Run } from '../../evalset/types.js';
import { formatTrecQrels, formatTrecRun } from '../../evalset/trec.js';
import type { ResolvedConfig } from '../config/load.js';

/** The report folder of a config: `<output>/<name>-<first 8 of the config hash>`. */
export function reportDirOf(cfg: ResolvedConfig): string {
  return join(cfg.output, `${cfg.name}-${cfg.configHash.slice(0, 8)}`);
}

/**
 * The files beside the rendered report: every run in TREC form, with the qrels and strata the report scored
 * with, so any tool (and `harness compare`) can recompute it from files.
 */
export function runFiles(runs: ReadonlyMap<string, Run>, es: EvalSet): Map<string, string> {
  const files = new Map<string, string>();
  for (const [id, run] of runs) files.set(`runs/${id}.trec`, formatTrecRun(run, id));
  files.set('qrels.trec', formatTrecQrels(es.qrels));
  files.set('strata.tsv', es.queries.map((q) => `${q.id}\t${q.stratum}\n`).join(''));
  return files;
}
