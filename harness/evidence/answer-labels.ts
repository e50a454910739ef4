import { canonicalJson, sha256Hex } from '../cache/index.js';
import type { HumanLabelsInput, HumanPair } from '../decision/evidence-types.js';
import { HarnessError, InputError } from '../errors.js';
import { type AnswerLabelRow, readAnswerLabelRows, throwProblems } from '../kappa/answers-labels.js';
import { answerKey } from '../kappa/answers-source.js';
import { MIN_PPI_LABELS } from '../stats/ppi.js';

/**
 * Hand labels of answers in an ablation (`answer.humanLabels`, docs/answer-evaluation.md, "Validating the answer
 * judge"): read and checked before any system runs, checked against the answers the run gave, and turned into the
 * human labels the decision stage reads: each labelled question's human `Acc` per system, so PPI corrects the
 * accuracy difference and the judge validation compares the decision under both.
 */

/** What the labels must fit: the study's answered systems and the questions it scores. */
export interface AnswerLabelScope {
  /** The answered systems (the report's runs). */
  readonly systems: readonly string[];
  /** Question id -> stratum, every question the study scores, in eval-set order. */
  readonly questions: ReadonlyMap<string, string>;
}

/** Hand labels of answers read and checked against a study. */
export interface AnswerLabelSet {
  readonly kind: 'session' | 'file';
  /** The file as read (absolute), for messages. */
  readonly file: string;
  /** Identity of the labels (`answers:` and 16 hex digits), where relevance labels carry a Qrels version. */
  readonly version: string;
  readonly labels: readonly AnswerLabelRow[];
  /** Questions every answered system has a label on, in eval-set order: those a human accuracy can be given for. */
  readonly complete: readonly string[];
  /** Questions labelled for some systems only. */
  readonly incomplete: readonly string[];
}

const HINT = 'answer.humanLabels: give an answer kappa session (harness kappa --answers REPORT_DIR --session FILE) or "system questionId 1|0" lines';

/** Rows naming a system the study does not answer or a question it does not score, or a stratum the eval set contradicts. */
function scopeProblems(file: string, rows: readonly AnswerLabelRow[], scope: AnswerLabelScope): InputError[] {
  const systems = new Set(scope.systems);
  return rows.flatMap((r) => {
    const at = `system ${r.system}, question ${r.questionId}`;
    const stratum = scope.questions.get(r.questionId);
    if (!systems.has(r.system))
      return [new InputError(file, r.line, `${at}: ${r.system} is not an answered system of this study (${scope.systems.join(', ')})`)];
    if (stratum === undefined) return [new InputError(file, r.line, `${at}: not a question this study scores (one with a gold answer in its eval set)`)];
    if (r.stratum !== undefined && r.stratum !== stratum)
      return [new InputError(file, r.line, `${at}: stratum "${r.stratum}", the eval set says "${stratum}" (labelled on another eval set?)`)];
    return [];
  });
}

/** Questions with a label from every answered system, and those with some, in eval-set order. */
function coverage(rows: readonly AnswerLabelRow[], scope: AnswerLabelScope): { complete: string[]; incomplete: string[] } {
  const labelled = new Map<string, Set<string>>();
  for (const r of rows) labelled.set(r.questionId, (labelled.get(r.questionId) ?? new Set()).add(r.system));
  const complete: string[] = [];
  const incomplete: string[] = [];
  for (const q of scope.questions.keys()) {
    const by = labelled.get(q);
    if (by !== undefined) (scope.systems.every((s) => by.has(s)) ? complete : incomplete).push(q);
  }
  return { complete, incomplete };
}

/**
 * `answer.humanLabels` read before any system runs: every line checked (label, repeats, system, question), each
 * problem at its `file:line` (exit 2). Fewer than {@link MIN_PPI_LABELS} questions labelled for every answered
 * system are refused: below that floor no stratum's PPI interval is computed, so the labels could decide nothing.
 */
export async function readAnswerLabels(file: string, scope: AnswerLabelScope): Promise<AnswerLabelSet> {
  const read = await readAnswerLabelRows(file, HINT);
  throwProblems([...read.problems, ...scopeProblems(file, read.rows, scope)].sort((a, b) => (a.line ?? 0) - (b.line ?? 0)));
  const { complete, incomplete } = coverage(read.rows, scope);
  if (complete.length < MIN_PPI_LABELS)
    throw new InputError(
      file,
      undefined,
      `${complete.length} question${complete.length === 1 ? '' : 's'} labelled for every answered system (${scope.systems.join(', ')}; ${incomplete.length} in part); PPI on accuracy needs at least ${MIN_PPI_LABELS} per stratum`,
      { hint: "label every system's answer to more questions: harness kappa --answers REPORT_DIR --session FILE (it samples whole questions)" },
    );
  const version = `answers:${sha256Hex(canonicalJson(read.rows.map((r) => [r.system, r.questionId, r.correct, r.answerSha ?? null]))).slice(0, 16)}`;
  return { kind: read.kind, file, version, labels: read.rows, complete, incomplete };
}

