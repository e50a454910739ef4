import type { Document, EvalSet } from '../../evalset/types.js';
import { evalSetFormats } from '../../evalset/load.js';
import type { ContentStore } from '../cache/index.js';
import { measureNamed } from '../compare/measures.js';
import type { ResolvedConfig } from '../config/load.js';
import { type AnswerJudgeConfig, type AnswerOnlySystem, type ResolvedAnswer, splitMeasures } from '../config/answer-block.js';
import type { AnswerJudgeAuditLevel } from '../decision/answer-level.js';
import { keysOf } from '../config/problems.js';
import { ConfigError, HarnessError } from '../errors.js';
import type { ExecutedPlan } from '../execution/run-plan.js';
import { chatEndpointOf, keyEnvOf } from '../config/llm-endpoint.js';
import { chatClient } from '../llm/client.js';
import { publicBaseURL } from '../llm/openai.js';
import type { ChatEndpoint } from '../llm/types.js';
import type { Logger } from '../log.js';
import { type CachedGrader, type CachedReader, cachedGrader, cachedReader, type CacheCounts, uncachedReader } from '../answer/cache.js';
import { extractiveReader } from '../answer/extractive.js';
import { readAnswersFile } from '../answer/files.js';
import { judgeProfile } from '../answer/judges.js';
import { type AnswerRowMapping, mapAnswerRows } from '../answer/map-rows.js';
import { runAnswerProbes } from '../answer/probes.js';
import { answerQuestions, conversationIndexOf, evalSetProtocol, isAnswerOnly } from '../answer/questions.js';
import { chatReader } from '../answer/reader.js';
import { answerStage } from '../answer/stage.js';
import { type AnswerSource, fullHistory, topKContext } from '../answer/systems.js';
import type { AnswerProtocol, AnswerQuestion } from '../answer/types.js';

/**
 * The answer level inside `harness ablate` (docs/adr/0045-answer-level-evaluation.md): which queries a study
 * with answer measures scores, and everything the answer stage needs built before any system runs (readers,
 * the judge and its prompts, answers files mapped onto the questions), so a bad prompt file or answers file
 * fails in seconds rather than after every retrieval.
 */

/** The eval-set options that keep answer-only questions (no judgments), turned on when only answer measures are asked. */
const KEEP_ANSWER_ONLY = ['keepWithoutEvidence', 'includeAbstention'] as const;

/**
 * The eval-set options to load with: the config's, with the format's keep-answer-only options turned on when
 * the study asks only answer measures (then a question without evidence still has an answer to grade).
 */
export function answerEvalsetOptions(cfg: Pick<ResolvedConfig, 'answer' | 'measures' | 'parsedMeasures' | 'evalset'>): unknown {
  const options = cfg.evalset.options;
  if (cfg.answer === undefined || splitMeasures(cfg.measures.map((m) => measureNamed(cfg.parsedMeasures, m))).retrieval.length > 0) return options;
  const format = (evalSetFormats as Record<string, { options: Parameters<typeof keysOf>[0] }>)[cfg.evalset.format];
  const known = format === undefined ? [] : keysOf(format.options, []);
  const on = KEEP_ANSWER_ONLY.filter((k) => known.includes(k));
  return on.length === 0 ? options : { ...(options as Record<string, unknown>), ...Object.fromEntries(on.map((k) => [k, true] as const)) };
}

