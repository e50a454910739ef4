import type { AnsweredSystem, TokenCount } from './types.js';

/**
 * What answering and grading cost, per system and stage, as the manifest records it: prompt and completion
 * tokens of every request (failed ones included: they were paid for; cached ones at what they cost when they
 * were made, so a rerun records the same), and dollars at the config's `answer.price` (USD per million tokens).
 */

/** USD per million input (prompt) and output (completion) tokens of one model. */
export interface ModelPrice {
  readonly input: number;
  readonly output: number;
}

/** One stage's tokens, the model priced, and its dollars (null when the price table does not name the model). */
export interface StageCost extends TokenCount {
  readonly model: string | null;
  readonly usd: number | null;
}

export interface SystemAnswerCost {
  readonly reader: StageCost;
  readonly judge: StageCost;
}

/** Dollars of `tokens` at `price`: 0 without tokens, null without a price. */
export function dollarsOf(tokens: TokenCount, price: ModelPrice | undefined): number | null {
  if (tokens.prompt === 0 && tokens.completion === 0) return 0;
  return price === undefined ? null : (tokens.prompt * price.input + tokens.completion * price.output) / 1e6;
}

function stage(tokens: TokenCount, model: string | undefined, prices: Readonly<Record<string, ModelPrice>>): StageCost {
  return { ...tokens, model: model ?? null, usd: dollarsOf(tokens, model === undefined ? undefined : prices[model]) };
}

/** Tokens of every answer and every grade of a system, summed. */
export function systemTokens(s: AnsweredSystem): { readonly reader: TokenCount; readonly judge: TokenCount } {
  const reader = { prompt: 0, completion: 0 };
  const judge = { prompt: 0, completion: 0 };
  for (const o of s.outcomes) {
    reader.prompt += o.answer.tokens.prompt;
    reader.completion += o.answer.tokens.completion;
    judge.prompt += o.grade?.tokens.prompt ?? 0;
    judge.completion += o.grade?.tokens.completion ?? 0;
  }
  return { reader, judge };
}

/** Each system's cost per stage, priced by the models that answered and graded it (as the price table names them). */
export function answerCosts(
  systems: readonly AnsweredSystem[],
  models: Readonly<Record<string, { readonly reader?: string; readonly judge?: string }>>,
  prices: Readonly<Record<string, ModelPrice>>,
): Record<string, SystemAnswerCost> {
  return Object.fromEntries(
    systems.map((s) => {
      const t = systemTokens(s);
      const m = models[s.id] ?? {};
      return [s.id, { reader: stage(t.reader, m.reader, prices), judge: stage(t.judge, m.judge, prices) }] as const;
    }),
  );
}
