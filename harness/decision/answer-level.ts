import type { TokenCount } from '../llm/price.js';
import { ANSWER_MEASURE_NAMES } from '../metrics/measure.js';

/**
 * The answer level as report.json carries it (CONTEXT.md, "Answer level"): per answered system, accuracy with
 * Wilson intervals per stratum and by its protocol's own aggregates, the lexical means, the judge's variance
 * over repeated samples, the link between retrieval misses and wrong answers, what failed and what it cost;
 * and per compared pair an exact McNemar test on the questions both got a grade for. Plain, serializable data:
 * `harness/answer/section.ts` computes it, the report renders it, and the warning rules below read it.
 *
 * The decision layer cannot import the answer stage (a layer above it), so these types restate the few
 * shapes they share with `harness/answer/types.ts` (the protocol names, token counts).
 */

/** The protocol the questions come from (`AnswerProtocol` of the answer stage): it picks the aggregates. */
export type AnswerLevelProtocol = 'longmemeval' | 'locomo' | 'generic';

/** Above this mean flip rate the judge's samples disagree often enough to move accuracy (a warning). */
export const HIGH_FLIP_RATE = 0.05;

/** An accuracy: `correct` of `n` graded questions, with its Wilson interval; both null when n is 0. */
export interface AccuracyRow {
  /** What the row counts: a stratum, a question type, `1 multi-hop`, `overall on categories 1-4`. */
  readonly label: string;
  readonly n: number;
  readonly correct: number;
  readonly accuracy: number | null;
  readonly interval: readonly [number, number] | null;
}

/**
 * A protocol's own aggregates, each labelled as the protocol reports it. LongMemEval: per question type,
 * task-averaged (the mean of the type means, no interval: it is not a proportion), overall (every question),
 * abstention (the `_abs` questions) and overall without them. LoCoMo: per category 1-5 with its name, overall
 * on categories 1-4 (mem0's protocol), and with category 5 when there is any. Generic: with and without the
 * abstention questions.
 */
export type ProtocolAccuracy =
  | {
      readonly protocol: 'longmemeval';
      readonly perType: readonly AccuracyRow[];
      readonly taskAveraged: number | null;
      readonly overall: AccuracyRow;
      readonly abstention: AccuracyRow;
      readonly withoutAbstention: AccuracyRow;
    }
  | { readonly protocol: 'locomo'; readonly perCategory: readonly AccuracyRow[]; readonly overall: AccuracyRow; readonly withAdversarial?: AccuracyRow }
  | { readonly protocol: 'generic'; readonly withAbstention: AccuracyRow; readonly withoutAbstention: AccuracyRow };

/**
 * Questions a system has no grade for, by cause: counted here and left out of every accuracy, never graded
 * as wrong. `ungraded` answers are no failure: nobody judged them (no judge configured and none recorded).
 */
export interface AnswerFailures {
  /** The reader gave no answer (an error, a refusal of the endpoint, a timeout). */
  readonly reader: number;
  /** Answered, but no judge sample could be read as a grade. */
  readonly judge: number;
  /** Not sent to the reader or the judge: sensitive memories, and a reader or judge that is not local. */
  readonly sensitive: number;
  /** Questions with no outcome at all. */
  readonly missing: number;
  readonly ungraded: number;
}

/** How the rows of an answers file met the eval set's questions (`kind: answers-file` systems only). */
export interface AnswerMapping {
  /** Rows that map to no question. */
  readonly unmapped: number;
  /** Questions no row maps to. */
  readonly missing: number;
}

/** Mean of one lexical measure (`F1-LoCoMo`, `F1-set` mem0's, `EM`) over the answers that have it. */
export interface LexicalMean {
  readonly measure: string;
  readonly n: number;
  readonly mean: number;
}

