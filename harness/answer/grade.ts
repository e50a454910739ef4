import { addTokens, tokensOf } from '../llm/price.js';
import type { ChatFn, Decoding } from '../llm/types.js';
import type { AnswerJudgeProfile } from './judges.js';
import type { AnswerGrade, AnswerQuestion, GradeSample, TokenCount } from './types.js';

export interface GradeOptions {
  /** Replies asked per answer; the grade is their majority. */
  readonly samples: number;
  readonly temperature: number;
  /** Further requests after a reply that cannot be read, before the sample counts as failed. */
  readonly parseRetries: number;
  /** Who grades, as the grade records it (`profile/model`). */
  readonly judge: string;
  /** The index of the first sample (a grader asking sample n alone): samples are told apart in a batch by it. */
  readonly firstSample?: number;
}

/** Tokens added up over every request of one grade, retries included: they were paid for. */
class TokenSum {
  value: TokenCount = { prompt: 0, completion: 0 };
}

/** The prompt sent after an unreadable reply: the original, the reply, and the profile's format instruction. */
export function reaskPrompt(prompt: string, reply: string, reask: string | undefined): string {
  if (reask === undefined) return prompt;
  return `${prompt}\n\nYour previous reply was:\n${reply}\n\nIt could not be read. ${reask}`;
}

/**
 * One sample: a reply the profile can read, asking again (with its format instruction) up to `parseRetries`
 * times after one it cannot. A request that fails (after the chat client's own retries) fails the sample with
 * the client's reason, which names no key. The failed reason for unreadable replies does not quote them: a
 * reply may repeat the answer, and the answer may come from a sensitive memory.
 */
async function sample(
  profile: AnswerJudgeProfile,
  chat: ChatFn,
  prompt: string,
  decoding: Decoding,
  parseRetries: number,
  tokens: TokenSum,
  tag: string,
): Promise<GradeSample> {
  let ask = prompt;
  for (let attempt = 0; attempt <= parseRetries; attempt++) {
    let content: string;
    try {
      const reply = await chat(ask, decoding, tag);
      tokens.value = addTokens(tokens.value, tokensOf(reply));
      content = reply.content;
    } catch (err) {
      return { status: 'failed', reason: err instanceof Error ? err.message : String(err) };
    }
    const correct = profile.parse(content);
    if (correct !== undefined) return { status: 'graded', correct, reply: content };
    ask = reaskPrompt(prompt, content, profile.reask);
  }
  const n = parseRetries + 1;
  return { status: 'failed', reason: `no ${profile.id} verdict could be read in ${n} repl${n === 1 ? 'y' : 'ies'}` };
}

/**
 * The majority of the graded samples (a tie counts as wrong, so more samples never make a doubtful answer
 * correct) and the share of graded samples that disagree with it. No graded sample: no verdict.
 */
export function majority(samples: readonly GradeSample[]): { readonly correct?: boolean; readonly flipRate: number } {
  const graded = samples.flatMap((s) => (s.status === 'graded' ? [s.correct] : []));
  if (graded.length === 0) return { flipRate: 0 };
  const yes = graded.filter((c) => c).length;
  const correct = yes > graded.length - yes;
  const flips = graded.filter((c) => c !== correct).length;
  return { correct, flipRate: flips / graded.length };
}

/**
 * An answer graded by a judge under a profile: `samples` replies at `temperature` (asked at once, so a batch holds them together)
 * with the profile's token limit, their majority, the flip rate and the tokens of every request. When no sample
 * could be graded, `correct` is undefined: the question is a failure, counted apart, never a wrong answer.
 */
export async function gradeAnswer(profile: AnswerJudgeProfile, chat: ChatFn, q: AnswerQuestion, answer: string, opts: GradeOptions): Promise<AnswerGrade> {
  if (!Number.isInteger(opts.samples) || opts.samples < 1) throw new RangeError(`gradeAnswer: samples must be a positive integer, got ${opts.samples}`);
  if (!Number.isInteger(opts.parseRetries) || opts.parseRetries < 0) {
    throw new RangeError(`gradeAnswer: parseRetries must be a non-negative integer, got ${opts.parseRetries}`);
  }
  const prompt = profile.prompt(q, answer);
  const decoding: Decoding = { temperature: opts.temperature, maxTokens: profile.maxTokens };
  const tokens = new TokenSum();
  const first = opts.firstSample ?? 0;
  const samples = await Promise.all(
    Array.from({ length: opts.samples }, (_, i) => sample(profile, chat, prompt, decoding, opts.parseRetries, tokens, `s${first + i}`)),
  );
  const { correct, flipRate } = majority(samples);
  return { ...(correct === undefined ? {} : { correct }), samples, flipRate, tokens: tokens.value, judge: opts.judge };
}
