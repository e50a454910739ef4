import pLimit from 'p-limit';
import type { ChatFn } from '../llm/openai.js';
import { createRng, type Rng } from '../stats/rng.js';
import { wilsonInterval } from '../stats/wilson.js';
import { gradeAnswer } from './grade.js';
import type { AnswerJudgeProfile } from './judges.js';
import type { AnswerGrade, AnswerQuestion, TokenCount } from './types.js';
import type { AnswerProbeRow } from '../decision/answer-level.js';

/**
 * A judge audit probe for answers: an answer made from a question's gold that a sound judge must grade
 * wrong (or, for the control, right). `apply` returns undefined when the probe cannot be built for the
 * question (too few other gold answers to list as candidates).
 */
export interface AnswerProbe {
  readonly id: string;
  /** What the probe does, in words, for the report. */
  readonly change: string;
  /** What a sound judge does with it: the control is to be accepted, every probe rejected. */
  readonly expected: 'accept' | 'reject';
  apply(q: AnswerQuestion, distractors: readonly string[]): string | undefined;
}

/** How many other questions' gold answers the candidates probe lists beside the gold. */
const CANDIDATES = 4;

/** Unrelated sentences the padding probe surrounds the gold with (no question's topic in particular). */
const PADDING = [
  'Weather in the spring tends to change quickly, so it is worth carrying a light jacket.',
  'Many recipes for bread call for flour, water, salt and yeast, and a long rise improves the flavour.',
  'A good night of sleep helps memory, mood and concentration the following day.',
  'Public libraries lend books, films and sometimes tools, usually free of charge.',
  'Regular stretching before and after exercise can reduce the chance of a strain.',
  'Some houseplants need bright light, while others do well in a shaded corner.',
];

/** The gold placed in the middle of the distractors, so neither the first nor the last item gives it away. */
function candidateList(q: AnswerQuestion, distractors: readonly string[]): string | undefined {
  if (distractors.length < 2) return undefined;
  const items = [...distractors];
  items.splice(Math.floor(items.length / 2), 0, q.gold.trim());
  return `It could be any of these: ${items.join('; ')}.`;
}

/**
 * The probes, each of a correct answer or of the question, none of which answers it: a list of candidates
 * with the gold among them (hedging), a blanket "I don't know" (abstaining where the history answers), the
 * gold mentioned in passing inside unrelated text after a refusal (padding), and the gold denied (negation).
 */
export const ANSWER_PROBES: readonly AnswerProbe[] = [
  {
    id: 'candidates',
    change: `the gold listed among ${CANDIDATES} other questions' gold answers as possibilities`,
    expected: 'reject',
    apply: candidateList,
  },
  {
    id: 'dont-know',
    change: 'a blanket "I don\'t know" on a question that has an answer',
    expected: 'reject',
    apply: () => "I don't know.",
  },
  {
    id: 'padding',
    change: 'a refusal to answer, then unrelated text that mentions the gold in passing',
    expected: 'reject',
    apply: (q) =>
      `I cannot tell from what I remember. ${PADDING.slice(0, 3).join(' ')} Something unrelated once mentioned ${q.gold.trim()}. ${PADDING.slice(3).join(' ')}`,
  },
  {
    id: 'negated',
    change: 'the gold, denied',
    expected: 'reject',
    apply: (q) => `It is not ${q.gold.trim()}.`,
  },
];

/** The control the probes are read against: the gold itself, which a judge that rejects everything also fails. */
export const GOLD_CONTROL: AnswerProbe = { id: 'gold', change: 'the gold answer itself (control)', expected: 'accept', apply: (q) => q.gold.trim() };

/** One probe's outcome: how often the judge accepted the probed answer as correct (the report's row, as is). */
export type AnswerProbeResult = AnswerProbeRow;

export interface AuditOptions {
  /** Questions drawn (the same ones for every probe, so the probes compare on the same questions). */
  readonly pairs: number;
  readonly seed: number;
  readonly samples: number;
  readonly temperature: number;
  readonly parseRetries: number;
  readonly judge: string;
}

/**
 * Questions a probe means something for: they have an answer (not abstention), a gold text, and a gold that
 * is an answer rather than a rubric (LongMemEval's preference questions grade against a description).
 */
export function probeable(questions: readonly AnswerQuestion[]): AnswerQuestion[] {
  return questions.filter((q) => !q.abstention && q.gold.trim() !== '' && q.questionType !== 'single-session-preference');
}

/** The first `k` of a seeded shuffle (Fisher-Yates, from the end). */
function draw<T>(rng: Rng, xs: readonly T[], k: number): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = rng.nextInt(i + 1);
    [a[i], a[j]] = [a[j] as T, a[i] as T];
  }
  return a.slice(0, k);
}

