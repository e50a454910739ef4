import { HarnessError } from '../errors.js';
import { addTokens, dollarsOf } from '../llm/price.js';
import type {
  AccuracyRow,
  AnswerCost,
  AnswerFailures,
  AnswerJudgeAuditLevel,
  AnswerLevel,
  AnswerPair,
  AnswerPairRow,
  AnswerSystemLevel,
  AnswerTokens,
  Attribution,
  JudgeVariance,
  LexicalMean,
  ProtocolAccuracy,
} from '../decision/answer-level.js';
import { OVERALL } from '../decision/types.js';
import { LOCOMO_CATEGORIES, type LoCoMoCategory, longMemEvalAccuracy, locomoAccuracy } from '../metrics/answer-accuracy.js';
import { adjustPValues } from '../stats/adjust.js';
import { discordance, mcnemarExact } from '../stats/mcnemar.js';
import { wilsonInterval } from '../stats/wilson.js';
import type { AnswerProtocol, AnswerQuestion, AnsweredSystem, QuestionOutcome, ReaderOutcome } from './types.js';

/**
 * The answer level of a report (`answerLevelOf`): from the questions and every answered system's outcomes to
 * the AnswerLevel that report.json carries and the report renders. Pure and deterministic: no clock, no
 * draws, numbers only from the outcomes, so the same answers give the same bytes.
 *
 * Every per-question figure (accuracy per stratum, protocol aggregates, lexical means, attribution, McNemar) is
 * over the kept questions, those every answered system has a usable outcome for: the report's queries, so no
 * accuracy here can differ from the summary's `Acc` or the gate's. Each system's accuracy over all of its own
 * graded questions is kept apart (`ownAccuracy`), beside its failures.
 */

/** Prices per model, USD per million tokens (the config's price table). */
export type AnswerPrices = Readonly<Record<string, { readonly input: number; readonly output: number }>>;

export interface AnswerLevelOptions {
  readonly protocol: AnswerProtocol;
  /** The compared pairs, each tested by exact McNemar on the questions graded for both. */
  readonly pairs: readonly { readonly baseline: string; readonly system: string }[];
  /** Confidence level of the Wilson intervals (0.95 when absent). */
  readonly level?: number;
  readonly prices?: AnswerPrices;
  /** Per system: the reader's and the judge's model names, as the price table names them. */
  readonly models?: Readonly<Record<string, { reader?: string; judge?: string }>>;
  /** Per answers-file system: its rows that map to no question, and the questions no row maps to. */
  readonly mapping?: Readonly<Record<string, { readonly unmapped: number; readonly missing: number }>>;
  /**
   * Ids of the kept questions (the study's `AnsweredStudy.kept`, the report's queries). When absent: the
   * questions every system answered, and graded where any system has a grade.
   */
  readonly kept?: readonly string[];
  /** The answer judge audit's results, when `answer.judge.audit` ran it; the systems it graded are added here. */
  readonly audit?: Omit<AnswerJudgeAuditLevel, 'systems'>;
}

/**
 * How a failure says that the question was never sent: its context (or its evidence) held sensitive memories
 * and the reader, or the judge, is not local (the egress guard). The reason of a failed reader outcome, or of
 * the first failed sample of a grade, starts with it; such a question counts as skipped-sensitive, not as a
 * reader or judge error.
 */
export const SKIPPED_SENSITIVE = 'skipped: sensitive';

/** Whether a reader outcome is the egress guard's skip (its reason starts with {@link SKIPPED_SENSITIVE}). */
export function skippedSensitive(answer: ReaderOutcome): boolean {
  return answer.status === 'failed' && answer.reason.startsWith(SKIPPED_SENSITIVE);
}

/** The rule AnswerGrade.correct follows, in words for the report. */
export const MAJORITY_RULE = 'the majority of the graded samples decides; a tie counts as wrong; samples that cannot be read are left out';

const DEFAULT_LEVEL = 0.95;

/** One system's outcomes aligned with the questions: `undefined` where it has none. */
type Aligned = readonly (QuestionOutcome | undefined)[];

