import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { evalSetFingerprint } from '../../evalset/fingerprint.js';
import type { Document, EvalSet, Run } from '../../evalset/types.js';
import type { ReturnedText } from '../systems/types.js';
import { runPlan, type RunPlanOptions } from '../execution/run-plan.js';
import { scopesOf } from '../execution/scopes.js';
import { ContentStore, recoverFolder } from '../cache/index.js';
import type { ResolvedConfig } from '../config/load.js';
import { ConfigError, HarnessError, UsageError } from '../errors.js';
import type { Logger } from '../log.js';
import type { JudgeConfig } from '../config/judge.js';
import { judgePool, type JudgeOutcome } from './judge.js';
import { chatClient } from '../llm/client.js';
import { dollarsOf } from '../llm/price.js';
import { publicBaseURL } from '../llm/openai.js';
import type { ChatEndpoint, ChatFn } from '../llm/types.js';
import { chatEndpointOf } from '../config/llm-endpoint.js';
import { depthPool, type Pool } from './pool.js';
import { loadPrompt } from './prompt.js';
import { BUILD_MANIFEST, type JudgeIdentity, type JudgmentsManifest, qrelsVersion, readJudgments, recordedIdentity, writeJudgments } from './store.js';

/** What the judge pools from an ablation: every system's run, and the texts of the Returned items among them. */
export interface AblationPool {
  readonly runs: Map<string, Run>;
  readonly returned: ReadonlyMap<string, ReturnedText>;
}

/**
 * The runs of every system of an ablation, through the same entry as `harness ablate` (probed first, so a
 * changed server's runs are never served from the cache; from the run cache when `harness ablate` ran before).
 */
export async function ablationRuns(
  cfg: ResolvedConfig,
  es: EvalSet,
  log: Logger,
  env: NodeJS.ProcessEnv,
  opts: Pick<RunPlanOptions, 'jobs' | 'refresh'> = {},
): Promise<AblationPool> {
  const store = new ContentStore(cfg.cache, { log });
  const { outcomes } = await runPlan(cfg, scopesOf(es), { store, log, env, ...opts });
  const returned = new Map<string, ReturnedText>();
  for (const o of outcomes.values()) for (const [id, t] of Object.entries(o.returned ?? {})) returned.set(id, t);
  return { runs: new Map([...outcomes].map(([id, o]) => [id, o.run] as const)), returned };
}

/**
 * The eval set the judge reads: `es` with a Document for each pooled Returned item (its text as the system
 * returned it, Sensitive where its Scope was), so the judge grades a rewritten memory as it grades a Document.
 */
function withReturnedItems(es: EvalSet, pool: Pool, returned: ReadonlyMap<string, ReturnedText> | undefined): EvalSet {
  if (returned === undefined || returned.size === 0) return es;
  const added = new Map<string, Document>();
  for (const { docId } of pool.pairs) {
    const t = returned.get(docId);
    if (t !== undefined && !added.has(docId)) added.set(docId, { id: docId, text: t.text, ...(t.sensitive ? { sensitive: true } : {}) });
  }
  return added.size === 0 ? es : { ...es, documents: [...es.documents, ...added.values()] };
}

export interface JudgeJob {
  readonly es: EvalSet;
  readonly evalset: JudgmentsManifest['evalset'];
  /** The eval set's folder, where a build manifest may name the generator model. */
  readonly evalsetDir?: string;
  readonly runs: ReadonlyMap<string, Run>;
  /** Texts of the Returned items the runs hold (an ablation's text-mapping arms); absent for run files. */
  readonly returned?: ReadonlyMap<string, ReturnedText>;
  readonly judge: JudgeConfig;
  readonly out: string;
  readonly cache: string;
  readonly all: boolean;
  /** Names the source of the judge settings in config errors. */
  readonly source: string;
}

export interface JudgeSummary {
  readonly pool: Pool;
  readonly outcome: JudgeOutcome;
  readonly manifest: JudgmentsManifest;
}

/** The model that wrote the eval set's queries, when `harness evalset build` made it. */
async function generatorModel(dir: string | undefined): Promise<string | undefined> {
  if (dir === undefined) return undefined;
  const file = join(dir, BUILD_MANIFEST);
  if (!existsSync(file)) return undefined;
  const m = JSON.parse(await readFile(file, 'utf8')) as { generator?: { model?: string } };
  return m.generator?.model;
}

