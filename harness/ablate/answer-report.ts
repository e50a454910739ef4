import type { EvalSet, JsonValue } from '../../evalset/types.js';
import { canonicalJson, sha256Hex } from '../cache/index.js';
import { comparisonPairs } from '../compare/comparisons.js';
import type { ResolvedConfig } from '../config/load.js';
import type { AnswerLevel } from '../decision/answer-level.js';
import type { ReportRun } from '../decision/types.js';
import { HarnessError } from '../errors.js';
import { publicBaseURL } from '../llm/openai.js';
import { answerCosts, type SystemAnswerCost } from '../answer/cost.js';
import { formatHypotheses } from '../answer/longmemeval-hypotheses.js';
import { answerPerQuery, failedQuestions, failureCounts, type FailureCause, type QuestionFailure } from '../answer/score.js';
import { answerLevelOf } from '../answer/section.js';
import type { AnsweredSystem, AnswerQuestion, QuestionOutcome } from '../answer/types.js';
import { answerRunIds } from '../config/answer-block.js';
import { type AnswerLabelSet, checkLabelledAnswers, readAnswerLabels } from '../evidence/answer-labels.js';
import { answerSha } from '../kappa/answers-source.js';
import { answerQuestions } from '../answer/questions.js';
import { type Answering, answeringCounts } from './answer.js';

/**
 * From the answer stage's outcomes to what the report and its folder hold: the questions kept (those every
 * system has a usable outcome for), their per-question values, the note on those left out, the answer level,
 * the answers files and the manifest's answer block.
 */

/** The answer stage scored: what `scoreAblation` and the report read. */
export interface AnsweredStudy {
  readonly systems: readonly AnsweredSystem[];
  /** Every question put to the systems, and those kept (no system failed on them). */
  readonly questions: readonly AnswerQuestion[];
  readonly kept: readonly AnswerQuestion[];
  readonly failures: ReadonlyMap<string, readonly QuestionFailure[]>;
  /** system -> answer measure -> value of kept[i]. */
  readonly perQuery: Record<string, Record<string, number[]>>;
  readonly notes: readonly string[];
}

const CAUSES: Readonly<Record<FailureCause, string>> = {
  reader: 'reader failed',
  'skipped-sensitive': 'skipped as sensitive',
  judge: 'no grade from the judge',
  ungraded: 'no grade recorded',
  missing: 'no answer row',
};

/** The eval-set note on the questions left out, naming each system's failures by cause. */
function failureNote(failures: ReadonlyMap<string, readonly QuestionFailure[]>): string[] {
  if (failures.size === 0) return [];
  const per = [...failureCounts(failures)].map(([system, byCause]) => `${system}: ${[...byCause].map(([c, n]) => `${n} ${CAUSES[c]}`).join(', ')}`);
  return [
    `${failures.size} question${failures.size === 1 ? '' : 's'} left out of every system's measures because an answered system has no usable answer or grade for ${failures.size === 1 ? 'it' : 'them'} ` +
      `(failures are counted, never graded wrong; comparisons stay paired): ${per.join('; ')}`,
  ];
}

/** A system that failed every question says why once, rather than leaving a report of nothing. */
function allFailedProblem(
  questions: readonly AnswerQuestion[],
  systems: readonly AnsweredSystem[],
  failures: ReadonlyMap<string, readonly QuestionFailure[]>,
): void {
  for (const s of systems) {
    const own = [...failures.values()].flatMap((list) => list.filter((f) => f.system === s.id));
    if (own.length < questions.length || questions.length === 0) continue;
    const first = own.find((f) => f.reason !== undefined) ?? own[0];
    throw new HarnessError(
      `answer stage: system ${s.id} has no usable answer for any of its ${questions.length} questions (${first?.cause}${first?.reason ? `: ${first.reason}` : ''})`,
      {
        hint: 'answers and grades that succeeded are in the cache; fix the cause and run again',
      },
    );
  }
}