/** The grade of an aligned outcome: true, false, or undefined (failed, ungraded or missing). */
const gradeOf = (o: QuestionOutcome | undefined): boolean | undefined => (o?.answer.status === 'answered' ? o.grade?.correct : undefined);

/** An accuracy row with its Wilson interval at `level`. */
export function accuracyRow(label: string, n: number, correct: number, level: number): AccuracyRow {
  return { label, n, correct, accuracy: n === 0 ? null : correct / n, interval: n === 0 ? null : wilsonInterval(correct, n, level) };
}

/** The accuracy row of the graded questions among `indices`. */
function rowOver(label: string, grades: readonly (boolean | undefined)[], indices: readonly number[], level: number): AccuracyRow {
  let n = 0;
  let correct = 0;
  for (const i of indices) {
    const g = grades[i];
    if (g === undefined) continue;
    n++;
    if (g) correct++;
  }
  return accuracyRow(label, n, correct, level);
}

/**
 * The system's outcomes in question order. An outcome for a question that is not in the list, or two for one
 * question, is a fault of the stage that made them: counting either would report numbers about other questions.
 */
function align(questions: readonly AnswerQuestion[], system: AnsweredSystem): Aligned {
  const at = new Map(questions.map((q, i) => [q.id, i] as const));
  const out: (QuestionOutcome | undefined)[] = questions.map(() => undefined);
  for (const o of system.outcomes) {
    const i = at.get(o.questionId);
    if (i === undefined)
      throw new HarnessError(`answer level: system ${system.id} has an outcome for question ${o.questionId}, which is not among the questions`);
    if (out[i] !== undefined) throw new HarnessError(`answer level: system ${system.id} has two outcomes for question ${o.questionId}`);
    out[i] = o;
  }
  return out;
}

/**
 * Whether a grade with no readable sample is the egress guard's skip: a failed sample whose reason starts with
 * {@link SKIPPED_SENSITIVE} means the judge was never sent the answer, so it is no judge failure.
 */
function judgeSkipped(grade: NonNullable<QuestionOutcome['grade']>): boolean {
  return grade.samples.some((x) => x.status === 'failed' && x.reason.startsWith(SKIPPED_SENSITIVE));
}

function failuresOf(outcomes: Aligned): AnswerFailures {
  const f = { reader: 0, judge: 0, sensitive: 0, missing: 0, ungraded: 0 };
  for (const o of outcomes) {
    if (o === undefined) f.missing++;
    else if (o.answer.status === 'failed') {
      if (skippedSensitive(o.answer)) f.sensitive++;
      else f.reader++;
    } else if (o.grade === undefined) f.ungraded++;
    else if (o.grade.correct === undefined) {
      if (judgeSkipped(o.grade)) f.sensitive++;
      else f.judge++;
    }
  }
  return f;
}

/**
 * Strata in order of first appearance among all the questions, each with its kept question indices, then the
 * pooled row when there are several. A stratum whose questions all failed keeps its row (of n 0), so the
 * rows are the eval set's strata whatever failed.
 */
function strataOf(questions: readonly AnswerQuestion[], kept: readonly number[]): { id: string; indices: number[] }[] {
  const members = new Map<string, number[]>(questions.map((q) => [q.stratum, []] as const));
  for (const i of kept) members.get((questions[i] as AnswerQuestion).stratum)?.push(i);
  const out = [...members].map(([id, indices]) => ({ id, indices }));
  if (out.length > 1) out.push({ id: OVERALL, indices: [...kept] });
  return out;
}

/** A usable outcome for the default kept set: an answer, and a grade when `graded` (some system has grades). */
const usable = (o: QuestionOutcome | undefined, graded: boolean): boolean => o?.answer.status === 'answered' && (!graded || gradeOf(o) !== undefined);

/**
 * Indices of the kept questions: `opts.kept` (each id checked to be a question), else those every system
 * answered, and graded when any system has a grade (the rule `failedQuestions` applies when `Acc` is measured).
 */
