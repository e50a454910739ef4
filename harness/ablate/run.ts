import type { EvalSet, Run } from '../../evalset/types.js';
import { ContentStore } from '../cache/index.js';
import type { ResolvedConfig } from '../config/load.js';
import type { Logger } from '../log.js';
import { runPlan } from '../execution/run-plan.js';
import type { Decision, ReportInput } from '../decision/types.js';
import { buildReportData, writeReportData } from '../report/index.js';
import { readHumanLabels } from '../evidence/labels.js';
import { loadStudy } from './load.js';
import { manifestOf, type PhaseTimings, spentTimes, type SystemSummary, systemSummaries } from './manifest.js';
import { reportInputOf } from './report-input.js';
import { scoreAblation } from './score.js';
import type { TunedSystem } from './tune.js';
import { reportDirOf, runFiles } from './write.js';

export { formatVerify, verify, type VerifyLine, type VerifyStatus } from './verify.js';
export { reportDirOf } from './write.js';
export type { PhaseTimings, SystemSummary } from './manifest.js';

/** What an ablation returns to its caller: the report folder and the values it was made from. */
export interface AblateResult {
  readonly reportDir: string;
  readonly evalSet: EvalSet;
  readonly runs: ReadonlyMap<string, Run>;
  /** runId -> measure -> mean over all eval-set queries (missing queries count 0); tuned systems included. */
  readonly means: ReadonlyMap<string, ReadonlyMap<string, number>>;
  readonly systems: readonly SystemSummary[];
  readonly tuned: readonly TunedSystem[];
  readonly input: ReportInput;
  /** The verdict of the gate, with its qualifiers and exit status, as report.json records it. */
  readonly decision?: Decision;
}

/** What the runner needs from its caller: where to log, the environment arms may read, the regenerating command. */
export interface AblateContext {
  readonly log: Logger;
  readonly env: NodeJS.ProcessEnv;
  readonly command: string;
  /** System ids to recompute instead of serving from the run cache (`--refresh`); everything downstream follows. */
  readonly refresh?: readonly string[];
  /** Worker threads for systems and scopes (`--jobs`); 1 runs serially; default `auto`. */
  readonly jobs?: number | 'auto';
}

/** Milliseconds since `t`. */
const since = (t: number) => performance.now() - t;

/**
 * `harness ablate`, as a pipeline of named stages: the config (resolved by the caller) → LoadedStudy →
 * ExecutedPlan (runPlan: probed, from the run cache where it can) → ScoredAblation → ReportInput and manifest
 * → the report folder, written at once (finished runs are safe in the cache meanwhile): a reader sees the old
 * folder or the new one, never a mix.
 */
export async function ablate(given: ResolvedConfig, ctx: AblateContext): Promise<AblateResult> {
  const startedAt = new Date().toISOString();
  const t0 = performance.now();
  const study = await loadStudy(given, ctx.log);
  // The report and manifest record the permutation count actually drawn (raised at load when too few).
  const cfg = study.compare === given.compare ? given : { ...given, compare: study.compare };
  // Read before any run, so a bad labels file fails in seconds, not after the systems ran.
  const labels = cfg.humanLabels && cfg.judgments ? await readHumanLabels(cfg.humanLabels.path, cfg.judgments) : undefined;
  const loadMs = since(t0);
  const store = new ContentStore(cfg.cache, { log: ctx.log });
  await store.sweepOrphans();
  const t1 = performance.now();
  const refresh = ctx.refresh === undefined ? {} : { refresh: ctx.refresh };
  const executed = await runPlan(cfg, study.scopes, { store, log: ctx.log, env: ctx.env, jobs: ctx.jobs ?? 'auto', ...refresh });
  const executeMs = since(t1);
  const t2 = performance.now();
  const scored = scoreAblation(cfg, study, executed, labels);
  const input = reportInputOf(cfg, study, executed, scored, ctx.command);
  const evaluateMs = since(t2);
  const t3 = performance.now();
  const data = buildReportData(input);
  const statisticsMs = since(t3);
  const t4 = performance.now();
  const dir = reportDirOf(cfg);
  const files = runFiles(scored.runs, study.es);
  const systems = systemSummaries(executed, study.sensitiveDocuments);
  const parts = { dir, command: ctx.command, study, systems, tuned: scored.tuned, store, startedAt };
  await writeReportData(dir, data, () => {
    const timings: PhaseTimings = {
      jobs: executed.jobs,
      loadMs,
      executeMs,
      ...spentTimes(executed),
      evaluateMs,
      statisticsMs,
      reportMs: since(t4),
      totalMs: since(t0),
    };
    files.set('manifest.json', manifestOf(cfg, parts, timings, new Date().toISOString()));
    return files;
  });
  const { runs, means, tuned } = scored;
  return { reportDir: dir, evalSet: study.es, runs, means, systems, tuned, input, ...(data.decision ? { decision: data.decision } : {}) };
}
