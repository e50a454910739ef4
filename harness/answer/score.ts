import { SKIPPED_SENSITIVE } from './section.js';
import type { AnsweredSystem, AnswerQuestion, QuestionOutcome } from './types.js';

/**
 * The answer level's per-question values, as the decision stage reads them (`perQuery[system][measure][i]`),
 * and the questions they cannot be given for. A question any answered system has no usable outcome for is left
 * out of every system's values, so every comparison stays paired over the same questions.
 */

/** Why one system has no usable outcome for one question. */
export type FailureCause = 'reader' | 'skipped-sensitive' | 'judge' | 'ungraded' | 'missing';

/** One system's failed question and why. */
export interface QuestionFailure {
  readonly system: string;
  readonly cause: FailureCause;
  readonly reason?: string;
}

/** Whether a failure's reason is the egress guard's. */
const isSkip = (reason: string) => reason.startsWith(SKIPPED_SENSITIVE);

/** Why `o` cannot give `measures` a value, or undefined when it can. Without `Acc`, an answer needs no grade. */
export function failureOf(o: QuestionOutcome | undefined, needsGrade: boolean): { cause: FailureCause; reason?: string } | undefined {
  if (o === undefined) return { cause: 'missing' };
  if (o.answer.status === 'failed') return { cause: isSkip(o.answer.reason) ? 'skipped-sensitive' : 'reader', reason: o.answer.reason };
  if (!needsGrade || o.grade?.correct !== undefined) return undefined;
  if (o.grade === undefined) return { cause: 'ungraded', reason: 'no answer judge is configured and the answers file records no grade for it' };
  const failed = o.grade.samples.find((s) => s.status === 'failed');
  const reason = failed?.status === 'failed' ? failed.reason : 'no sample could be graded';
  return { cause: isSkip(reason) ? 'skipped-sensitive' : 'judge', reason };
}

/** Question id -> the failures that leave it out, over every system; questions absent have none. */
export function failedQuestions(
  questions: readonly AnswerQuestion[],
  systems: readonly AnsweredSystem[],
  measures: readonly string[],
): Map<string, QuestionFailure[]> {
  const needsGrade = measures.includes('Acc');
  const out = new Map<string, QuestionFailure[]>();
  for (const s of systems) {
    const byId = new Map(s.outcomes.map((o) => [o.questionId, o] as const));
    for (const q of questions) {
      const f = failureOf(byId.get(q.id), needsGrade);
      if (f === undefined) continue;
      out.set(q.id, [...(out.get(q.id) ?? []), { system: s.id, ...f }]);
    }
  }
  return out;
}

/** One measure's value of a usable outcome: `Acc` from the grade, a lexical one from the answer's text. */
function measureValue(o: QuestionOutcome, measure: string): number {
  if (measure === 'Acc') return o.grade?.correct === true ? 1 : 0;
  const v = o.lexical?.[measure];
  if (v === undefined) throw new Error(`answer scores: question ${o.questionId} has no ${measure}`);
  return v;
}

/**
 * system -> measure -> value of `questions[i]`, for questions every system has a usable outcome for (the
 * caller left the others out with {@link failedQuestions}).
 */
export function answerPerQuery(
  questions: readonly AnswerQuestion[],
  systems: readonly AnsweredSystem[],
  measures: readonly string[],
): Record<string, Record<string, number[]>> {
  const out: Record<string, Record<string, number[]>> = {};
  for (const s of systems) {
    const byId = new Map(s.outcomes.map((o) => [o.questionId, o] as const));
    const outcomes = questions.map((q) => {
      const o = byId.get(q.id);
      if (o === undefined || o.answer.status === 'failed') throw new Error(`answer scores: system ${s.id} has no answer to question ${q.id}`);
      return o;
    });
    out[s.id] = Object.fromEntries(measures.map((m) => [m, outcomes.map((o) => measureValue(o, m))] as const));
  }
  return out;
}

/** Failures counted per system and cause, for the note that says which questions were left out and why. */
export function failureCounts(failures: ReadonlyMap<string, readonly QuestionFailure[]>): Map<string, Map<FailureCause, number>> {
  const out = new Map<string, Map<FailureCause, number>>();
  for (const list of failures.values()) {
    for (const f of list) {
      const byCause = out.get(f.system) ?? new Map<FailureCause, number>();
      byCause.set(f.cause, (byCause.get(f.cause) ?? 0) + 1);
      out.set(f.system, byCause);
    }
  }
  return out;
}