function keptIndices(questions: readonly AnswerQuestion[], aligned: readonly Aligned[], kept: readonly string[] | undefined): number[] {
  if (kept !== undefined) {
    const at = new Map(questions.map((q, i) => [q.id, i] as const));
    return kept
      .map((id) => {
        const i = at.get(id);
        if (i === undefined) throw new HarnessError(`answer level: kept question ${id} is not among the questions`);
        return i;
      })
      .sort((a, b) => a - b);
  }
  const graded = aligned.some((outcomes) => outcomes.some((o) => gradeOf(o) !== undefined));
  return questions.flatMap((_, i) => (aligned.every((outcomes) => usable(outcomes[i], graded)) ? [i] : []));
}

/** The questions and outcomes at `indices`, in that order. */
function subset<T>(xs: readonly T[], indices: readonly number[]): T[] {
  return indices.map((i) => xs[i] as T);
}

/** A kernel's figure as report.json keeps it: a mean of nothing (NaN) is no number. */
const finite = (x: number): number | null => (Number.isFinite(x) ? x : null);

/**
 * LongMemEval's aggregates through its kernel, with a Wilson interval on each proportion. Overall without
 * abstention is overall less the kernel's abstention questions, so the two always add up.
 */
function longMemEvalRows(questions: readonly AnswerQuestion[], grades: readonly (boolean | undefined)[], level: number): ProtocolAccuracy {
  // A question without a type reaches the kernel as such, which refuses it: LongMemEval has none.
  const rows = questions.flatMap((q, i) => {
    const correct = grades[i];
    return correct === undefined ? [] : [{ questionId: q.id, questionType: q.questionType ?? '', correct }];
  });
  const acc = longMemEvalAccuracy(rows);
  const correct = rows.filter((r) => r.correct).length;
  const abs = acc.abstention;
  return {
    protocol: 'longmemeval',
    perType: Object.entries(acc.perType).map(([type, c]) => accuracyRow(type, c.n, c.correct, level)),
    taskAveraged: finite(acc.taskAveraged),
    overall: accuracyRow('overall (every question)', rows.length, correct, level),
    abstention: accuracyRow('abstention (_abs questions)', abs.n, abs.correct, level),
    withoutAbstention: accuracyRow('overall without abstention', rows.length - abs.n, correct - abs.correct, level),
  };
}

/** LoCoMo's aggregates through its kernel: per category with its name, overall on 1-4, and with 5 when present. */
function locomoRows(questions: readonly AnswerQuestion[], grades: readonly (boolean | undefined)[], level: number): ProtocolAccuracy {
  // A question without a category reaches the kernel as category 0, which it refuses: every LoCoMo question has one.
  const rows = questions.flatMap((q, i) => {
    const correct = grades[i];
    return correct === undefined ? [] : [{ category: q.category ?? 0, correct }];
  });
  const acc = locomoAccuracy(rows);
  const perCategory = Object.entries(acc.perCategory).map(([k, c]) =>
    accuracyRow(`${k} ${LOCOMO_CATEGORIES[Number(k) as LoCoMoCategory]}`, c.n, c.correct, level),
  );
  const adversarial = acc.perCategory[5];
  return {
    protocol: 'locomo',
    perCategory,
    overall: accuracyRow('overall on categories 1-4', acc.overall.n, acc.overall.correct, level),
    ...(adversarial === undefined
      ? {}
      : { withAdversarial: accuracyRow('overall with category 5 (adversarial)', acc.withAdversarial.n, acc.withAdversarial.correct, level) }),
  };
}

/** Generic questions: every graded question, and those that are not abstention questions. */
function genericRows(questions: readonly AnswerQuestion[], grades: readonly (boolean | undefined)[], level: number): ProtocolAccuracy {
  const all = questions.map((_, i) => i);
  return {
    protocol: 'generic',
    withAbstention: rowOver('overall (abstention questions included)', grades, all, level),
    withoutAbstention: rowOver(
      'overall without abstention questions',
      questions.map((q, i) => (q.abstention ? undefined : grades[i])),
      all,
      level,
    ),
  };
}

