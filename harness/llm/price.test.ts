import { describe, expect, it } from 'vitest';
import { addTokens, dollarsOf, tokensOf } from './price.js';

describe('dollars of tokens', () => {
  it('prices synchronous tokens at the list price and batched ones at the discount', () => {
    const price = { input: 3, output: 15 };
    expect(dollarsOf({ prompt: 1_000_000, completion: 100_000 }, price)).toBeCloseTo(3 + 1.5, 12);
    // Half of each went through a batch at the default 50% off: 0.5 * 3 + 0.25 * 3 and the same for output.
    const mixed = { prompt: 1_000_000, completion: 100_000, batched: { prompt: 500_000, completion: 50_000 } };
    expect(dollarsOf(mixed, price)).toBeCloseTo(2.25 + 1.125, 12);
    expect(dollarsOf(mixed, { ...price, batchDiscount: 0 })).toBeCloseTo(4.5, 12);
    expect(dollarsOf(mixed, { ...price, batchDiscount: 1 })).toBeCloseTo(1.5 + 0.75, 12);
  });

  it('is 0 without tokens and null without a price', () => {
    expect(dollarsOf({ prompt: 0, completion: 0 }, undefined)).toBe(0);
    expect(dollarsOf({ prompt: 1, completion: 0 }, undefined)).toBeNull();
  });

  it('keeps the batched share apart when tokens are summed', () => {
    const sync = tokensOf({ content: '', promptTokens: 10, completionTokens: 2 });
    const batched = tokensOf({ content: '', promptTokens: 7, completionTokens: 1, batch: true });
    expect(sync).toEqual({ prompt: 10, completion: 2 });
    expect(addTokens(sync, sync)).toEqual({ prompt: 20, completion: 4 });
    expect(addTokens(sync, batched)).toEqual({ prompt: 17, completion: 3, batched: { prompt: 7, completion: 1 } });
  });
});