/** How much the judge's repeated samples of one answer disagree. */
export interface JudgeVariance {
  /** The most samples any answer got (the configured `samples`). */
  readonly samples: number;
  /** Graded answers with at least two graded samples: the ones variance can be read from. */
  readonly answers: number;
  /** Mean over those answers of the share of samples that disagree with the majority; null when none. */
  readonly meanFlipRate: number | null;
  /** Those answers whose samples do not all agree, and their share. */
  readonly disagreeing: number;
  readonly disagreeingShare: number | null;
  /** Samples that could not be read as a grade (the answer's grade is the majority of the others). */
  readonly failedSamples: number;
  /** The rule that makes one grade of the samples, in words. */
  readonly rule: string;
}

/**
 * Evidence in the reader's context against the answer's grade, over the graded questions that have evidence
 * ids: the 2x2 counts, the accuracy on each side, and the wrong answers split into retrieval misses (the
 * evidence never reached the reader) and reader misses (it did, and the answer is still wrong).
 */
export interface Attribution {
  readonly n: number;
  readonly inContextCorrect: number;
  readonly inContextWrong: number;
  readonly missingCorrect: number;
  readonly missingWrong: number;
  /** P(correct | evidence in context) and P(correct | evidence missing); null without such questions. */
  readonly correctGivenInContext: number | null;
  readonly correctGivenMissing: number | null;
  /** Shares of the wrong answers; null when no answer is wrong. */
  readonly retrievalMisses: number | null;
  readonly readerMisses: number | null;
  /** Graded questions left out: no evidence ids, or no record of the context. */
  readonly withoutEvidence: number;
}

/** Prompt and completion tokens summed over a system's requests (`batched`: the part sent through a batch API). */
export type AnswerTokens = TokenCount;

/**
 * Tokens of the reader and of the judge over every question (failed requests included: they were paid for),
 * and dollars where the config's price table names the model (USD per million tokens); null where it does not.
 */
export interface AnswerCost {
  readonly reader: AnswerTokens;
  readonly judge: AnswerTokens;
  readonly readerUsd: number | null;
  readonly judgeUsd: number | null;
  /** Reader and judge dollars; null when a part that used tokens has no price. */
  readonly totalUsd: number | null;
  readonly usdPerCorrect: number | null;
}

/** One answered system at the answer level. */
export interface AnswerSystemLevel {
  readonly id: string;
  /** How it answered: its own top-k (`reader`), the whole history (`full-context`), or an answers file. */
  readonly source: 'reader' | 'full-context' | 'answers-file';
  /** The reader's model and the judge (`profile/model`, or `recorded:<name>` for grades an answers file holds). */
  readonly reader?: string;
  readonly judge?: string;
  readonly questions: number;
  /** Questions this system has a grade for, kept or not, and how many of them are right. */
  readonly graded: number;
  readonly correct: number;
  /**
   * `correct` of `graded` with its interval: the system's accuracy over its own graded questions. It differs
   * from the kept-question rows when another system failed on a question this one was graded on; the gate
   * and the summary never read it.
   */
  readonly ownAccuracy: AccuracyRow;
  readonly failures: AnswerFailures;
  readonly mapping?: AnswerMapping;
  /**
   * Accuracy per stratum over the kept questions ({@link AnswerLevel.kept}), in the eval set's order, then the
   * pooled `all` row when there are several strata; empty when the system has no grade at all.
   */
  readonly strata: readonly AccuracyRow[];
  /** Over the kept questions; absent when none of them got a grade. */
  readonly protocol?: ProtocolAccuracy;
  /** Over the kept questions: the means the summary gives for the lexical measures it reports. */
  readonly lexical: readonly LexicalMean[];
  /** Over every graded answer (a property of the judge, not of the kept questions); absent when none was graded. */
  readonly judgeVariance?: JudgeVariance;
  /** Over the kept questions; absent when none has a grade, evidence ids and a record of its context. */
  readonly attribution?: Attribution;
  readonly cost: AnswerCost;
}