/** The outcomes scored: failures found, questions kept, per-question values of the answer measures. */
export function scoreAnswers(answering: Answering, systems: readonly AnsweredSystem[]): AnsweredStudy {
  const { questions } = answering;
  const measures = answering.answer.measures;
  const failures = failedQuestions(questions, systems, measures);
  allFailedProblem(questions, systems, failures);
  const kept = questions.filter((q) => !failures.has(q.id));
  return { systems, questions, kept, failures, perQuery: answerPerQuery(kept, systems, measures), notes: failureNote(failures) };
}

/** The eval set restricted to the kept questions (the same object when none was left out). */
export function keptEvalSet(es: EvalSet, answered: AnsweredStudy): EvalSet {
  if (answered.kept.length === es.queries.length) return es;
  const keep = new Set(answered.kept.map((q) => q.id));
  return { ...es, queries: es.queries.filter((q) => keep.has(q.id)), notes: [...(es.notes ?? []), ...answered.notes] };
}

/** The answer level of the report: every question, every answered system, the pairs the report compares. */
export function answerLevelFor(cfg: ResolvedConfig, answering: Answering, answered: AnsweredStudy): AnswerLevel {
  const runIds = cfg.runIds;
  const baseline = cfg.compare.baseline ?? (runIds[0] as string);
  const gate = cfg.gate === undefined ? undefined : { baseline: cfg.gate.baseline ?? baseline, system: cfg.gate.candidate };
  const pairs = comparisonPairs(
    runIds,
    baseline,
    cfg.compare.allPairs,
    gate,
    ...cfg.compare.questions.map((q) => ({ baseline: q.baseline, system: q.system })),
  );
  const mapping = Object.fromEntries([...answering.mappings].map(([id, m]) => [id, { unmapped: m.unmapped.length, missing: m.missing.length }] as const));
  const audit = answering.judgeAudit?.result();
  return answerLevelOf(answered.questions, answered.systems, {
    protocol: answering.protocol,
    pairs,
    prices: answering.answer.price,
    models: answering.models,
    mapping,
    // The report's queries: every accuracy of the section is over them, as the summary's and the gate's are.
    kept: answered.kept.map((q) => q.id),
    ...(audit === undefined ? {} : { audit }),
  });
}

/** The report rows of the answer-only systems: kind, params as written (paths as written), a fingerprint of both. */
export function answerOnlyRuns(cfg: ResolvedConfig): ReportRun[] {
  return (cfg.answer?.answerOnly ?? []).map((s) => {
    const params: Record<string, JsonValue> =
      s.kind === 'full-context'
        ? { budgetTokens: s.budgetTokens ?? cfg.answer?.reader?.budgetTokens ?? null }
        : { path: s.pathAsWritten, format: s.format, ...(s.labels === undefined ? {} : { labels: s.labels.asWritten }) };
    return {
      id: s.id,
      kind: s.kind,
      node: 'answer',
      fingerprint: sha256Hex(canonicalJson({ kind: s.kind, params })),
      params,
      ...(s.label === undefined ? {} : { label: s.label }),
    };
  });
}

/** One line of `answers/<system>.jsonl`: the answer, its grade and samples, lexical measures, attribution, failures. */
function answerLine(q: AnswerQuestion, o: QuestionOutcome | undefined, failures: readonly QuestionFailure[]): Record<string, unknown> {
  const a = o?.answer;
  return {
    question_id: q.id,
    // An answer from a sensitive memory may restate it: the report folder never holds its text.
    answer: a?.status === 'answered' && o?.sensitive !== true ? a.text : null,
    ...(o?.sensitive === true ? { withheld: 'sensitive' } : {}),
    correct: o?.grade?.correct ?? null,
    judge: o?.grade?.judge ?? null,
    samples: (o?.grade?.samples ?? []).map((s) => (s.status === 'graded' ? { correct: s.correct } : { failed: s.reason })),
    lexical: o?.lexical ?? null,
    evidenceInContext: o?.evidenceInContext ?? null,
    context: a?.status === 'answered' ? [...a.context] : [],
    tokens: { reader: a === undefined ? null : { ...a.tokens }, judge: o?.grade === undefined ? null : { ...o.grade.tokens } },
    failures: failures.map((f) => ({ cause: f.cause, ...(f.reason === undefined ? {} : { reason: f.reason }) })),
  };
}

