import type { ChatReply } from './types.js';

/**
 * Tokens and dollars. A reply that came through a batch API is priced at the batch discount, so the tokens
 * keep apart the share that went through one; dollars are computed from them at report time, never stored
 * as the only record.
 */

/** Prompt and completion tokens; `batched` is the part of them that went through a batch API (absent: none). */
export interface TokenCount {
  readonly prompt: number;
  readonly completion: number;
  readonly batched?: { readonly prompt: number; readonly completion: number };
}

/** USD per million input (prompt) and output (completion) tokens of one model; a batch takes `batchDiscount` off. */
export interface ModelPrice {
  readonly input: number;
  readonly output: number;
  /** Default 0.5: OpenAI's and Anthropic's batch APIs both charge half. */
  readonly batchDiscount?: number;
}

/** Dollars of `tokens` at `price`: 0 without tokens, null without a price. */
export function dollarsOf(tokens: TokenCount, price: ModelPrice | undefined): number | null {
  if (tokens.prompt === 0 && tokens.completion === 0) return 0;
  if (price === undefined) return null;
  const bp = tokens.batched?.prompt ?? 0;
  const bc = tokens.batched?.completion ?? 0;
  const keep = 1 - (price.batchDiscount ?? 0.5);
  return ((tokens.prompt - bp + bp * keep) * price.input + (tokens.completion - bc + bc * keep) * price.output) / 1e6;
}

/** The tokens of one reply. */
export function tokensOf(reply: ChatReply): TokenCount {
  const t = { prompt: reply.promptTokens, completion: reply.completionTokens };
  return reply.batch === true ? { ...t, batched: { ...t } } : t;
}

/** The sum of token counts (`batched` kept only when some are). */
export function addTokens(a: TokenCount, b: TokenCount): TokenCount {
  const sum = { prompt: a.prompt + b.prompt, completion: a.completion + b.completion };
  if (a.batched === undefined && b.batched === undefined) return sum;
  return {
    ...sum,
    batched: { prompt: (a.batched?.prompt ?? 0) + (b.batched?.prompt ?? 0), completion: (a.batched?.completion ?? 0) + (b.batched?.completion ?? 0) },
  };
}