/** One stratum (or the pooled row) of a pair's McNemar test. */
export interface AnswerPairRow {
  readonly stratum: string;
  /** Kept questions graded for both systems. */
  readonly n: number;
  readonly baselineAccuracy: number | null;
  readonly systemAccuracy: number | null;
  /** systemAccuracy - baselineAccuracy over the same n questions. */
  readonly delta: number | null;
  readonly both: number;
  /** McNemar's b and c: questions only the baseline, or only the system, answered correctly. */
  readonly onlyBaseline: number;
  readonly onlySystem: number;
  readonly neither: number;
  /** Exact two-sided McNemar p (a binomial test of b against b + c); null when n is 0. */
  readonly p: number | null;
  /** p after Holm's correction over every McNemar test of the section (one family). */
  readonly pAdjusted: number | null;
}

/** A compared pair of answered systems: the pooled row first, then one row per stratum when there are several. */
export interface AnswerPair {
  readonly baseline: string;
  readonly system: string;
  readonly rows: readonly AnswerPairRow[];
}

/**
 * One answer probe of the judge audit (`auditAnswerJudge`): how often the configured answer judge accepted a
 * probed answer as correct. `expected: 'reject'` for a probe (hedging, refusal, padding, negation), `accept` for
 * the gold control.
 */
export interface AnswerProbeRow {
  readonly probe: string;
  readonly change: string;
  readonly expected: 'accept' | 'reject';
  /** Drawn questions the probe could be built for. */
  readonly drawn: number;
  /** Probed answers the judge gave a verdict on, and how many of them it accepted. */
  readonly graded: number;
  readonly accepted: number;
  /** accepted / graded; null when nothing was graded. */
  readonly acceptedRate: number | null;
  /** 95% Wilson interval of acceptedRate; null when nothing was graded. */
  readonly interval: readonly [number, number] | null;
  /** Probed answers with no verdict: counted apart, never as rejected. */
  readonly failures: number;
}

/**
 * The answer judge audit (`answer.judge.audit`): the probes run against the configured answer judge after
 * grading, the threshold they are read against, and which answered systems that judge graded (the others'
 * grades were recorded by another tool, so its faults do not reach them).
 */
export interface AnswerJudgeAuditLevel {
  /** The judge as its grades name it (`profile/model`). */
  readonly judge: string;
  readonly pairs: number;
  readonly seed: number;
  /** A probe accepted in more than this share, or the gold control in less than 1 minus it, is a finding. */
  readonly maxAcceptRate: number;
  /** Questions the probes could draw from: with an answer that is not a rubric, no abstention, no sensitive evidence. */
  readonly eligible: number;
  readonly probes: readonly AnswerProbeRow[];
  /** Judge tokens the audit's requests took (served from the cache or not: the cache keeps each entry's tokens). */
  readonly tokens: AnswerTokens;
  /** Answered systems with at least one grade from this judge. */
  readonly systems: readonly string[];
}

/** The answer level of a report (`ReportInput.answerLevel`). */
export interface AnswerLevel {
  readonly protocol: AnswerLevelProtocol;
  /** Confidence level of every Wilson interval. */
  readonly level: number;
  /** Questions of the eval set that were put to every system. */
  readonly questions: number;
  /**
   * The kept questions: those every answered system has a usable outcome for (an answer, and a grade when
   * `Acc` is measured). The report's queries, so the summary, comparisons.csv and the gate score exactly
   * these; every accuracy table of the section is over them too.
   */
  readonly kept: number;
  readonly systems: readonly AnswerSystemLevel[];
  readonly pairs: readonly AnswerPair[];
  /** Present when `answer.judge.audit` ran the probes. */
  readonly judgeAudit?: AnswerJudgeAuditLevel;
}

/** Whether any system of the level has a grade: without one there is no accuracy to show, only lexical means. */
export function hasGrades(level: Pick<AnswerLevel, 'systems'>): boolean {
  return level.systems.some((s) => s.graded > 0);
}

/** What the audit found: probes the judge accepted above the threshold, and a gold control it accepted below 1 minus it. */
export interface AnswerAuditFindings {
  readonly fooled: readonly AnswerProbeRow[];
  readonly goldRejected: readonly AnswerProbeRow[];
}