function count(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * The queries a study scores. Retrieval measures score queries with judgments (answer-only ones are left
 * out); answer measures score questions with a gold answer; a study with both scores the questions that have
 * both. Every query left out is counted in a note.
 */
export function studyQueries(cfg: Pick<ResolvedConfig, 'measures' | 'parsedMeasures'>, es: EvalSet): EvalSet {
  const { answer, retrieval } = splitMeasures(cfg.measures.map((m) => measureNamed(cfg.parsedMeasures, m)));
  const notes: string[] = [];
  let queries = es.queries;
  if (retrieval.length > 0) {
    const judged = queries.filter((q) => !isAnswerOnly(q));
    const why = answer.length > 0 ? `retrieval measures (${retrieval.join(', ')}) are asked too` : 'they serve answer measures, and this study asks none';
    if (judged.length < queries.length) notes.push(`${count(queries.length - judged.length, 'question', 'questions')} without judgments left out: ${why}`);
    queries = judged;
  }
  if (answer.length > 0) {
    const withGold = queries.filter((q) => q.answer !== undefined);
    if (withGold.length < queries.length)
      notes.push(
        `${count(queries.length - withGold.length, 'query', 'queries')} without a gold answer left out: answer measures (${answer.join(', ')}) grade answers`,
      );
    queries = withGold;
  }
  if (queries.length === es.queries.length) return es;
  return { ...es, queries, notes: [...(es.notes ?? []), ...notes] };
}

/** Everything the answer stage needs, built and checked before any system runs. */
export interface Answering {
  readonly answer: ResolvedAnswer;
  readonly questions: readonly AnswerQuestion[];
  readonly protocol: AnswerProtocol;
  /** Reader per context budget (tokens). */
  readonly readers: ReadonlyMap<number, CachedReader>;
  readonly grader?: CachedGrader;
  readonly judgeName?: string;
  /** Answers-file system id -> its rows mapped onto the questions. */
  readonly mappings: ReadonlyMap<string, AnswerRowMapping>;
  /** Per system: the reader's and the judge's model names, as the price table names them. */
  readonly models: Readonly<Record<string, { reader?: string; judge?: string }>>;
  /** The answer judge audit, when `answer.judge.audit` asks for it: run by runAnswerStage after grading. */
  readonly judgeAudit?: AnswerJudgeAuditRun;
  /** Calls to keep in flight, as each stage's client asks (a batch's size when batched). */
  readonly inFlight: { readonly reader?: number; readonly judge?: number };
}

/** What the answer judge audit came to, before the answer level adds the systems its judge graded. */
export type AnswerAuditResult = Omit<AnswerJudgeAuditLevel, 'systems'>;

/** The answer judge audit of a study: run once, after grading; its result, once run, goes into the answer level. */
export interface AnswerJudgeAuditRun {
  /** Probes the judge on `pool` (questions whose evidence is not sensitive); a second call runs it again. */
  run(pool: readonly AnswerQuestion[], log: Logger): Promise<AnswerAuditResult>;
  /** The last run's result; undefined before the first. */
  result(): AnswerAuditResult | undefined;
}

/** The context budgets the readers are needed at: the reader's, and each full-context system's own. */
function budgets(a: ResolvedAnswer): number[] {
  const reader = a.reader;
  if (reader === undefined) return [];
  const own = a.answerOnly.flatMap((s) => (s.kind === 'full-context' ? [s.budgetTokens ?? reader.budgetTokens] : []));
  return [...new Set([...(a.systems.length > 0 ? [reader.budgetTokens] : []), ...own])];
}

/** One reader per budget, each through the answer cache. */
async function buildReaders(
  cfg: ResolvedConfig,
  a: ResolvedAnswer,
  env: NodeJS.ProcessEnv,
  store: ContentStore,
  log: Logger,
  batch: boolean,
): Promise<{ readers: Map<number, CachedReader>; inFlight?: number }> {
  const r = a.reader;
  const out = new Map<number, CachedReader>();
  if (r === undefined) return { readers: out };
  // One client for every budget of a sweep: their calls share one rate limiter, or one batch ledger.
  const chat =
    r.kind === 'chat' ? await chatClient(readerEndpoint(r, cfg.cache, batch), env, cfg.file, { log, label: 'answer reader', who: 'answer.reader' }) : undefined;
  for (const budgetTokens of budgets(a)) {
    if (r.kind === 'extractive' || chat === undefined) {
      // Deterministic and instant: reading a cache entry would take longer than answering.
      out.set(budgetTokens, uncachedReader(extractiveReader({ budgetTokens })));
      continue;
    }
    const settings = {
      model: r.model as string,
      ...(r.baseURL === undefined ? {} : { baseURL: r.baseURL }),
      apiKeyEnv: keyEnvOf(r),
      local: r.local,
      temperature: r.temperature,
      maxTokens: r.maxTokens,
      budgetTokens,
      ...(r.promptPath === undefined ? {} : { promptFile: r.promptPath }),
      timeoutMs: r.timeoutMs,
      maxRetries: r.maxRetries,
    };
    out.set(budgetTokens, cachedReader(await chatReader(settings, env, cfg.file, chat), store, log, { server: publicBaseURL(r.baseURL) }));
  }
  return { readers: out, ...(chat?.inFlight === undefined ? {} : { inFlight: chat.inFlight }) };
}

/** The chat reader's endpoint; `batch` (the verb's `--batch`) turns the batch API on. */
function readerEndpoint(r: NonNullable<ResolvedAnswer['reader']>, cache: string, batch: boolean): ChatEndpoint {
  return chatEndpointOf({ ...r, model: r.model as string }, cache, { stage: 'answer-reader', batch });
}

/** The configured answer judge through the grade cache, with the name its grades carry and its audit when asked. */
async function buildGrader(cfg: ResolvedConfig, a: ResolvedAnswer, env: NodeJS.ProcessEnv, store: ContentStore, log: Logger, batch: boolean) {
  const j = a.judge;
  if (j === undefined) return undefined;
  const base = await judgeProfile(j.profile, j.promptFiles);
  const profile = j.maxTokens === undefined ? base : { ...base, maxTokens: j.maxTokens };
  const endpoint = chatEndpointOf(j, cfg.cache, { stage: 'answer-judge', batch });
  const chat = await chatClient(endpoint, env, cfg.file, { log, label: 'answer judge', who: 'answer.judge' });
  const name = `${j.profile}/${j.model}`;
  const identity = { model: j.model, server: publicBaseURL(j.baseURL), temperature: j.temperature };
  const grader = cachedGrader(
    profile,
    chat,
    identity,
    { samples: j.samples, temperature: j.temperature, parseRetries: j.parseRetries, judge: name },
    store,
    log,
  );
  const audit = judgeAuditOf(j, grader, name, chat.inFlight ?? j.concurrency);
  return { grader, name, inFlight: chat.inFlight, ...(audit === undefined ? {} : { audit }) };
}

/**
 * The audit of `answer.judge.audit` through the same grader as the answers, so each probed answer is graded as
 * an answer is (samples, majority, parse retries) and cached like a grade: a rerun asks the judge nothing.
 * An audit in which the judge graded no probed answer at all says nothing and stops the run (exit 1), as the
 * relevance judge's audit does; the grades that succeeded stay cached.
 */
function judgeAuditOf(j: AnswerJudgeConfig, grader: CachedGrader, name: string, concurrency: number): AnswerJudgeAuditRun | undefined {
  const settings = j.audit;
  if (settings === undefined) return undefined;
  let last: AnswerAuditResult | undefined;
  return {
    result: () => last,
    async run(pool, log) {
      const { pairs, seed, maxAcceptRate } = settings;
      const r = await runAnswerProbes((q, answer) => grader.grade(q, answer), pool, { pairs, seed, concurrency });
      const asked = r.probes.reduce((n, p) => n + p.drawn, 0);
      if (r.eligible === 0) log.warn(`answer judge audit: no question to probe (each is an abstention or preference question, or has sensitive evidence)`);
      else if (r.probes.every((p) => p.graded === 0))
        throw new HarnessError(`answer judge audit: ${name} graded none of the ${asked} probed answers; the audit says nothing about it`, {
          hint: 'check the judge (a failed request, or replies its profile cannot read) and run again; grades that succeeded are cached',
        });
      else log.info(`answer judge audit: ${asked} probed answers of ${Math.min(pairs, r.eligible)} questions graded by ${name}`);
      last = { judge: name, pairs, seed, maxAcceptRate, eligible: r.eligible, probes: r.probes, tokens: r.tokens };
      return last;
    },
  };
}

/** An answers file read and mapped onto the questions; a file that answers none of them, or that no one can grade, is refused. */
async function mappedFile(cfg: ResolvedConfig, s: Extract<AnswerOnlySystem, { kind: 'answers-file' }>, es: EvalSet, questions: readonly AnswerQuestion[]) {
  const rows = await readAnswersFile(s.path, s.format, s.labels === undefined ? {} : { labels: s.labels.path });
  const mapping = mapAnswerRows(rows, questions, { conversationOf: (q) => conversationIndexOf(q, es) });
  if (mapping.byQuestion.size === 0)
    throw new ConfigError(cfg.file, [
      `${s.at}.params.path: none of the ${rows.length} rows of ${s.pathAsWritten} answers a question of eval set ${es.name} (${questions.length} questions); ` +
        'check that the file was made on this eval set (mem0: conversations keyed by their index in locomo10.json)',
    ]);
  const graded = [...mapping.byQuestion.values()].some((r) => r.recorded?.correct !== undefined);
  if (cfg.answer?.measures.includes('Acc') && cfg.answer.judge === undefined && !graded)
    throw new ConfigError(cfg.file, [
      `${s.at}: ${s.pathAsWritten} records no grade (mem0: llm_score; longmemeval: params.labels) and there is no answer.judge; add answer.judge, or ask only lexical measures`,
    ]);
  return mapping;
}

/** The answer stage's readers, judge and answers files, built and read before any system runs. */
export async function prepareAnswering(
  cfg: ResolvedConfig,
  es: EvalSet,
  env: NodeJS.ProcessEnv,
  store: ContentStore,
  log: Logger,
  opts: { readonly batch?: boolean } = {},
): Promise<Answering | undefined> {
  const a = cfg.answer;
  if (a === undefined) return undefined;
  const { questions } = answerQuestions(es);
  const { readers, inFlight } = await buildReaders(cfg, a, env, store, log, opts.batch === true);
  const judge = await buildGrader(cfg, a, env, store, log, opts.batch === true);
  const mappings = new Map<string, AnswerRowMapping>();
  for (const s of a.answerOnly) if (s.kind === 'answers-file') mappings.set(s.id, await mappedFile(cfg, s, es, questions));
  const readerModel = a.reader?.kind === 'chat' ? a.reader.model : a.reader?.kind;
  const models: Record<string, { reader?: string; judge?: string }> = {};
  for (const id of [...a.systems, ...a.answerOnly.map((s) => s.id)]) {
    const fromFile = mappings.has(id);
    models[id] = { ...(fromFile || readerModel === undefined ? {} : { reader: readerModel }), ...(a.judge === undefined ? {} : { judge: a.judge.model }) };
  }
  return {
    answer: a,
    questions,
    protocol: evalSetProtocol(es),
    readers,
    ...(judge === undefined ? {} : { grader: judge.grader, judgeName: judge.name }),
    mappings,
    models,
    ...(judge?.audit === undefined ? {} : { judgeAudit: judge.audit }),
    inFlight: { ...(inFlight === undefined ? {} : { reader: inFlight }), ...(judge?.inFlight === undefined ? {} : { judge: judge.inFlight }) },
  };
}

/** The answered systems as the stage asks them, in report order. */
export function answerSources(answering: Answering, executed: ExecutedPlan, es: EvalSet): AnswerSource[] {
  const a = answering.answer;
  const documents = new Map<string, Document>(es.documents.map((d) => [d.id, d] as const));
  const topK = a.reader?.topK ?? 0;
  const withRuns: AnswerSource[] = a.systems.map((id) => {
    const o = executed.outcomes.get(id);
    if (o === undefined) throw new HarnessError(`answer stage: system ${id} has no run to answer from`);
    return { kind: 'reader', id, contextOf: topKContext(o.results, o.returned, documents, topK) };
  });
  const history = fullHistory(es);
  const only = a.answerOnly.map((s): AnswerSource => {
    if (s.kind === 'answers-file')
      return { kind: 'answers-file', id: s.id, mapping: answering.mappings.get(s.id) as AnswerRowMapping, recordedJudge: `recorded:${s.format}` };
    return { kind: 'full-context', id: s.id, budgetTokens: s.budgetTokens ?? (a.reader?.budgetTokens as number), contextOf: history };
  });
  return [...withRuns, ...only];
}

/** Reader and judge requests sent and answers served from the cache, summed over the readers. */
export function answeringCounts(answering: Answering): { readonly reader: CacheCounts; readonly judge: CacheCounts } {
  const reader = [...answering.readers.values()].reduce(
    (acc, r) => ({ requests: acc.requests + r.counts().requests, cached: acc.cached + r.counts().cached }),
    {
      requests: 0,
      cached: 0,
    },
  );
  return { reader, judge: answering.grader?.counts() ?? { requests: 0, cached: 0 } };
}

/**
 * Runs the answer stage over the answered systems, then the answer judge audit when the config asks for it (on
 * the questions whose evidence is not sensitive: a probed answer restates its question's gold, and the
 * candidates probe other questions' golds, so none of them may come from a sensitive memory).
 */
export async function runAnswerStage(answering: Answering, executed: ExecutedPlan, es: EvalSet, log: Logger) {
  const a = answering.answer;
  const sensitive = new Set(es.documents.filter((d) => d.sensitive === true).map((d) => d.id));
  const sensitiveEvidence = (q: AnswerQuestion) => q.evidence.some((id) => sensitive.has(id));
  const systems = await answerStage({
    questions: answering.questions,
    sources: answerSources(answering, executed, es),
    readerAt: (budget) => answering.readers.get(budget) as CachedReader,
    budgetTokens: a.reader?.budgetTokens ?? 0,
    ...(answering.grader === undefined ? {} : { grader: answering.grader }),
    ...(answering.judgeName === undefined ? {} : { judgeName: answering.judgeName }),
    judgeLocal: a.judge?.local ?? false,
    sensitiveEvidence,
    readerConcurrency: answering.inFlight.reader ?? a.reader?.concurrency ?? 1,
    judgeConcurrency: answering.inFlight.judge ?? a.judge?.concurrency ?? 1,
    log,
  });
  await answering.judgeAudit?.run(
    answering.questions.filter((q) => !sensitiveEvidence(q)),
    log,
  );
  return systems;
}