function protocolRows(
  protocol: AnswerProtocol,
  questions: readonly AnswerQuestion[],
  grades: readonly (boolean | undefined)[],
  level: number,
): ProtocolAccuracy {
  if (protocol === 'longmemeval') return longMemEvalRows(questions, grades, level);
  if (protocol === 'locomo') return locomoRows(questions, grades, level);
  return genericRows(questions, grades, level);
}

/** Lexical measures in this order (the names `lexicalScores` gives them), then any other in name order. */
const LEXICAL_ORDER = ['F1-LoCoMo', 'F1-set', 'EM'];

function lexicalMeans(outcomes: Aligned): LexicalMean[] {
  const sums = new Map<string, { n: number; sum: number }>();
  for (const o of outcomes) {
    for (const [measure, v] of Object.entries(o?.lexical ?? {})) {
      const s = sums.get(measure) ?? { n: 0, sum: 0 };
      sums.set(measure, { n: s.n + 1, sum: s.sum + v });
    }
  }
  const rank = (m: string) => (LEXICAL_ORDER.includes(m) ? LEXICAL_ORDER.indexOf(m) : LEXICAL_ORDER.length);
  return [...sums].sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0)).map(([measure, s]) => ({ measure, n: s.n, mean: s.sum / s.n }));
}

/** The judge's repeated samples over the graded answers; undefined when no answer has a grade. */
function judgeVarianceOf(outcomes: Aligned): JudgeVariance | undefined {
  const grades = outcomes.flatMap((o) => (o?.grade?.correct === undefined ? [] : [o.grade]));
  if (grades.length === 0) return undefined;
  let answers = 0;
  let flips = 0;
  let disagreeing = 0;
  let failedSamples = 0;
  for (const g of grades) {
    const read = g.samples.flatMap((s) => (s.status === 'graded' ? [s.correct] : []));
    failedSamples += g.samples.length - read.length;
    if (read.length < 2) continue;
    answers++;
    flips += g.flipRate;
    if (new Set(read).size > 1) disagreeing++;
  }
  return {
    samples: Math.max(...grades.map((g) => g.samples.length)),
    answers,
    meanFlipRate: answers === 0 ? null : flips / answers,
    disagreeing,
    disagreeingShare: answers === 0 ? null : disagreeing / answers,
    failedSamples,
    rule: MAJORITY_RULE,
  };
}

/** The 2x2 of evidence in context against the grade, over graded questions with evidence ids and a known context. */
function attributionOf(questions: readonly AnswerQuestion[], outcomes: Aligned): Attribution | undefined {
  const c = { inContextCorrect: 0, inContextWrong: 0, missingCorrect: 0, missingWrong: 0, withoutEvidence: 0 };
  outcomes.forEach((o, i) => {
    const correct = gradeOf(o);
    if (correct === undefined) return;
    const inContext = o?.evidenceInContext;
    if ((questions[i]?.evidence.length ?? 0) === 0 || inContext === undefined) c.withoutEvidence++;
    else if (inContext) c[correct ? 'inContextCorrect' : 'inContextWrong']++;
    else c[correct ? 'missingCorrect' : 'missingWrong']++;
  });
  const n = c.inContextCorrect + c.inContextWrong + c.missingCorrect + c.missingWrong;
  if (n === 0) return undefined;
  const share = (x: number, of: number) => (of === 0 ? null : x / of);
  const wrong = c.inContextWrong + c.missingWrong;
  return {
    n,
    ...c,
    correctGivenInContext: share(c.inContextCorrect, c.inContextCorrect + c.inContextWrong),
    correctGivenMissing: share(c.missingCorrect, c.missingCorrect + c.missingWrong),
    retrievalMisses: share(c.missingWrong, wrong),
    readerMisses: share(c.inContextWrong, wrong),
  };
}

/** Dollars of `tokens` at the model's price (batched tokens at its batch discount); null without a price, 0 without tokens. */
function dollars(tokens: AnswerTokens, model: string | undefined, prices: AnswerLevelOptions['prices']): number | null {
  return dollarsOf(tokens, model === undefined ? undefined : prices?.[model]);
}

