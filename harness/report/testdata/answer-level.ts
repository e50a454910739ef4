import { SKIPPED_SENSITIVE } from '../../answer/section.js';
import type { AnswerGrade, AnsweredSystem, AnswerQuestion, GradeSample, QuestionOutcome } from '../../answer/types.js';
import type { AnswerJudgeAuditLevel, AnswerProbeRow } from '../../decision/answer-level.js';
import { wilsonInterval } from '../../stats/wilson.js';

/**
 * Hand-made answered systems for the answer level's tests (no LLM): 8 generic questions in two strata, three
 * systems whose outcomes are written one character per question, so every count in the tests is read off the
 * strings below.
 *
 * Marks: `C` correct, `W` wrong, `R` reader failed, `J` judge failed (no sample readable), `S` skipped as
 * sensitive, `U` answered and not judged, `-` no outcome. Samples (bm25 only): one string per question, `c` /
 * `w` a graded sample, `x` an unreadable one. Evidence in context: `y`, `n`, `.` unknown.
 *
 * | q  | stratum    | abstention | evidence | bm25 | samples | ctx | dense | ctx | mem0 (answers file) |
 * | q1 | single-hop | no         | d1       | C    | ccc     | y   | C     | y   | C                   |
 * | q2 | single-hop | no         | d2       | W    | wcw     | n   | C     | y   | C                   |
 * | q3 | single-hop | no         | d3       | C    | ccc     | y   | C     | y   | C                   |
 * | q4 | single-hop | yes        | (none)   | C    | cwc     | .   | W     | .   | C                   |
 * | q5 | multi-hop  | no         | d5       | W    | www     | n   | C     | y   | C                   |
 * | q6 | multi-hop  | no         | d6       | W    | wwx     | y   | W     | y   | W                   |
 * | q7 | multi-hop  | no         | d7       | R    |         | .   | S     | .   | -                   |
 * | q8 | multi-hop  | no         | d8       | C    | ccc     | n   | J     | y   | C                   |
 */

export const ANSWER_QUESTIONS: readonly AnswerQuestion[] = Array.from({ length: 8 }, (_, i) => ({
  id: `q${i + 1}`,
  text: `question ${i + 1}`,
  gold: `gold ${i + 1}`,
  stratum: i < 4 ? 'single-hop' : 'multi-hop',
  abstention: i === 3,
  evidence: i === 3 ? [] : [`d${i + 1}`],
}));

const READER_TOKENS = { prompt: 100, completion: 10 };

/** A grade from sample marks (`c`, `w`, `x`): the majority of the graded ones, a tie wrong, as the stage grades. */
export function gradeOf(samples: string, judge: string, tokensPerSample = { prompt: 50, completion: 1 }): AnswerGrade {
  const parsed: GradeSample[] = [...samples].map((s) =>
    s === 'x' ? { status: 'failed', reason: 'unreadable reply' } : { status: 'graded', correct: s === 'c', reply: s === 'c' ? 'yes' : 'no' },
  );
  const read = parsed.flatMap((s) => (s.status === 'graded' ? [s.correct] : []));
  const yes = read.filter(Boolean).length;
  const correct = read.length === 0 ? undefined : yes > read.length - yes;
  const minority = correct === undefined ? 0 : read.filter((r) => r !== correct).length;
  return {
    ...(correct === undefined ? {} : { correct }),
    samples: parsed,
    flipRate: read.length === 0 ? 0 : minority / read.length,
    tokens: { prompt: tokensPerSample.prompt * samples.length, completion: tokensPerSample.completion * samples.length },
    judge,
  };
}

/** One outcome from its mark, its samples (one by default) and its evidence-in-context mark. */
export function outcomeOf(
  id: string,
  mark: string,
  opts: { samples?: string; ctx?: string; judge?: string; lexical?: Readonly<Record<string, number>>; tokens?: boolean } = {},
): QuestionOutcome | undefined {
  const tokens = opts.tokens === false ? { prompt: 0, completion: 0 } : READER_TOKENS;
  const judge = opts.judge ?? 'binary/judge-m';
  const ctx = opts.ctx === 'y' ? { evidenceInContext: true } : opts.ctx === 'n' ? { evidenceInContext: false } : {};
  const answered = { status: 'answered', text: `answer to ${id}`, tokens, model: 'reader-m', context: [] } as const;
  const lexical = opts.lexical === undefined ? {} : { lexical: opts.lexical };
  const gradeTokens = opts.tokens === false ? { prompt: 0, completion: 0 } : undefined;
  switch (mark) {
    case '-':
      return undefined;
    case 'R':
      return { questionId: id, answer: { status: 'failed', reason: 'HTTP 500 from the reader', tokens: { prompt: 100, completion: 0 } } };
    case 'S':
      return { questionId: id, answer: { status: 'failed', reason: `${SKIPPED_SENSITIVE}: the reader is not local`, tokens: { prompt: 0, completion: 0 } } };
    case 'U':
      return { questionId: id, answer: answered, ...lexical, ...ctx };
    case 'J':
      return { questionId: id, answer: answered, grade: gradeOf(opts.samples ?? 'x', judge, gradeTokens), ...lexical, ...ctx };
    default:
      return { questionId: id, answer: answered, grade: gradeOf(opts.samples ?? mark.toLowerCase(), judge, gradeTokens), ...lexical, ...ctx };
  }
}

