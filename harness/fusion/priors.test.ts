import { describe, expect, it } from 'vitest';
import { docTable, packRun, unpackRun } from './run-form.js';
import { applyPriors, NEUTRAL_PRIOR } from './priors.js';
import { runOf } from './testing.js';

const DAY = 86_400_000;
const table = docTable(['old', 'new', 'unknown', 'future']);
const at = (id: string): number => table.indexOf(id);
const T0 = Date.UTC(2026, 0, 31);
const timestampMs = new Float64Array(4);
timestampMs[at('old')] = T0 - 30 * DAY; // exactly one half-life (30 days) old
timestampMs[at('new')] = T0;
timestampMs[at('unknown')] = NaN;
timestampMs[at('future')] = T0 + 5 * DAY;
const importance = new Float64Array(4);
importance[at('old')] = 1;
importance[at('new')] = 0.2;
importance[at('unknown')] = NaN;
importance[at('future')] = 0;
const run = packRun(runOf({ q1: { old: 1, new: 0.8, unknown: 0.9, future: 0.5 }, q2: { old: 1, new: 0.5 } }), ['q1', 'q2'], table);
const list = (p: ReturnType<typeof applyPriors>, q: string) => [...unpackRun(p, table).get(q)!];

describe('applyPriors', () => {
  it('recency: a document one half-life old gets 1 - w + w/2; unknown time the neutral value; no age below 0', () => {
    const w = 0.4;
    const out = applyPriors(run, { recency: { halfLifeDays: 30, weight: w } }, { timestampMs, importance }, Float64Array.from([T0, T0]));
    const got = new Map(list(out, 'q1'));
    expect(got.get('old')).toBeCloseTo(1 * (1 - w + w / 2), 15);
    expect(got.get('new')).toBeCloseTo(0.8 * (1 - w + w * 1), 15);
    expect(got.get('unknown')).toBeCloseTo(0.9 * (1 - w + w * NEUTRAL_PRIOR), 15);
    expect(got.get('future')).toBeCloseTo(0.5 * (1 - w + w * 1), 15);
    // Re-ranked: old 1 * 0.8 and new 0.8 * 1 tie at 0.8 ('old' > 'new' by docId), unknown 0.72, future 0.5.
    expect(list(out, 'q1').map(([d]) => d)).toEqual(['old', 'new', 'unknown', 'future']);
  });

  it('re-ranks: a strong recency prior lets a recent document overtake an old one', () => {
    const out = applyPriors(run, { recency: { halfLifeDays: 30, weight: 1 } }, { timestampMs, importance }, Float64Array.from([T0, T0]));
    // q1: new 0.8; old 1 * 2^-1 and future 0.5 * 1 tie at 0.5 ('old' > 'future'); unknown 0.9 * 0.5.
    // q2: old 0.5 and new 0.5 * 1 tie; 'old' > 'new'.
    expect(list(out, 'q1').map(([d]) => d)).toEqual(['new', 'old', 'future', 'unknown']);
    expect(list(out, 'q1')).toContainEqual(['unknown', 0.9 * NEUTRAL_PRIOR]);
    expect(list(out, 'q2')).toEqual([
      ['old', 1 * 2 ** -1],
      ['new', 0.5],
    ]);
  });

  it('a query of unknown time gets no recency prior', () => {
    const out = applyPriors(run, { recency: { halfLifeDays: 30, weight: 1 } }, { timestampMs, importance }, Float64Array.from([NaN, T0]));
    expect(list(out, 'q1')).toEqual(list(run, 'q1'));
  });

  it('importance: s (1 - w + w importance), unknown importance the neutral value; combines with recency by product', () => {
    const wi = 0.5;
    const wr = 0.4;
    const out = applyPriors(
      run,
      { importance: { weight: wi }, recency: { halfLifeDays: 30, weight: wr } },
      { timestampMs, importance },
      Float64Array.from([T0, T0]),
    );
    const got = new Map(list(out, 'q1'));
    expect(got.get('old')).toBeCloseTo(1 * (1 - wr + wr / 2) * (1 - wi + wi * 1), 15);
    expect(got.get('new')).toBeCloseTo(0.8 * (1 - wr + wr) * (1 - wi + wi * 0.2), 15);
    expect(got.get('unknown')).toBeCloseTo(0.9 * (1 - wr + wr * NEUTRAL_PRIOR) * (1 - wi + wi * NEUTRAL_PRIOR), 15);
    expect(got.get('future')).toBeCloseTo(0.5 * 1 * (1 - wi + wi * 0), 15);
  });

  it('does not modify its input and rejects negative scores, bad weights and bad importances', () => {
    const before = [run.docs.slice(), run.scores.slice()];
    applyPriors(run, { importance: { weight: 1 } }, { timestampMs, importance }, Float64Array.from([T0, T0]));
    expect(run.docs).toEqual(before[0]);
    expect(run.scores).toEqual(before[1]);
    const negative = packRun(runOf({ q1: { old: -0.5 } }), ['q1'], table);
    expect(() => applyPriors(negative, { importance: { weight: 0.5 } }, { timestampMs, importance }, Float64Array.from([T0]))).toThrow(/negative score/);
    expect(() => applyPriors(run, { importance: { weight: 1.5 } }, { timestampMs, importance }, Float64Array.from([T0, T0]))).toThrow(/\[0, 1\]/);
    expect(() => applyPriors(run, { recency: { halfLifeDays: 0, weight: 0.5 } }, { timestampMs, importance }, Float64Array.from([T0, T0]))).toThrow(
      /halfLifeDays/,
    );
    const badImportance = importance.slice();
    badImportance[at('old')] = 2;
    expect(() => applyPriors(run, { importance: { weight: 0.5 } }, { timestampMs, importance: badImportance }, Float64Array.from([T0, T0]))).toThrow(
      /outside \[0, 1\]/,
    );
    expect(() => applyPriors(run, {}, { timestampMs, importance }, Float64Array.from([T0]))).toThrow(/query times/);
  });
});
