import { describe, expect, it } from 'vitest';
import { buildReportData } from '../decision/build.js';
import { fixtureInput } from '../report/testdata/fixture.js';

/** The report fixture (dense has Judged@10 0.85 overall, 0.70 on paraphrase) on judged qrels. */
function withJudge(judge: { depth: number; pooled: string[]; holes: number }) {
  const input = fixtureInput();
  return buildReportData({
    ...input,
    evalset: { ...input.evalset, qrelsSource: 'gold+judged', judge: { model: 'm', prompt: 'umbrela-v1@0123456789ab', qrelsVersion: 'v', ...judge } },
  });
}
const holes = (d: ReturnType<typeof buildReportData>) => d.warnings.filter((w) => w.code === 'judged-holes').map((w) => w.subject);

describe('judged-holes with judged qrels', () => {
  it('spares a run the judge pooled to the cutoff with no pair left ungraded', () => {
    expect(holes(withJudge({ depth: 10, pooled: ['bm25', 'dense'], holes: 0 }))).toEqual([]);
  });
  it('still warns about a run outside the pool, a pool shallower than the cutoff, or ungraded pairs', () => {
    expect(holes(withJudge({ depth: 10, pooled: ['bm25'], holes: 0 }))).toEqual(['dense']);
    expect(holes(withJudge({ depth: 5, pooled: ['bm25', 'dense'], holes: 0 }))).toEqual(['dense']);
    expect(holes(withJudge({ depth: 10, pooled: ['bm25', 'dense'], holes: 3 }))).toEqual(['dense']);
  });
});