function costOf(outcomes: Aligned, models: { reader?: string; judge?: string }, correct: number, prices: AnswerLevelOptions['prices']): AnswerCost {
  let reader: AnswerTokens = { prompt: 0, completion: 0 };
  let judge: AnswerTokens = { prompt: 0, completion: 0 };
  for (const o of outcomes) {
    if (o !== undefined) reader = addTokens(reader, o.answer.tokens);
    if (o?.grade !== undefined) judge = addTokens(judge, o.grade.tokens);
  }
  const readerUsd = dollars(reader, models.reader, prices);
  const judgeUsd = dollars(judge, models.judge, prices);
  const totalUsd = readerUsd === null || judgeUsd === null ? null : readerUsd + judgeUsd;
  return { reader, judge, readerUsd, judgeUsd, totalUsd, usdPerCorrect: totalUsd === null || correct === 0 ? null : totalUsd / correct };
}

/** The models a system's cost is priced by: the configured names, else those its outcomes record. */
function modelsOf(outcomes: Aligned, configured: { reader?: string; judge?: string } | undefined): { reader?: string; judge?: string } {
  const answered = outcomes.find((o) => o?.answer.status === 'answered')?.answer;
  const reader = configured?.reader ?? (answered?.status === 'answered' ? answered.model : undefined);
  const judge = configured?.judge ?? outcomes.find((o) => o?.grade !== undefined)?.grade?.judge;
  return { ...(reader === undefined ? {} : { reader }), ...(judge === undefined ? {} : { judge }) };
}

/** Per system, what its outcomes on the kept questions and on all of them say. */
function systemLevel(
  questions: readonly AnswerQuestion[],
  system: AnsweredSystem,
  outcomes: Aligned,
  kept: readonly number[],
  opts: AnswerLevelOptions,
  level: number,
): AnswerSystemLevel {
  const grades = outcomes.map(gradeOf);
  const graded = grades.filter((g) => g !== undefined).length;
  const correct = grades.filter((g) => g === true).length;
  const keptQuestions = subset(questions, kept);
  const keptOutcomes = subset(outcomes, kept);
  const keptGrades = keptOutcomes.map(gradeOf);
  const keptGraded = keptGrades.some((g) => g !== undefined);
  const models = modelsOf(outcomes, opts.models?.[system.id]);
  const mapping = opts.mapping?.[system.id];
  const variance = judgeVarianceOf(outcomes);
  const attribution = attributionOf(keptQuestions, keptOutcomes);
  return {
    id: system.id,
    source: system.source,
    ...models,
    questions: questions.length,
    graded,
    correct,
    ownAccuracy: accuracyRow('own graded questions', graded, correct, level),
    failures: failuresOf(outcomes),
    ...(mapping === undefined ? {} : { mapping: { unmapped: mapping.unmapped, missing: mapping.missing } }),
    strata: graded === 0 ? [] : strataOf(questions, kept).map((s) => rowOver(s.id, grades, s.indices, level)),
    ...(keptGraded ? { protocol: protocolRows(opts.protocol, keptQuestions, keptGrades, level) } : {}),
    lexical: lexicalMeans(keptOutcomes),
    ...(variance === undefined ? {} : { judgeVariance: variance }),
    ...(attribution === undefined ? {} : { attribution }),
    cost: costOf(outcomes, models, correct, opts.prices),
  };
}

/** One stratum of a pair: McNemar on the kept questions of `indices` that both systems got a grade for. */
function pairRow(stratum: string, a: readonly (boolean | undefined)[], b: readonly (boolean | undefined)[], indices: readonly number[]): AnswerPairRow {
  const both = indices.filter((i) => a[i] !== undefined && b[i] !== undefined);
  const base = both.map((i) => a[i] as boolean);
  const sys = both.map((i) => b[i] as boolean);
  const d = discordance(base, sys);
  const n = both.length;
  const baselineAccuracy = n === 0 ? null : (d.both + d.onlyA) / n;
  const systemAccuracy = n === 0 ? null : (d.both + d.onlyB) / n;
  return {
    stratum,
    n,
    baselineAccuracy,
    systemAccuracy,
    delta: n === 0 ? null : (d.onlyB - d.onlyA) / n,
    both: d.both,
    onlyBaseline: d.onlyA,
    onlySystem: d.onlyB,
    neither: d.neither,
    p: n === 0 ? null : mcnemarExact(d.onlyA, d.onlyB),
    pAdjusted: null,
  };
}

