import type { EvalSet, Run } from '../../evalset/types.js';
import { ContentStore } from '../cache/index.js';
import { measureNamed } from '../compare/measures.js';
import type { ResolvedConfig } from '../config/load.js';
import type { Logger } from '../log.js';
import { type ExecutedPlan, runPlan } from '../execution/run-plan.js';
import type { Decision, ReportInput } from '../decision/types.js';
import { buildReportData, writeReportData } from '../report/index.js';
import { readHumanLabels } from '../evidence/labels.js';
import { type Answering, prepareAnswering, runAnswerStage } from './answer.js';
import {
  type AnsweredStudy,
  answerFiles,
  answerLevelFor,
  answerManifest,
  checkAnswerLabels,
  keptEvalSet,
  readStudyAnswerLabels,
  scoreAnswers,
} from './answer-report.js';
import { type LoadedStudy, loadStudy } from './load.js';
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
  /** Every LLM stage's calls go through the provider's batch API (`--batch`), whatever its block says. */
  readonly batch?: boolean;
}

/** Milliseconds since `t`. */
const since = (t: number) => performance.now() - t;

/** The answer stage of a study with answer measures: its outcomes scored, and the study over the questions kept. */
interface AnswerPhase {
  readonly answering: Answering;
  readonly answered: AnsweredStudy;
  readonly study: LoadedStudy;
}

/**
 * Answers and grades every question with every answered system (harness/answer), then restricts the study to
 * the questions every system has a usable outcome for. Undefined for a study without answer measures.
 */
async function answerPhase(
  answering: Answering | undefined,
  study: LoadedStudy,
  executed: ExecutedPlan,
  log: AblateContext['log'],
): Promise<AnswerPhase | undefined> {
  if (answering === undefined) return undefined;
  const answered = scoreAnswers(answering, await runAnswerStage(answering, executed, study.es, log));
  return { answering, answered, study: { ...study, es: keptEvalSet(study.es, answered) } };
}

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
  const answerLabels = await readStudyAnswerLabels(cfg, study.es);
  const loadMs = since(t0);
  const store = new ContentStore(cfg.cache, { log: ctx.log });
  await store.sweepOrphans();
  // Readers, the judge's prompts and answers files are built and read before any system runs.
  const answering = await prepareAnswering(cfg, study.es, ctx.env, store, ctx.log, { batch: ctx.batch === true });
  const t1 = performance.now();
  const refresh = ctx.refresh === undefined ? {} : { refresh: ctx.refresh };
  const executed = await runPlan(cfg, study.scopes, { store, log: ctx.log, env: ctx.env, jobs: ctx.jobs ?? 'auto', ...refresh });
  const executeMs = since(t1);
  const ta = performance.now();
  const answers = await answerPhase(answering, study, executed, ctx.log);
  const answerMs = since(ta);
  if (answers && answerLabels) checkAnswerLabels(answerLabels, answers.answered);
  const scoredStudy = answers?.study ?? study;
  const t2 = performance.now();
  const scored = scoreAblation(cfg, scoredStudy, executed, labels, answers?.answered.perQuery, answerLabels);
  const level = answers === undefined ? undefined : answerLevelFor(cfg, answers.answering, answers.answered);
  const input = reportInputOf(cfg, scoredStudy, executed, scored, ctx.command, level);
  const evaluateMs = since(t2);
  const t3 = performance.now();
  const data = buildReportData(
    input,
    input.measures.map((m) => measureNamed(cfg.parsedMeasures, m)),
  );
  const statisticsMs = since(t3);
  const t4 = performance.now();
  const dir = reportDirOf(cfg);
  const files = runFiles(scored.runs, scoredStudy.es);
  if (answers) for (const [name, text] of answerFiles(answers.answered)) files.set(name, text);
  const systems = systemSummaries(executed, study.sensitiveDocuments);
  const answer = answers === undefined ? undefined : answerManifest(answers.answering, answers.answered);
  const parts = { dir, command: ctx.command, study: scoredStudy, systems, tuned: scored.tuned, store, startedAt, ...(answer === undefined ? {} : { answer }) };
  await writeReportData(dir, data, () => {
    const timings: PhaseTimings = {
      jobs: executed.jobs,
      loadMs,
      executeMs,
      ...spentTimes(executed),
      ...(answers === undefined ? {} : { answerMs }),
      evaluateMs,
      statisticsMs,
      reportMs: since(t4),
      totalMs: since(t0),
    };
    files.set('manifest.json', manifestOf(cfg, parts, timings, new Date().toISOString()));
    return files;
  });
  const { runs, means, tuned } = scored;
  return { reportDir: dir, evalSet: scoredStudy.es, runs, means, systems, tuned, input, ...(data.decision ? { decision: data.decision } : {}) };
}
