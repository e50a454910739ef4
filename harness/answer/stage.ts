import pLimit from 'p-limit';
import { lexicalScores } from '../metrics/answer-text.js';
import type { Logger } from '../log.js';
import type { CachedGrader, CachedReader } from './cache.js';
import { itemsWithin, protocolOf } from './context.js';
import type { AnswerRow } from './files.js';
import { SKIPPED_SENSITIVE } from './section.js';
import { type AnswerSource, evidenceInContext } from './systems.js';
import type { AnswerGrade, AnsweredSystem, AnswerQuestion, QuestionOutcome, ReaderOutcome } from './types.js';

/**
 * The answer and grade stages of `harness ablate` (docs/adr/0045-answer-level-evaluation.md): every answered
 * system's answer to every question, its grade and its lexical measures. A failure (the reader's, the judge's,
 * the egress guard's) is an outcome of its own, counted by the answer level and never graded as wrong.
 */

/** Who answers and who grades, as the stage uses them. */
export interface AnswerStageOptions {
  readonly questions: readonly AnswerQuestion[];
  readonly sources: readonly AnswerSource[];
  /** The reader at a context budget (tokens): systems with runs use `budgetTokens`, full-context ones their own. */
  readonly readerAt?: (budgetTokens: number) => CachedReader;
  readonly budgetTokens: number;
  /** The configured answer judge, and whether questions with sensitive evidence may go to it. */
  readonly grader?: CachedGrader;
  /** The configured judge as grades name it (`profile/model`). */
  readonly judgeName?: string;
  readonly judgeLocal: boolean;
  /** Whether a question's evidence holds a Sensitive Document (its question and gold then restate one). */
  readonly sensitiveEvidence: (q: AnswerQuestion) => boolean;
  readonly readerConcurrency: number;
  readonly judgeConcurrency: number;
  readonly log: Logger;
}

/** A grade that was never asked for: the egress guard kept the question from a judge that is not local. */
function skippedGrade(judge: string): AnswerGrade {
  return {
    samples: [
      { status: 'failed', reason: `${SKIPPED_SENSITIVE}: the question's evidence or the answer's context holds a sensitive memory and the judge is not local` },
    ],
    flipRate: 0,
    tokens: { prompt: 0, completion: 0 },
    judge,
  };
}

/** A recorded grade of an answers file as an AnswerGrade of the recorded judge. */
function recordedGrade(row: AnswerRow, judge: string): AnswerGrade | undefined {
  const correct = row.recorded?.correct;
  if (correct === undefined) return undefined;
  return {
    correct,
    samples: [{ status: 'graded', correct, reply: 'recorded' }],
    flipRate: 0,
    tokens: { prompt: 0, completion: 0 },
    judge: row.recorded?.judge === undefined ? judge : `recorded:${row.recorded.judge}`,
  };
}

/** Runs `f` under the judge's concurrency limit; the reader's limit is the caller's. */
type Limit = <T>(f: () => Promise<T>) => Promise<T>;

/** What the grading of an answer depends on besides the answer: its context and a grade a file recorded. */
interface AnswerFacts {
  /** The reader's context held a sensitive memory (it went to a local reader). */
  readonly sentSensitive: boolean;
  /** The reader's context is known (false for an answers file: the other tool's context is not). */
  readonly contextKnown: boolean;
  readonly recorded?: AnswerGrade;
}

/** The outcome of an answer: its grade (recorded, configured judge, or none), lexical measures and attribution. */
async function outcomeOf(q: AnswerQuestion, answer: ReaderOutcome, facts: AnswerFacts, opts: AnswerStageOptions, judgeLimit: Limit): Promise<QuestionOutcome> {
  const sensitive = facts.sentSensitive || opts.sensitiveEvidence(q);
  const base = { questionId: q.id, answer, ...(sensitive ? { sensitive: true as const } : {}) };
  if (answer.status === 'failed') return base;
  const inContext = evidenceInContext(q, facts.contextKnown ? answer.context : undefined);
  const grader = opts.grader;
  let grade = facts.recorded;
  if (grade === undefined && grader !== undefined) {
    grade =
      !opts.judgeLocal && sensitive
        ? skippedGrade(opts.judgeName ?? 'answer judge')
        : await judgeLimit(() => grader.grade(q, answer.text, { store: !sensitive }));
  }
  return {
    ...base,
    ...(grade === undefined ? {} : { grade }),
    lexical: lexicalScores(answer.text, q.gold, q.category),
    ...(inContext === undefined ? {} : { evidenceInContext: inContext }),
  };
}

