import { join } from 'node:path';
import { ContentStore } from '../cache/index.js';
import type { ResolvedConfig } from '../config/load.js';
import { runKey } from '../execution/scope-run.js';
import type { Logger } from '../log.js';
import { probePlan } from '../systems/probe.js';
import { loadStudy } from './load.js';
import { reportDirOf } from './write.js';
import { sensitiveSummary } from './sensitive.js';
import type { ResolvedAnswer } from '../config/answer-block.js';

/** The answer stage as the plan shows it: who reads and grades, and which systems are answered. */
function answerLine(a: ResolvedAnswer): string {
  const r = a.reader;
  const reader =
    r === undefined ? 'no reader' : `reader ${r.kind === 'chat' ? `chat ${r.model}` : 'extractive'} from the top ${r.topK} within ${r.budgetTokens} tokens`;
  const judge = a.judge === undefined ? 'no judge' : `judge ${a.judge.profile}/${a.judge.model} x${a.judge.samples}`;
  const only = a.answerOnly.map((s) => `${s.id} (${s.kind})`);
  return `  answer: ${a.measures.join(', ')}; ${reader}; ${judge}; answered: ${[...a.systems, ...only].join(', ')}`;
}

/** What `--dry-run` prints: the expanded plan, with the cache entries that already exist. Runs nothing. */
export async function plan(cfg: ResolvedConfig, log: Logger, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const { es, dev, scopes, sensitiveDocuments } = await loadStudy(cfg, log);
  const store = new ContentStore(cfg.cache, { log });
  const systemsPlan = await probePlan(cfg.plan, { cache: store, log, env, workDir: join(cfg.cache, 'work') });
  const strata = new Map<string, number>();
  for (const q of es.queries) strata.set(q.stratum, (strata.get(q.stratum) ?? 0) + 1);
  const byNode = new Map<string, number>();
  for (const s of cfg.plan.systems) byNode.set(s.node, (byNode.get(s.node) ?? 0) + 1);
  const lines = [
    `plan for ${cfg.name} (config ${cfg.configHash.slice(0, 8)})`,
    `  eval set: ${es.name} [${cfg.evalset.format}] ${es.documents.length} documents, ${es.queries.length} queries, ${scopes.length} scope(s)`,
    ...(dev ? [`  tuning split: ${cfg.tune?.split} (${dev.queries.length} queries)`] : []),
    `  strata: ${[...strata].map(([s, n]) => `${s}=${n}`).join(', ')}`,
    `  measures: ${cfg.measures.join(', ')} (relevance level ${cfg.relevanceLevel}, topK ${cfg.topK})`,
    `  systems: ${cfg.plan.systems.length} (${[...byNode].map(([n, c]) => `${c} ${n}`).join(', ')})${cfg.tune ? ` + ${cfg.plan.groups.size} tuned` : ''}`,
    ...(cfg.answer === undefined ? [] : [answerLine(cfg.answer)]),
  ];
  let cachedAll = 0;
  for (const s of systemsPlan.systems) {
    const cached = (await Promise.all(scopes.map((g) => store.has('run', runKey(s, g, cfg.topK))))).filter(Boolean).length;
    if (cached === scopes.length) cachedAll++;
    const from = s.inputs.length > 0 ? ` <- ${s.inputs.join(', ')}` : '';
    lines.push(
      `    ${s.id} [${s.node} ${s.kind}]${from} fingerprint ${s.fingerprintHash.slice(0, 12)}: ${cached}/${scopes.length} scope run(s) cached${cached === scopes.length ? ' (no work)' : ''}`,
    );
    const kept = sensitiveSummary(s.sensitive, s.bound.sendsTextOffMachine, sensitiveDocuments);
    if (kept) lines.push(`      ${kept.documents} sensitive document(s) ${kept.route === undefined ? 'left out' : `retrieved by ${kept.route}`}, never sent`);
  }
  for (const [group, members] of cfg.plan.groups) {
    lines.push(
      `    grid ${group}: ${members.length} systems${cfg.tune ? `, tuned as ${group}.tuned on ${cfg.tune.split ?? `${cfg.tune.folds} folds`} by ${cfg.tune.measure}` : ''}`,
    );
  }
  lines.push(`  cache: ${cachedAll}/${cfg.plan.systems.length} systems need no work`);
  const baseline = cfg.compare.baseline ?? cfg.runIds[0];
  lines.push(`  compare: ${cfg.compare.test}, baseline ${baseline}, correction ${cfg.compare.correction}`);
  if (cfg.gate) lines.push(`  gate: ${cfg.gate.candidate} vs ${cfg.gate.baseline ?? baseline} on ${cfg.gate.measure} (${cfg.gate.rule})`);
  lines.push(`  output: ${reportDirOf(cfg)}`, `  cache root: ${cfg.cache}`);
  return `${lines.join('\n')}\n`;
}