/** A system from one mark per question, with optional per-question samples and evidence-in-context marks. */
export function systemOf(
  id: string,
  source: AnsweredSystem['source'],
  marks: string,
  opts: { samples?: readonly string[]; ctx?: string; judge?: string; lexical?: readonly Readonly<Record<string, number>>[]; tokens?: boolean } = {},
): AnsweredSystem {
  const outcomes = [...marks].flatMap((mark, i) => {
    const o = outcomeOf(`q${i + 1}`, mark, {
      ...(opts.samples?.[i] ? { samples: opts.samples[i] } : {}),
      ...(opts.ctx ? { ctx: opts.ctx[i] as string } : {}),
      ...(opts.judge ? { judge: opts.judge } : {}),
      ...(opts.lexical?.[i] ? { lexical: opts.lexical[i] } : {}),
      ...(opts.tokens === undefined ? {} : { tokens: opts.tokens }),
    });
    return o === undefined ? [] : [o];
  });
  return { id, source, outcomes };
}

export const ANSWERED_SYSTEMS: readonly AnsweredSystem[] = [
  systemOf('bm25', 'reader', 'CWCCWWRC', { samples: ['ccc', 'wcw', 'ccc', 'cwc', 'www', 'wwx', '', 'ccc'], ctx: 'yny.ny.n' }),
  systemOf('dense', 'reader', 'CCCWCWSJ', {
    ctx: 'yyy.yy.y',
    lexical: [
      { 'F1-LoCoMo': 1, EM: 1 },
      { 'F1-LoCoMo': 0.5, EM: 0 },
      { 'F1-LoCoMo': 1, EM: 1 },
      { 'F1-LoCoMo': 0, EM: 0 },
      { 'F1-LoCoMo': 0.5, EM: 0 },
      { 'F1-LoCoMo': 0, EM: 0 },
      {},
      { 'F1-LoCoMo': 0.25, EM: 0 },
    ],
  }),
  systemOf('mem0', 'answers-file', 'CCCCCW-C', { judge: 'recorded:mem0', tokens: false }),
];

/** The options of the fixture's answer level: two pairs against bm25, prices for the reader and judge models. */
export const ANSWER_OPTIONS = {
  protocol: 'generic',
  pairs: [
    { baseline: 'bm25', system: 'dense' },
    { baseline: 'bm25', system: 'mem0' },
  ],
  prices: { 'reader-m': { input: 1, output: 2 }, 'judge-m': { input: 0.5, output: 1 } },
  models: { bm25: { reader: 'reader-m', judge: 'judge-m' }, dense: { reader: 'reader-m', judge: 'judge-m' } },
  mapping: { mem0: { unmapped: 2, missing: 1 } },
} as const;

/** A probe row of an audit fixture: `accepted` of `graded`, with the Wilson interval the audit computes. */
function probeRow(probe: string, expected: 'accept' | 'reject', graded: number, accepted: number): AnswerProbeRow {
  return {
    probe,
    change: `the ${probe} probe`,
    expected,
    drawn: graded + 1,
    graded,
    accepted,
    acceptedRate: graded === 0 ? null : accepted / graded,
    interval: graded === 0 ? null : wilsonInterval(accepted, graded),
    failures: 1,
  };
}

/**
 * The answer judge audit of `binary/judge-m` (bm25's and dense's judge), over 10 questions: `sound` rejects
 * every probe and accepts the gold; `fooled` accepts the candidates list in 6 of 10 and the padding in 3 of 10
 * (above 0.2), and the gold in only 7 of 10 (below 0.8).
 */
export function auditOf(kind: 'sound' | 'fooled'): Omit<AnswerJudgeAuditLevel, 'systems'> {
  const fooled = kind === 'fooled';
  return {
    judge: 'binary/judge-m',
    pairs: 10,
    seed: 1,
    maxAcceptRate: 0.2,
    eligible: 7,
    probes: [
      probeRow('candidates', 'reject', 10, fooled ? 6 : 0),
      probeRow('dont-know', 'reject', 10, fooled ? 2 : 0),
      probeRow('padding', 'reject', 10, fooled ? 3 : 1),
      probeRow('negated', 'reject', 0, 0),
      probeRow('gold', 'accept', 10, fooled ? 7 : 10),
    ],
    tokens: { prompt: 2000, completion: 40 },
  };
}
