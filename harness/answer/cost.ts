import { dollarsOf, type ModelPrice, addTokens } from '../llm/price.js';
import type { AnsweredSystem, TokenCount } from './types.js';

/**
 * What answering and grading cost, per system and stage, as the manifest records it: prompt and completion
 * tokens of every request (failed ones included: they were paid for; cached ones at what they cost when they
 * were made, so a rerun records the same), and dollars at the config's `answer.price` (USD per million tokens).
 */

/** One stage's tokens, the model priced, and its dollars (null when the price table does not name the model). */
export interface StageCost extends TokenCount {
  readonly model: string | null;
  readonly usd: number | null;
}

export interface SystemAnswerCost {
  readonly reader: StageCost;
  readonly judge: StageCost;
}

export type { ModelPrice };
export { dollarsOf };

function stage(tokens: TokenCount, model: string | undefined, prices: Readonly<Record<string, ModelPrice>>): StageCost {
  return { ...tokens, model: model ?? null, usd: dollarsOf(tokens, model === undefined ? undefined : prices[model]) };
}

/** Tokens of every answer and every grade of a system, summed. */
export function systemTokens(s: AnsweredSystem): { readonly reader: TokenCount; readonly judge: TokenCount } {
  let reader: TokenCount = { prompt: 0, completion: 0 };
  let judge: TokenCount = { prompt: 0, completion: 0 };
  for (const o of s.outcomes) {
    reader = addTokens(reader, o.answer.tokens);
    if (o.grade !== undefined) judge = addTokens(judge, o.grade.tokens);
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
