import { describe, expect, it } from 'vitest';
import { blendScores, contentTokens, GARBANZO_BLEND, queryTimeMs, recencyDecay, tokenOverlap } from './blend.js';

const H = 3_600_000;

describe('recencyDecay: the 72 h half-life', () => {
  it('halves every 72 hours, is 1 at the query time and for later documents, 0 without a time', () => {
    const now = Date.parse('2023-05-10T12:00:00Z');
    expect(GARBANZO_BLEND.halfLifeHours).toBe(72);
    expect(recencyDecay(now, now, 72)).toBe(1);
    expect(recencyDecay(now, now - 72 * H, 72)).toBe(0.5);
    expect(recencyDecay(now, now - 144 * H, 72)).toBe(0.25);
    expect(recencyDecay(now, now - 36 * H, 72)).toBeCloseTo(Math.SQRT1_2, 12);
    expect(recencyDecay(now, now + 5 * H, 72)).toBe(1);
    expect(recencyDecay(now, Number.NaN, 72)).toBe(0);
  });
});

describe('queryTimeMs', () => {
  const docs = [
    { id: 'a', text: '', timestamp: '2023-05-08T13:56:00' },
    { id: 'b', text: '', timestamp: '2023-06-01T09:00:00' },
    { id: 'c', text: '' },
  ];
  it('reads LongMemEval question dates, else falls back to the newest document of the scope (LoCoMo)', () => {
    const lme = { id: 'q', text: '', stratum: 's', metadata: { questionDate: '2023/05/30 (Tue) 23:40' } };
    expect(queryTimeMs(lme, docs)).toBe(Date.parse('2023-05-30T23:40:00'));
    expect(queryTimeMs({ id: 'q', text: '', stratum: 's' }, docs)).toBe(Date.parse('2023-06-01T09:00:00'));
    expect(queryTimeMs({ id: 'q', text: '', stratum: 's', metadata: { date: '2024-01-01' } }, docs)).toBe(Date.parse('2024-01-01'));
  });
});

describe('blendScores', () => {
  it('weighs base / query max, recency and overlap as 0.6 / 0.2 / 0.2', () => {
    const now = Date.parse('2023-05-10T12:00:00Z');
    const q = contentTokens('When did Caroline go hiking?');
    expect([...q]).toEqual(['caroline', 'go', 'hiking']);
    const got = blendScores(
      [
        { score: 4, timeMs: now, tokens: contentTokens('Caroline went hiking') },
        { score: 2, timeMs: now - 72 * H, tokens: contentTokens('hiking boots') },
        { score: -1, timeMs: Number.NaN, tokens: new Set() },
      ],
      q,
      now,
      GARBANZO_BLEND,
    );
    expect(got[0]).toBeCloseTo(0.6 * (4 / 4) + 0.2 * 1 + 0.2 * (2 / 3), 12);
    expect(got[1]).toBeCloseTo(0.6 * (2 / 4) + 0.2 * 0.5 + 0.2 * (1 / 3), 12);
    expect(got[2]).toBe(0);
    expect(tokenOverlap(new Set(), new Set(['x']))).toBe(0);
  });
});