/** The audit's findings under its own `maxAcceptRate` (rows with nothing graded say nothing, either way). */
export function answerAuditFindings(audit: AnswerJudgeAuditLevel): AnswerAuditFindings {
  const rated = audit.probes.filter((p) => p.acceptedRate !== null);
  return {
    fooled: rated.filter((p) => p.expected === 'reject' && (p.acceptedRate as number) > audit.maxAcceptRate),
    goldRejected: rated.filter((p) => p.expected === 'accept' && (p.acceptedRate as number) < 1 - audit.maxAcceptRate),
  };
}

/**
 * A caveat as the warning rules return it: `ReportWarning` of types.ts, restated because types.ts imports this
 * file (ReportInput.answerLevel) and an import back would close a cycle.
 */
interface AnswerWarning {
  readonly code: string;
  readonly severity: 'warning' | 'serious';
  readonly message: string;
  readonly subject: string;
  readonly gate: boolean;
}

/** What the answer warnings read of a report: its answer level and the gate's configuration. */
interface AnswerWarningInput {
  readonly answerLevel?: AnswerLevel;
  readonly gateResult?: { readonly config: { readonly measure: string; readonly baseline: string; readonly candidate: string } };
}

/** Questions a system has no grade for because something failed (ungraded answers are not failures). */
export function failureCount(f: AnswerFailures): number {
  return f.reader + f.judge + f.sensitive + f.missing;
}

/** Runs the gate compares, when it decides on an answer measure: only then do answer caveats bear on it. */
function answerGateRuns(data: AnswerWarningInput): Set<string> {
  const g = data.gateResult?.config;
  return new Set(g && (ANSWER_MEASURE_NAMES as readonly string[]).includes(g.measure) ? [g.baseline, g.candidate] : []);
}

function listed(items: readonly string[]): string {
  return items.length > 3 ? `${items.slice(0, 3).join('; ')}; and ${items.length - 3} more` : items.join('; ');
}

function failureText(s: AnswerSystemLevel): string {
  const f = s.failures;
  const parts = [
    f.reader > 0 ? `${f.reader} reader` : '',
    f.judge > 0 ? `${f.judge} judge` : '',
    f.sensitive > 0 ? `${f.sensitive} skipped as sensitive` : '',
    f.missing > 0 ? `${f.missing} with no answer row` : '',
    (s.mapping?.unmapped ?? 0) > 0 ? `${s.mapping?.unmapped} answers-file rows mapped to no question` : '',
  ].filter(Boolean);
  return `${s.id} (${parts.join(', ')})`;
}

/**
 * A warning (not serious) about some systems: named in its subject, on the gate when one of them is. The code is
 * written `code: '…'` at each call, where warnings.test.ts finds every code the rules emit.
 */
function systemsWarning(w: Pick<AnswerWarning, 'code' | 'message'>, systems: readonly AnswerSystemLevel[], onGate: ReadonlySet<string>): AnswerWarning {
  return { code: w.code, severity: 'warning', subject: systems.map((s) => s.id).join(', '), gate: systems.some((s) => onGate.has(s.id)), message: w.message };
}

/**
 * Systems with questions that failed (reader, judge, sensitive, missing rows) or answers-file rows that map to
 * nothing: their accuracies are over fewer questions than the eval set holds, and a comparison between two of
 * them is over the questions both got a grade for. One warning for every such system.
 */
function answerFailures(level: AnswerLevel, onGate: ReadonlySet<string>): AnswerWarning[] {
  const failing = level.systems.filter((s) => failureCount(s.failures) > 0 || (s.mapping?.unmapped ?? 0) > 0);
  if (failing.length === 0) return [];
  const total = failing.reduce((n, s) => n + failureCount(s.failures), 0);
  return [
    systemsWarning(
      {
        code: 'answer-failures',
        message:
          `${total} of ${level.questions * level.systems.length} answers have no usable outcome because something failed: ${listed(failing.map(failureText))}; ` +
          `they are counted apart, never graded wrong, and their questions are left out of every system's answer measures (${level.kept} of ${level.questions} questions kept, so comparisons stay paired)`,
      },
      failing,
      onGate,
    ),
  ];
}

