import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { EvalSet } from '../../evalset/types.js';
import { ContentStore, recoverFolder } from '../cache/index.js';
import type { JudgeConfig } from '../config/judge.js';
import { UsageError } from '../errors.js';
import type { Logger } from '../log.js';
import { auditJudgments } from './audit.js';
import { loadPrompt } from './prompt.js';
import { judgeChat, judgeIdentity } from './run.js';
import { type JudgeAudit, readJudgments, writeJudgments } from './store.js';

/** What `harness judge --audit` needs: the eval set judged, the judgments folder, the judge settings. */
export interface AuditJob {
  readonly es: EvalSet;
  readonly out: string;
  readonly judge: JudgeConfig;
  readonly cache: string;
  /** Names the source of the judge settings in config errors. */
  readonly source: string;
}

/**
 * Audits the judgments in `job.out` and writes the result into its manifest's `audit` block (replacing an
 * earlier audit; records and qrels are rewritten unchanged). Probed replies are cached like any judge reply,
 * so a rerun sends nothing.
 */
export async function runAudit(job: AuditJob, log: Logger, env: NodeJS.ProcessEnv): Promise<JudgeAudit> {
  await recoverFolder(job.out);
  if (!existsSync(join(job.out, 'manifest.json')))
    throw new UsageError(`${job.out} holds no judgments to audit`, { hint: 'judge first: `harness judge --config C` (or --runs ... --out)' });
  const judgments = await readJudgments(job.out);
  const prompt = loadPrompt('judge', job.judge.prompt);
  const store = new ContentStore(job.cache, { log });
  await store.sweepOrphans();
  const audit = await auditJudgments({
    es: job.es,
    judgments,
    judge: job.judge,
    identity: judgeIdentity(job.judge, prompt),
    prompt,
    chat: await judgeChat(job.judge, env, job.source, log, job.cache),
    store,
    log,
  });
  await writeJudgments(job.out, { ...judgments.manifest, audit }, judgments.records);
  return audit;
}
