import { describe, expect, it } from 'vitest';
import { gateSchema, type GateConfigInput } from '../compare/config.js';
import { buildReportData } from './build.js';
import { fixtureInput } from '../report/testdata/fixture.js';

/**
 * `gate.rule: equivalent` on the fixture with the paired t-test, hybrid vs bm25 on nDCG@10. The gate family
 * has 3 tests (exact, paraphrase, all), so each TOST interval is mean ± t_{1−α/3, n−1} · sd/√n, level
 * 1 − 2·0.05/3 = 96.7%. By hand (t quantiles from scipy.stats.t.ppf):
 *
 * | stratum    | d                          | mean    | sd       | t          | interval             |
 * | exact      | −0.1, −0.3 alternating x12 | −0.2    | 0.104447 | 2.431291 (11 df) | [−0.273306, −0.126694] |
 * | paraphrase | 0.1 x3, 0 x9               | 0.025   | 0.045227 | 2.431291 (11 df) | [−0.006743, +0.056743] |
 * | all        | both, 24 queries           | −0.0875 | 0.139292 | 2.263728 (23 df) | [−0.151864, −0.023136] |
 */
function gate(extra: Partial<GateConfigInput>) {
  const data = buildReportData(fixtureInput({ compare: { test: 't' }, gate: { candidate: 'hybrid', measure: 'nDCG@10', rule: 'equivalent', ...extra } }));
  return { data, result: data.gateResult };
}

describe('gate rule equivalent (two one-sided tests per stratum)', () => {
  it('computes the TOST interval of every gate stratum at 1 - 2 alpha/m', () => {
    const { data } = gate({ margin: 0.3 });
    const expected: Record<string, [number, number]> = {
      exact: [-0.2733061876622513, -0.12669381233774868],
      paraphrase: [-0.006742510385049524, 0.05674251038504953],
      all: [-0.1518641275062922, -0.023135872493707813],
    };
    const gateRows = data.comparisons.filter((c) => c.role === 'confirmatory');
    expect(gateRows.map((c) => c.stratum)).toEqual(['exact', 'paraphrase', 'all']);
    for (const c of gateRows) {
      expect(c.equivalenceLevel).toBeCloseTo(1 - 0.1 / 3, 15);
      expect(c.equivalenceCi?.[0]).toBeCloseTo((expected[c.stratum] as [number, number])[0], 10);
      expect(c.equivalenceCi?.[1]).toBeCloseTo((expected[c.stratum] as [number, number])[1], 10);
    }
    expect(data.comparisons.filter((c) => c.role === 'exploratory').every((c) => c.equivalenceCi === undefined)).toBe(true);
  });

  it('ADOPTs when every stratum lies inside its margin', () => {
    const { result } = gate({ margins: { exact: 0.3, paraphrase: 0.1, overall: 0.2 } });
    expect(result?.verdict).toBe('ADOPT');
    expect(result?.reason).toContain('equivalent within the margins in every stratum');
    expect(result?.reason).toContain('nDCG@10 in exact (n=12): delta -0.2000, 96.7% CI [-0.2733, -0.1267], margin 0.3000');
  });

  it('is INCONCLUSIVE naming the stratum and its interval when one reaches past its margin', () => {
    const { result } = gate({ margins: { exact: 0.3, paraphrase: 0.05, overall: 0.2 } });
    expect(result?.verdict).toBe('INCONCLUSIVE');
    expect(result?.reason).toBe(
      'not shown equivalent within the margin in nDCG@10 in paraphrase (n=12): delta +0.0250, 96.7% CI [-0.0067, +0.0567], margin 0.0500',
    );
  });

  it('REJECTs a significant loss beyond the margin', () => {
    const { result } = gate({ margin: 0.1 });
    expect(result?.verdict).toBe('REJECT');
    expect(result?.reason).toMatch(
      /^significant loss beyond the margin in nDCG@10 in exact \(n=12\): delta -0\.2000, 96\.7% CI \[-0\.2733, -0\.1267\], margin 0\.1000$/,
    );
  });

  it('inverts the randomization test the same way: an interval at the TOST level that decides alike', () => {
    const { data, result } = gate({ margins: { exact: 0.3, paraphrase: 0.1, overall: 0.2 } });
    const r = buildReportData(
      fixtureInput({ gate: { candidate: 'hybrid', measure: 'nDCG@10', rule: 'equivalent', margins: { exact: 0.3, paraphrase: 0.1, overall: 0.2 } } }),
    );
    const exact = r.comparisons.find((c) => c.role === 'confirmatory' && c.stratum === 'exact');
    // 2^12 = 4096 sign vectors are enumerated: the interval's ends are differences the test can just reject.
    expect(exact?.equivalenceCi?.[0]).toBeLessThan(-0.2);
    expect(exact?.equivalenceCi?.[1]).toBeGreaterThan(-0.2);
    expect(r.gateResult?.verdict).toBe(result?.verdict);
    expect(data.gateResult?.verdict).toBe('ADOPT');
  });

  it('needs a margin under rule equivalent, and margins only there', () => {
    const missing = gateSchema.safeParse({ candidate: 'x', measure: 'nDCG@10', rule: 'equivalent' });
    expect(missing.success).toBe(false);
    expect(missing.error?.issues[0]).toMatchObject({ path: ['margin'], message: expect.stringContaining('rule equivalent needs a margin') });
    const stray = gateSchema.safeParse({ candidate: 'x', measure: 'nDCG@10', margin: 0.01 });
    expect(stray.error?.issues[0]?.path).toEqual(['margin']);
  });
});