/** The judge, prompt and decoding a judgments folder belongs to (its qrels version is computed over it). */
export function judgeIdentity(j: JudgeConfig, prompt: ReturnType<typeof loadPrompt>): JudgeIdentity {
  return {
    model: j.model,
    prompt: { name: prompt.name, sha256: prompt.sha256 },
    decoding: { temperature: j.temperature, maxTokens: j.maxTokens },
    samples: j.samples,
    parseRetries: j.parseRetries,
  };
}

type JudgmentRecords = Awaited<ReturnType<typeof readJudgments>>['records'];

/** The folder's earlier judgments, when it holds some by the same judge; judgments of another judge are refused. */
async function previousJudgments(out: string, identity: JudgeIdentity): Promise<{ manifest?: JudgmentsManifest; records: JudgmentRecords }> {
  // A run killed between the folder's two renames left it aside as `.old`: put it back before reading, or its judgments would be lost.
  await recoverFolder(out);
  if (!existsSync(join(out, 'manifest.json'))) return { records: [] };
  const old = await readJudgments(out);
  const same = JSON.stringify(recordedIdentity(old.manifest.judge)) === JSON.stringify(identity);
  if (!same) {
    throw new UsageError(`${out} holds judgments by another judge, prompt or decoding (qrels version ${old.manifest.qrelsVersion})`, {
      hint: 'write these judgments to a new folder (--out, or judgments: in the config); judgments of different judges never mix',
    });
  }
  return { manifest: old.manifest, records: old.records };
}

/** The judge's endpoint: provider, server, limits, and the batch API's settings (its ledger under `cache`) when batched. */
export function judgeEndpoint(j: JudgeConfig, cache: string): ChatEndpoint {
  return chatEndpointOf(j, cache, { stage: 'judge' });
}

/** The chat function of the judge's endpoint: one by one under the rate limiter, or through the provider's batch API. */
export function judgeChat(j: JudgeConfig, env: NodeJS.ProcessEnv, source: string, log: Logger, cache: string): Promise<ChatFn> {
  return chatClient(judgeEndpoint(j, cache), env, source, { log, label: 'judge', who: 'judge' });
}

/** What the judgments folder records about this judging: judge, pool, eval set, counts over every record, tokens, cost. */
function judgmentsManifest(
  job: JudgeJob,
  identity: JudgeIdentity,
  pool: Pool,
  outcome: JudgeOutcome,
  records: JudgmentRecords,
  startedAt: string,
): JudgmentsManifest {
  const j = job.judge;
  return {
    judgmentsVersion: 1,
    qrelsVersion: qrelsVersion(records, identity),
    judge: { ...identity, provider: j.provider, baseURL: publicBaseURL(j.baseURL), local: j.local, batch: j.batch !== false },
    pool: { depth: j.depth, systems: pool.systems, pairs: pool.pairs.length, queries: pool.perQuery.size },
    evalset: job.evalset,
    counts: {
      ...outcome.counts,
      judged: records.filter((r) => r.status === 'judged').length,
      parseFailures: records.filter((r) => r.status === 'parse-failure').length,
      skippedSensitive: records.filter((r) => r.status === 'skipped-sensitive').length,
    },
    tokens: outcome.tokens,
    servedModels: outcome.servedModels,
    ...(j.price === undefined ? {} : { cost: dollarsOf(outcome.tokens, j.price) ?? 0 }),
    startedAt,
    finishedAt: new Date().toISOString(),
  };
}

/**
 * `harness judge`: pool the runs at the judge's depth, judge the pairs nobody graded, write the judgments
 * folder (records, judged qrels, provenance manifest). Pairs judged before by the same judge are kept and not
 * sent again; a folder judged by another judge or prompt is refused (write a new folder: versions never mix).
 */
