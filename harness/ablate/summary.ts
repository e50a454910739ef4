import { relative } from 'node:path';
import type { ResolvedConfig } from '../config/load.js';
import { verdictSentence } from '../decision/verdict.js';
import type { AblateResult } from './run.js';

/** `, N answer-only system(s)` when the config has systems that answer without a run (full-context, answers-file). */
function answerOnly(cfg: ResolvedConfig): string {
  const n = cfg.answer?.answerOnly.length ?? 0;
  return n === 0 ? '' : `, and ${n} answer-only system(s)`;
}

/** What `harness ablate` prints when done: the means of every run outside a grid, tuned picks, cache use, the gate, where the report is. */
export function ablationSummary(cfg: ResolvedConfig, result: AblateResult, cwd: string): string {
  const gridMembers = new Set([...cfg.plan.groups.values()].flat());
  const shown = cfg.runIds.filter((id) => !gridMembers.has(id));
  const lines = [
    `${cfg.name}: ${result.evalSet.queries.length} queries, ${result.systems.length} system(s)${gridMembers.size > 0 ? `, ${gridMembers.size} of them in grids (every one is in the report)` : ''}${answerOnly(cfg)}`,
  ];
  const width = Math.max(...shown.map((id) => id.length), 4);
  lines.push(`  ${'run'.padEnd(width)}  ${cfg.measures.map((m) => m.padStart(10)).join(' ')}`);
  for (const id of shown) {
    const m = result.means.get(id) as ReadonlyMap<string, number>;
    lines.push(`  ${id.padEnd(width)}  ${cfg.measures.map((name) => (m.get(name) as number).toFixed(4).padStart(10)).join(' ')}`);
  }
  for (const t of result.tuned) {
    lines.push(
      `  ${t.id}: ${t.choices.map((c) => `${c.fold} -> ${c.member}`).join(', ')}; oracle on test ${t.oracle.member} (${t.measure} ${t.oracle.mean.toFixed(4)})`,
    );
  }
  const cache = result.systems.reduce((acc, a) => ({ hits: acc.hits + a.cache.hits, misses: acc.misses + a.cache.misses }), { hits: 0, misses: 0 });
  lines.push(`  system runs from cache: ${cache.hits} hit(s), ${cache.misses} computed`);
  if (result.decision) lines.push(`gate: ${verdictSentence(result.decision)}`);
  lines.push(`report: ${relative(cwd, result.reportDir) || result.reportDir}/report.md`);
  return `${lines.join('\n')}\n`;
}
