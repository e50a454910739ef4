import { MIN_PPI_LABELS } from '../stats/ppi.js';
import { createRng, type Rng } from '../stats/rng.js';
import type { AnswerKappaItem } from './answers-source.js';
import { allocate, defaultQuerySampleSize } from './sample.js';

/** How a new answer kappa session samples questions. */
export interface AnswerSampleOptions {
  /** Questions in all; default {@link defaultAnswerQuestions}. */
  readonly questions?: number;
  /** Exact question counts for some strata (capped at what each holds); the others share the rest. */
  readonly perStratum?: Readonly<Record<string, number>>;
  /** Strata weighted up in the allocation; default none (every stratum at 1). */
  readonly oversample?: Readonly<Record<string, number>>;
  readonly seed: number;
}

/** Fisher-Yates in place. */
function shuffled<T>(xs: T[], rng: Rng): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = rng.nextInt(i + 1);
    [xs[i], xs[j]] = [xs[j] as T, xs[i] as T];
  }
  return xs;
}

/**
 * The default sample's size per stratum: the relevance by-query default (20% of the questions, at least 25) allocated
 * over the strata by their question counts, each stratum then raised to the PPI label floor ({@link MIN_PPI_LABELS},
 * or all it holds), so a finished default session can correct the accuracy difference in every stratum.
 */
export function defaultAnswerQuestions(held: ReadonlyMap<string, number>, weightOf: (stratum: string) => number = () => 1): Map<string, number> {
  const total = [...held.values()].reduce((a, b) => a + b, 0);
  const take = allocate(held, defaultQuerySampleSize(total), weightOf);
  for (const [s, n] of held) take.set(s, Math.max(take.get(s) ?? 0, Math.min(n, MIN_PPI_LABELS)));
  return take;
}

/**
 * A new answer kappa session's items: a stratified sample of QUESTIONS (allocated as the relevance sample allocates,
 * by largest remainder over the strata's question counts, `perStratum` fixed), each with every system's answer, so
 * the labels give each labelled question's human accuracy for every system (what PPI on an accuracy difference
 * reads). The questions come in a shuffled order, so a session stopped early covers every stratum, and each
 * question's answers in a shuffled order, so their place says nothing of which system gave them. Deterministic
 * for a seed (xoshiro128**, stream 9).
 */
export function answerSample(answers: readonly AnswerKappaItem[], opts: AnswerSampleOptions): AnswerKappaItem[] {
  const byQuestion = new Map<string, AnswerKappaItem[]>();
  for (const a of answers) byQuestion.set(a.questionId, [...(byQuestion.get(a.questionId) ?? []), a]);
  const byStratum = new Map<string, string[]>();
  for (const [q, items] of byQuestion) {
    const s = (items[0] as AnswerKappaItem).stratum;
    byStratum.set(s, [...(byStratum.get(s) ?? []), q]);
  }
  const held = new Map([...byStratum].map(([s, qs]) => [s, qs.length] as const));
  const weightOf = (s: string) => opts.oversample?.[s] ?? 1;
  const fixed = new Map(Object.entries(opts.perStratum ?? {}).filter(([s]) => byStratum.has(s)));
  const take =
    opts.questions === undefined && fixed.size === 0
      ? defaultAnswerQuestions(held, weightOf)
      : allocate(held, opts.questions ?? defaultQuerySampleSize(byQuestion.size), weightOf, fixed);
  const rng = createRng(opts.seed, 9);
  const chosen = [...byStratum].flatMap(([s, qs]) => shuffled([...qs], rng).slice(0, take.get(s) ?? 0));
  return shuffled(chosen, rng).flatMap((q) => shuffled([...(byQuestion.get(q) as AnswerKappaItem[])], rng));
}