/** Systems whose judge's repeated samples disagree with their majority more often than HIGH_FLIP_RATE. */
function judgeFlipRate(level: AnswerLevel, onGate: ReadonlySet<string>): AnswerWarning[] {
  const high = level.systems.filter((s) => (s.judgeVariance?.meanFlipRate ?? 0) > HIGH_FLIP_RATE);
  if (high.length === 0) return [];
  const describe = (s: AnswerSystemLevel): string => {
    const v = s.judgeVariance as JudgeVariance;
    return `${s.id}: mean flip rate ${((v.meanFlipRate as number) * 100).toFixed(1)}%, ${v.disagreeing} of ${v.answers} answers split over ${v.samples} samples`;
  };
  return [
    systemsWarning(
      {
        code: 'judge-flip-rate',
        message:
          `the answer judge disagrees with itself on repeated samples above ${(HIGH_FLIP_RATE * 100).toFixed(0)}% (${listed(high.map(describe))}): ` +
          'the majority decides each grade, and an accuracy difference no larger than the share of split answers may be judge noise',
      },
      high,
      onGate,
    ),
  ];
}

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;

function probeText(p: AnswerProbeRow): string {
  return `${p.probe} accepted in ${pct(p.acceptedRate as number)} of ${p.graded}`;
}

/**
 * The answer judge audit's findings: the configured judge accepted a probe (hedging, refusal, padding, a denied
 * gold) above `maxAcceptRate`, or the gold control below 1 minus it. Serious, and on the gate, when the gate
 * decides on `Acc` and this judge graded a system it compares: then the verdict names it among its qualifiers
 * (ADR 0044), since the accuracies it compares come from a judge that rewards non-answers or refuses right ones.
 */
function answerJudgeAudit(level: AnswerLevel, gate: AnswerWarningInput['gateResult']): AnswerWarning[] {
  const audit = level.judgeAudit;
  if (audit === undefined) return [];
  const { fooled, goldRejected } = answerAuditFindings(audit);
  if (fooled.length === 0 && goldRejected.length === 0) return [];
  const g = gate?.config;
  const onGate = g !== undefined && g.measure === 'Acc' && (audit.systems.includes(g.baseline) || audit.systems.includes(g.candidate));
  const parts = [
    fooled.length === 0 ? '' : `${fooled.map(probeText).join(', ')} probed answers (above ${pct(audit.maxAcceptRate)}): it grades non-answers as right`,
    goldRejected.length === 0
      ? ''
      : `the gold answer itself ${goldRejected.map(probeText).join(', ')} times (below ${pct(1 - audit.maxAcceptRate)}): it grades right answers wrong`,
  ].filter(Boolean);
  const graded = audit.systems.length === 0 ? 'no answered system (every grade was recorded by another tool)' : audit.systems.join(', ');
  return [
    {
      code: 'answer-judge-audit',
      severity: onGate ? 'serious' : 'warning',
      subject: audit.judge,
      gate: onGate,
      message:
        `the answer judge ${audit.judge} failed its audit (answer.judge.audit.maxAcceptRate ${pct(audit.maxAcceptRate)}): ${parts.join('; ')}. ` +
        `It graded ${graded}; their Acc carries that bias, so validate the judge against human labels of answers (docs/answer-evaluation.md) or change its model or prompt`,
    },
  ];
}

/** The answer level's caveats (a warning rule: see `warningRules` in warnings.ts); none without an answer level. */
export function answerLevelWarnings(data: AnswerWarningInput): AnswerWarning[] {
  const level = data.answerLevel;
  if (level === undefined) return [];
  const onGate = answerGateRuns(data);
  return [...answerJudgeAudit(level, data.gateResult), ...answerFailures(level, onGate), ...judgeFlipRate(level, onGate)];
}