export async function runJudge(job: JudgeJob, log: Logger, env: NodeJS.ProcessEnv): Promise<JudgeSummary> {
  const startedAt = new Date().toISOString();
  const j = job.judge;
  const generator = await generatorModel(job.evalsetDir);
  if (generator !== undefined && generator === j.model) {
    throw new ConfigError(job.source, [
      `judge.model: "${j.model}" also generated this eval set's queries (${BUILD_MANIFEST}); a model grading its own queries favours them: use another judge model`,
    ]);
  }
  const prompt = loadPrompt('judge', j.prompt);
  const identity = judgeIdentity(j, prompt);
  const previous = await previousJudgments(job.out, identity);
  const pool = depthPool(
    job.runs,
    j.depth,
    job.es.queries.map((q) => q.id),
  );
  log.info(`judge: pool of ${pool.pairs.length} pairs over ${pool.perQuery.size} queries from ${pool.systems.length} system(s) at depth ${j.depth}`);
  const chat = await judgeChat(j, env, job.source, log, job.cache);
  const store = new ContentStore(job.cache, { log });
  // Cache entries a killed run was writing are temp files of a dead process: remove them, as `harness ablate` does.
  await store.sweepOrphans();
  const outcome = await judgePool(pool, withReturnedItems(job.es, pool, job.returned), {
    identity,
    prompt,
    chat,
    local: j.local,
    concurrency: j.concurrency,
    store,
    log,
    all: job.all,
    previous: previous.records,
  });
  // Earlier records of pairs outside this pool stay: the folder only grows, and its version says over what.
  const inPool = new Set(outcome.records.map((r) => `${r.queryId}\t${r.docId}`));
  const records = [...previous.records.filter((r) => !inPool.has(`${r.queryId}\t${r.docId}`)), ...outcome.records];
  checkGraded(records, outcome.asked, job.out, log);
  const servedModels = [...new Set([...(previous.manifest?.servedModels ?? []), ...outcome.servedModels])].sort();
  const manifest = judgmentsManifest(job, identity, pool, { ...outcome, servedModels }, records, previous.manifest?.startedAt ?? startedAt);
  await writeJudgments(job.out, manifest, records);
  return { pool, outcome, manifest };
}

/**
 * Refuses judgments where more than half of the pairs the judge was asked about (this run's and those kept from
 * the folder; sensitive pairs not sent are left out) have no grade: exit 1, nothing written. Such qrels would
 * look usable while holding mostly holes, which every measure scores as not relevant. Fewer is a warning.
 */
function checkGraded(records: JudgmentRecords, asked: JudgeOutcome['asked'], out: string, log: Logger): void {
  const failed = records.filter((r) => r.status === 'parse-failure').length;
  const tried = failed + records.filter((r) => r.status === 'judged').length;
  if (failed === 0) return;
  const what = `${failed} of ${tried} pairs have no grade (no "##final score: 0-3" line in any reply; ${asked.noGrade} of the ${asked.pairs} asked this run)`;
  if (2 * failed > tried) {
    throw new HarnessError(`judge: ${what}, more than half: nothing written to ${out}`, {
      hint: 'check the model and the prompt against the server; grades that did parse are cached, so a rerun asks only the pairs without one',
    });
  }
  log.warn(`judge: ${what}; they are holes in the qrels and are asked again on the next run`);
}

/** The eval-set part of the provenance, with the path relative to the judgments folder. */
export function evalsetProvenance(es: EvalSet, format: string, path: string, out: string, split?: string): JudgmentsManifest['evalset'] {
  return { name: es.name, format, path: relative(out, path) || '.', fingerprint: evalSetFingerprint(es), ...(split === undefined ? {} : { split }) };
}

/** A human summary of a judging run, for stdout. */
export function formatJudgeSummary(s: JudgeSummary, out: string): string {
  const c = s.manifest.counts;
  const t = s.manifest.tokens;
  return [
    `pool: ${s.pool.pairs.length} pairs, ${s.pool.perQuery.size} queries, ${s.pool.systems.length} system(s), depth ${s.pool.depth}`,
    `  graded by gold: ${s.outcome.counts.gold}; judged: ${c.judged}; parse failures: ${c.parseFailures}; sensitive, not sent: ${c.skippedSensitive}`,
    `  requests sent: ${c.requests}; replies from cache: ${c.cachedReplies}; tokens: ${t.prompt} in, ${t.completion} out${s.manifest.cost === undefined ? '' : `; cost $${s.manifest.cost.toFixed(4)}`}`,
    `qrels version ${s.manifest.qrelsVersion}: ${out}`,
  ].join('\n');
}