/**
 * `answers/<system>.jsonl` and `answers/<system>.hypotheses.jsonl` (LongMemEval's format) for every answered
 * system; an answer marked sensitive is withheld from both (its line says so; the hypothesis file omits it).
 */
export function answerFiles(answered: AnsweredStudy): Map<string, string> {
  const files = new Map<string, string>();
  for (const s of answered.systems) {
    const byId = new Map(s.outcomes.map((o) => [o.questionId, o] as const));
    const lines = answered.questions.map((q) => {
      const own = (answered.failures.get(q.id) ?? []).filter((f) => f.system === s.id);
      return `${JSON.stringify(answerLine(q, byId.get(q.id), own))}\n`;
    });
    files.set(`answers/${s.id}.jsonl`, lines.join(''));
    const hypotheses = answered.questions.flatMap((q) => {
      const o = byId.get(q.id);
      return o?.answer.status === 'answered' && o.sensitive !== true ? [{ questionId: q.id, hypothesis: o.answer.text }] : [];
    });
    files.set(`answers/${s.id}.hypotheses.jsonl`, formatHypotheses(`answers/${s.id}.hypotheses.jsonl`, hypotheses));
  }
  return files;
}

/** The manifest's `answer` block: who read and graded (no key, no credentials), requests and cache use, cost per system. */
export function answerManifest(answering: Answering, answered: AnsweredStudy): { readonly [k: string]: JsonValue } {
  const a = answering.answer;
  const r = a.reader;
  const j = a.judge;
  const costs: Record<string, SystemAnswerCost> = answerCosts(answered.systems, answering.models, a.price);
  return {
    measures: [...a.measures],
    protocol: answering.protocol,
    reader:
      r === undefined
        ? null
        : {
            kind: r.kind,
            model: r.model ?? null,
            baseURL: r.kind === 'chat' ? publicBaseURL(r.baseURL) : null,
            local: r.kind === 'extractive' || r.local,
            promptFile: r.promptFile ?? null,
            topK: r.topK,
            budgetTokens: r.budgetTokens,
            temperature: r.temperature,
            maxTokens: r.maxTokens,
          },
    judge:
      j === undefined
        ? null
        : {
            profile: j.profile,
            model: j.model,
            baseURL: publicBaseURL(j.baseURL),
            local: j.local,
            samples: j.samples,
            temperature: j.temperature,
            parseRetries: j.parseRetries,
            audit: j.audit === undefined ? null : { ...j.audit },
          },
    questions: answered.questions.length,
    kept: answered.kept.length,
    requests: answeringCounts(answering) as unknown as JsonValue,
    costs: costs as unknown as JsonValue,
  };
}

/**
 * `answer.humanLabels` read and checked against the study before any system runs (a bad line is exit 2 at its
 * `file:line`): labels of its answered systems on questions it scores. Undefined without the key.
 */
export async function readStudyAnswerLabels(cfg: ResolvedConfig, es: EvalSet): Promise<AnswerLabelSet | undefined> {
  const a = cfg.answer;
  if (a?.humanLabels === undefined) return undefined;
  const questions = new Map(answerQuestions(es).questions.map((q) => [q.id, q.stratum] as const));
  return readAnswerLabels(a.humanLabels.path, { systems: answerRunIds(a), questions });
}

/** The labels checked against the answers this run gave: a session's label of another answer text is refused (exit 2). */
export function checkAnswerLabels(set: AnswerLabelSet, answered: AnsweredStudy): void {
  const texts = new Map(
    answered.systems.map(
      (s) => [s.id, new Map(s.outcomes.flatMap((o) => (o.answer.status === 'answered' ? [[o.questionId, o.answer.text] as const] : [])))] as const,
    ),
  );
  checkLabelledAnswers(set, (system, q) => {
    const text = texts.get(system)?.get(q);
    return text === undefined ? undefined : answerSha(text);
  });
}