/** Up to {@link CANDIDATES} distinct gold answers of other questions, none the same as q's (case-free). */
function distractorsFor(rng: Rng, q: AnswerQuestion, golds: readonly string[]): string[] {
  const own = q.gold.trim().toLowerCase();
  return draw(
    rng,
    golds.filter((g) => g.toLowerCase() !== own),
    CANDIDATES,
  );
}

/** Grades one probed answer as an answer would be graded (through the grade cache in `harness ablate`). */
export type ProbeGrader = (q: AnswerQuestion, answer: string) => Promise<AnswerGrade>;

/** The drawn questions, each with the other questions' gold answers its candidates probe lists. */
type Drawn = readonly { readonly q: AnswerQuestion; readonly distractors: readonly string[] }[];

/** One probe's counts from the grades of its probed answers (undefined: the probe could not be built there). */
function probeResult(probe: AnswerProbe, grades: readonly (AnswerGrade | undefined)[]): AnswerProbeResult {
  const built = grades.filter((g): g is AnswerGrade => g !== undefined);
  const verdicts = built.flatMap((g) => (g.correct === undefined ? [] : [g.correct]));
  const accepted = verdicts.filter(Boolean).length;
  const graded = verdicts.length;
  const { id, change, expected } = probe;
  return {
    probe: id,
    change,
    expected,
    drawn: built.length,
    graded,
    accepted,
    acceptedRate: graded === 0 ? null : accepted / graded,
    interval: graded === 0 ? null : wilsonInterval(accepted, graded),
    failures: built.length - graded,
  };
}

/** The seeded draw: `pairs` probeable questions (xoshiro128**, stream 11), each with its distractors. */
function drawQuestions(questions: readonly AnswerQuestion[], pairs: number, seed: number): { eligible: number; drawn: Drawn } {
  if (!Number.isInteger(pairs) || pairs < 1) throw new RangeError(`auditAnswerJudge: pairs must be a positive integer, got ${pairs}`);
  const pool = probeable(questions);
  const rng = createRng(seed, 11);
  const golds = [...new Map(pool.map((q) => [q.gold.trim().toLowerCase(), q.gold.trim()] as const)).values()];
  const drawn = draw(rng, pool, Math.min(pairs, pool.length)).map((q) => ({ q, distractors: distractorsFor(rng, q, golds) }));
  return { eligible: pool.length, drawn };
}

/** What one audit came to: the questions it could draw from, each probe's counts, and the judge's tokens. */
export interface AnswerAuditRun {
  readonly eligible: number;
  readonly probes: readonly AnswerProbeResult[];
  readonly tokens: TokenCount;
}

/**
 * The answer judge audit through `grade`: `pairs` questions drawn with `seed` from the probeable ones, every
 * probe of {@link ANSWER_PROBES} and then the gold control applied to the same questions, each probed answer
 * graded as an answer is. Requests run `concurrency` at a time (1: in probe then question order); the counts do
 * not depend on the order they finish in.
 */
export async function runAnswerProbes(
  grade: ProbeGrader,
  questions: readonly AnswerQuestion[],
  opts: { readonly pairs: number; readonly seed: number; readonly concurrency?: number },
): Promise<AnswerAuditRun> {
  const { eligible, drawn } = drawQuestions(questions, opts.pairs, opts.seed);
  const limit = pLimit(opts.concurrency ?? 1);
  const probes = [...ANSWER_PROBES, GOLD_CONTROL];
  const grades = await Promise.all(
    probes.map((probe) =>
      Promise.all(
        drawn.map(({ q, distractors }) => {
          const answer = probe.apply(q, distractors);
          return answer === undefined ? undefined : limit(() => grade(q, answer));
        }),
      ),
    ),
  );
  const all = grades.flat().filter((g): g is AnswerGrade => g !== undefined);
  const tokens = all.reduce((t, g) => ({ prompt: t.prompt + g.tokens.prompt, completion: t.completion + g.tokens.completion }), { prompt: 0, completion: 0 });
  return { eligible, probes: probes.map((p, i) => probeResult(p, grades[i] ?? [])), tokens };
}

/**
 * The answer judge audit with the judge asked directly (no cache): `pairs` questions drawn with `seed`
 * (xoshiro128**, stream 11) from the probeable ones, each probe of {@link ANSWER_PROBES} applied to them and
 * graded by the judge as an answer would be, then the gold control. A judge that accepts a probe often grades
 * hedging, refusals or padding as knowledge.
 */
export async function auditAnswerJudge(
  profile: AnswerJudgeProfile,
  chat: ChatFn,
  questions: readonly AnswerQuestion[],
  opts: AuditOptions,
): Promise<AnswerProbeResult[]> {
  const run = await runAnswerProbes((q, answer) => gradeAnswer(profile, chat, q, answer, opts), questions, opts);
  return [...run.probes];
}