/**
 * Refuses labels of answers this run did not give (exit 2, at their lines): a session records each labelled
 * answer's identity, and a label says nothing of another text (a new reader, prompt or context). A labels file
 * records none, so its lines are taken as labels of these answers. `answerShaOf` gives the identity of a system's
 * answer to a question, undefined when it has none (the question then leaves the study).
 */
export function checkLabelledAnswers(set: AnswerLabelSet, answerShaOf: (system: string, questionId: string) => string | undefined): void {
  throwProblems(
    set.labels.flatMap((r) => {
      const now = answerShaOf(r.system, r.questionId);
      if (r.answerSha === undefined || now === undefined || now === r.answerSha) return [];
      return [
        new InputError(set.file, r.line, `system ${r.system}, question ${r.questionId}: the answer labelled is not the answer this run gave`, {
          hint: 'the reader, its prompt or the context changed since the labelling: label the new answers (harness kappa --answers NEW_REPORT --session NEW_FILE)',
        }),
      ];
    }),
  );
}

/** What the decision stage's human labels are built from besides the labels. */
export interface AnswerHumanContext {
  /** `answer.humanLabels` as the config writes it. */
  readonly file: string;
  /** The report's questions, in order. */
  readonly queries: readonly { readonly id: string; readonly stratum: string }[];
  /** run -> measure -> the judge-based values of the report's questions (every measure, retrieval ones included). */
  readonly perQuery: Readonly<Record<string, Readonly<Record<string, readonly number[]>>>>;
  readonly relevanceLevel: number;
  readonly thresholds: HumanLabelsInput['thresholds'];
}

/**
 * The decision stage's human labels from labels of answers. The labelled questions are those of the report labelled
 * for every system; on them each run's `Acc` is the human label, and every other measure (retrieval, lexical) is the
 * report's own value, which no answer judge touches, so a human-minus-judge difference is the answer judge's alone.
 * The pairs are the labelled answers of the report's questions (the answering system standing in `docId`).
 */
export function answerHumanInput(set: AnswerLabelSet, ctx: AnswerHumanContext): HumanLabelsInput {
  const at = new Map(ctx.queries.map((q, i) => [q.id, i] as const));
  const complete = new Set(set.complete);
  const queries = ctx.queries.filter((q) => complete.has(q.id)).map((q) => q.id);
  const human = new Map(set.labels.map((r) => [answerKey(r.system, r.questionId), r.correct] as const));
  const perQuery = Object.fromEntries(
    Object.entries(ctx.perQuery).map(([run, byMeasure]) => [
      run,
      Object.fromEntries(
        Object.entries(byMeasure).map(
          ([m, v]) => [m, queries.map((q) => (m === 'Acc' ? labelOf(human, run, q) : (v[at.get(q) as number] as number)))] as const,
        ),
      ),
    ]),
  );
  const pairs: HumanPair[] = set.labels.flatMap((r) => {
    const i = at.get(r.questionId);
    const judge = i === undefined ? undefined : ctx.perQuery[r.system]?.['Acc']?.[i];
    return judge === undefined
      ? []
      : [{ queryId: r.questionId, docId: r.system, stratum: ctx.queries[i as number]?.stratum as string, human: r.correct, judge }];
  });
  return {
    file: ctx.file,
    kind: set.kind === 'session' ? 'session' : 'qrels',
    of: 'answers',
    qrelsVersion: set.version,
    queries,
    incomplete: set.incomplete.filter((q) => at.has(q)).length,
    perQuery,
    pairs,
    relevanceLevel: ctx.relevanceLevel,
    thresholds: ctx.thresholds,
  };
}

function labelOf(human: ReadonlyMap<string, 0 | 1>, run: string, q: string): number {
  const h = human.get(answerKey(run, q));
  // `complete` holds only questions every answered system labelled, and the report's runs are the answered systems.
  if (h === undefined) throw new HarnessError(`answer labels: run ${run} has no label for question ${q}, which counts as labelled for every system`);
  return h;
}