/** One reader-answered question: the context trimmed to the budget, refused when it would carry a sensitive memory off this machine. */
async function readOne(
  q: AnswerQuestion,
  source: Extract<AnswerSource, { kind: 'reader' | 'full-context' }>,
  opts: AnswerStageOptions,
  limits: { reader: Limit; judge: Limit },
): Promise<QuestionOutcome> {
  const budget = source.kind === 'full-context' ? source.budgetTokens : opts.budgetTokens;
  const reader = opts.readerAt?.(budget);
  if (reader === undefined) throw new Error(`answer stage: system ${source.id} needs a reader and none was built`);
  const ctx = source.contextOf(q);
  const items = itemsWithin(ctx.items, { budgetTokens: budget, protocol: protocolOf(q) });
  const sensitive = items.some((i) => ctx.sensitive.has(i.id));
  if (sensitive && !reader.local) {
    const reason = `${SKIPPED_SENSITIVE}: the context holds ${items.filter((i) => ctx.sensitive.has(i.id)).length} sensitive memor(ies) and the reader is not local`;
    return { questionId: q.id, answer: { status: 'failed', reason, tokens: { prompt: 0, completion: 0 } }, sensitive: true };
  }
  // An answer from a sensitive context may restate it: it is never kept in the cache.
  const answer = await limits.reader(() => reader.answer(q, items, { store: !(sensitive || opts.sensitiveEvidence(q)) }));
  return outcomeOf(q, answer, { sentSensitive: sensitive, contextKnown: true }, opts, limits.judge);
}

/** One answers-file question: its row's response, graded by its recorded grade, else by the configured judge. */
function fileOne(
  q: AnswerQuestion,
  source: Extract<AnswerSource, { kind: 'answers-file' }>,
  opts: AnswerStageOptions,
  judge: Limit,
): Promise<QuestionOutcome> | undefined {
  const row = source.mapping.byQuestion.get(q.id);
  if (row === undefined) return undefined;
  const answer: ReaderOutcome = {
    status: 'answered',
    text: row.response,
    tokens: { prompt: 0, completion: 0 },
    model: `answers-file:${source.id}`,
    context: [],
  };
  const recorded = recordedGrade(row, source.recordedJudge);
  return outcomeOf(q, answer, { sentSensitive: false, contextKnown: false, ...(recorded === undefined ? {} : { recorded }) }, opts, judge);
}

/** The system's outcomes in question order; a question an answers file has no row for has none. */
async function answerSystem(
  source: AnswerSource,
  opts: AnswerStageOptions,
  limits: { reader: Limit; judge: Limit },
  tick: () => void,
): Promise<AnsweredSystem> {
  const outcomes = await Promise.all(
    opts.questions.map(async (q) => {
      const o = source.kind === 'answers-file' ? await fileOne(q, source, opts, limits.judge) : await readOne(q, source, opts, limits);
      tick();
      return o;
    }),
  );
  const answered = outcomes.filter((o): o is QuestionOutcome => o !== undefined);
  return { id: source.id, source: source.kind === 'reader' ? 'reader' : source.kind, outcomes: answered };
}

/**
 * Answers every question with every source, then grades each answer: reader requests and judge requests each
 * under their own concurrency limit, progress on stderr. Outcomes come back in question order per system, in
 * source order, whatever order the requests finished in.
 */
export async function answerStage(opts: AnswerStageOptions): Promise<AnsweredSystem[]> {
  const reader = pLimit(opts.readerConcurrency);
  const judge = pLimit(opts.judgeConcurrency);
  const limits = { reader: <T>(f: () => Promise<T>) => reader(f), judge: <T>(f: () => Promise<T>) => judge(f) };
  const progress = opts.log.progress('answer', opts.questions.length * opts.sources.length);
  const systems = await Promise.all(opts.sources.map((s) => answerSystem(s, opts, limits, () => progress.tick())));
  progress.done();
  return systems;
}