/** Every pair's rows (pooled first, then per stratum) over the kept questions, Holm-corrected over all their p-values as one family. */
function pairsOf(
  questions: readonly AnswerQuestion[],
  kept: readonly number[],
  grades: ReadonlyMap<string, readonly (boolean | undefined)[]>,
  opts: AnswerLevelOptions,
): AnswerPair[] {
  const strata = strataOf(questions, kept);
  const ordered = strata.length > 1 ? [strata[strata.length - 1] as (typeof strata)[number], ...strata.slice(0, -1)] : strata;
  const pairs = opts.pairs.map((p) => {
    const a = grades.get(p.baseline);
    const b = grades.get(p.system);
    if (a === undefined || b === undefined) {
      const unknown = a === undefined ? p.baseline : p.system;
      throw new HarnessError(
        `answer level: the pair ${p.system} vs ${p.baseline} names ${unknown}, which is not an answered system (${[...grades.keys()].join(', ')})`,
      );
    }
    return { baseline: p.baseline, system: p.system, rows: ordered.map((s) => pairRow(s.id, a, b, s.indices)) };
  });
  const tested = pairs.flatMap((p) => p.rows.filter((r) => r.p !== null));
  const adjusted =
    tested.length === 0
      ? []
      : adjustPValues(
          tested.map((r) => r.p as number),
          'holm',
        );
  const at = new Map(tested.map((r, i) => [r, adjusted[i] as number] as const));
  return pairs.map((p) => ({ ...p, rows: p.rows.map((r) => ({ ...r, pAdjusted: at.get(r) ?? null })) }));
}

/** The audit as report.json keeps it: the systems with at least one grade from the audited judge added. */
function auditLevel(audit: AnswerLevelOptions['audit'], systems: readonly AnsweredSystem[]): AnswerJudgeAuditLevel | undefined {
  if (audit === undefined) return undefined;
  const graded = systems.filter((s) => s.outcomes.some((o) => o.grade?.correct !== undefined && o.grade.judge === audit.judge)).map((s) => s.id);
  return { ...audit, systems: graded };
}

/**
 * The answer level of a study: per answered system, accuracy per stratum and by the protocol's aggregates (with
 * Wilson intervals at `opts.level`), lexical means and attribution over the kept questions, its accuracy over
 * its own graded questions, judge variance, failures and cost; per pair in `opts.pairs`, exact McNemar on the
 * kept questions graded for both, Holm-corrected over every pair and stratum. Without any grade there is no
 * accuracy to give: no strata, protocol rows or pairs, only lexical means, failures and cost.
 *
 * @throws HarnessError when an outcome names a question that is not among `questions` (or one twice), a
 *   kept id is not a question, or a pair names a system that was not answered: faults of the stage that called it.
 */
export function answerLevelOf(questions: readonly AnswerQuestion[], systems: readonly AnsweredSystem[], opts: AnswerLevelOptions): AnswerLevel {
  const level = opts.level ?? DEFAULT_LEVEL;
  const aligned = systems.map((s) => align(questions, s));
  const kept = keptIndices(questions, aligned, opts.kept);
  const perSystem = systems.map((s, i) => systemLevel(questions, s, aligned[i] as Aligned, kept, opts, level));
  const grades = new Map(systems.map((s, i) => [s.id, (aligned[i] as Aligned).map(gradeOf)] as const));
  const graded = perSystem.some((s) => s.graded > 0);
  const audit = auditLevel(opts.audit, systems);
  return {
    protocol: opts.protocol,
    level,
    questions: questions.length,
    kept: kept.length,
    systems: perSystem,
    pairs: graded ? pairsOf(questions, kept, grades, opts) : [],
    ...(audit === undefined ? {} : { judgeAudit: audit }),
  };
}
