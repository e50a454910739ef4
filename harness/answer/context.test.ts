import { describe, expect, it } from 'vitest';
import { estimateTokens, formatContext, itemsWithin, protocolOf } from './context.js';
import type { AnswerQuestion, ContextItem } from './types.js';

// Rank order: b (most relevant), undated u1, a, undated u2, c.
const items: ContextItem[] = [
  { id: 'b', text: 'Bought oat milk.', timestamp: '2023-05-20T10:00:00Z' },
  { id: 'u1', text: 'Likes hiking.' },
  { id: 'a', text: 'Moved to Denver.', timestamp: '2023-01-03' },
  { id: 'u2', text: 'Has a dog.' },
  { id: 'c', text: 'Started a new job.', timestamp: '2023-09-01T08:00:00Z', title: 'work' },
];

describe('formatContext', () => {
  it('shows the items oldest first with their dates, undated ones last in rank order, then the question date', () => {
    const ctx = formatContext(items, { budgetTokens: 10_000, protocol: 'generic', questionDate: '2023-10-01' });
    expect(ctx.text).toBe(
      [
        '[1] 2023-01-03\nMoved to Denver.',
        '[2] 2023-05-20T10:00:00Z\nBought oat milk.',
        '[3] 2023-09-01T08:00:00Z work\nStarted a new job.',
        '[4] undated\nLikes hiking.',
        '[5] undated\nHas a dog.',
        'Current date: 2023-10-01',
      ].join('\n\n'),
    );
    expect(ctx.included).toEqual(['b', 'u1', 'a', 'u2', 'c']);
    expect(ctx.truncated).toBe(0);
  });

  it('writes sessions for longmemeval and dated lines for locomo', () => {
    const two = items.slice(0, 3);
    expect(formatContext(two, { budgetTokens: 1000, protocol: 'longmemeval' }).text).toBe(
      '### Session 1, 2023-01-03\nMoved to Denver.\n\n### Session 2, 2023-05-20T10:00:00Z\nBought oat milk.\n\n### Session 3, undated\nLikes hiking.',
    );
    expect(formatContext(two, { budgetTokens: 1000, protocol: 'locomo', questionDate: '2023-06-01' }).text).toBe(
      '- (2023-01-03) Moved to Denver.\n\n- (2023-05-20T10:00:00Z) Bought oat milk.\n\n- (undated) Likes hiking.\n\nCurrent date: 2023-06-01',
    );
  });

  it('keeps the highest-ranked items that fit the budget, then sorts them by date; the text is within the budget', () => {
    // Each generic block of these items is 25 to 40 characters; 20 tokens = 80 characters hold two and the separator.
    const ctx = formatContext(items, { budgetTokens: 20, protocol: 'generic' });
    expect(ctx.included).toEqual(['b', 'u1']);
    expect(ctx.truncated).toBe(3);
    expect(ctx.text).toBe('[1] 2023-05-20T10:00:00Z\nBought oat milk.\n\n[2] undated\nLikes hiking.');
    for (const budget of [5, 9, 13, 20, 27, 33, 50, 80]) {
      const c = formatContext(items, { budgetTokens: budget, protocol: 'longmemeval', questionDate: '2023-10-01' });
      if (c.included.length > 0) expect(estimateTokens(c.text), `budget ${budget}`).toBeLessThanOrEqual(budget);
      else expect(c.text).toBe('(no history)\n\nCurrent date: 2023-10-01');
      // A rank-order prefix: a lower-ranked item is never in while a higher-ranked one is out.
      expect(c.included).toEqual(items.slice(0, c.included.length).map((i) => i.id));
      expect(c.included.length + c.truncated).toBe(items.length);
    }
  });

  it('never shows a lower-ranked item that would fit while a higher-ranked one does not', () => {
    const big: ContextItem[] = [
      { id: 'small1', text: 'x' },
      { id: 'huge', text: 'y'.repeat(400) },
      { id: 'small2', text: 'z' },
    ];
    expect(formatContext(big, { budgetTokens: 20, protocol: 'generic' }).included).toEqual(['small1']);
  });

  it('cuts the top item to fit when it alone is over the budget, rather than showing nothing', () => {
    const long: ContextItem[] = [{ id: 'long', text: 'word '.repeat(200), timestamp: '2023-01-01' }, ...items];
    const ctx = formatContext(long, { budgetTokens: 25, protocol: 'generic', questionDate: '2023-02-01' });
    expect(ctx.included).toEqual(['long']);
    expect(ctx.truncated).toBe(items.length);
    expect(ctx.text).toMatch(/^\[1\] 2023-01-01\nword word .* \[\.\.\.\]\n\nCurrent date: 2023-02-01$/);
    expect(estimateTokens(ctx.text)).toBeLessThanOrEqual(25);
    expect(itemsWithin(long, { budgetTokens: 25, protocol: 'generic', questionDate: '2023-02-01' })[0]?.text).toMatch(/ \[\.\.\.\]$/);
  });

  it('says there is no history when there are no items, and refuses a budget that is not positive', () => {
    expect(formatContext([], { budgetTokens: 100, protocol: 'generic', questionDate: '2023-02-01' })).toEqual({
      text: '(no history)\n\nCurrent date: 2023-02-01',
      included: [],
      truncated: 0,
    });
    expect(() => formatContext(items, { budgetTokens: 0, protocol: 'generic' })).toThrow(/budgetTokens must be positive/);
  });

  it('estimates tokens as characters / 4, rounded up', () => {
    expect([estimateTokens(''), estimateTokens('abcd'), estimateTokens('abcde')]).toEqual([0, 1, 2]);
  });
});

describe('protocolOf', () => {
  const q: AnswerQuestion = { id: 'q', text: 't', gold: 'g', stratum: 's', abstention: false, evidence: [] };
  it('reads the protocol from the question type or category', () => {
    expect(protocolOf({ ...q, questionType: 'multi-session' })).toBe('longmemeval');
    expect(protocolOf({ ...q, category: 2 })).toBe('locomo');
    expect(protocolOf(q)).toBe('generic');
  });
});
