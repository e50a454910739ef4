import { describe, expect, it } from 'vitest';
import { buildReportData } from '../decision/build.js';
import { fixtureInput } from '../report/testdata/fixture.js';
import { compareSchema, type CompareConfigInput, type GateConfigInput } from './config.js';
import { type DeclaredFamily, declaredFamilies, familyReach, roundUpNumber, smallestRandomizationP } from './families.js';

const family = (size: number, largestN: number, correction: DeclaredFamily['correction'] = 'holm'): DeclaredFamily => ({
  id: 'randomization',
  role: 'exploratory',
  size,
  correction,
  largestN,
});

describe('declaredFamilies', () => {
  it('counts the families a report of the fixture holds, before any data, under every family mode and gate rule', () => {
    const cases: [CompareConfigInput, GateConfigInput | undefined][] = [
      [{}, { candidate: 'dense', measure: 'nDCG@10' }],
      [{ family: 'per-measure' }, { candidate: 'hybrid', measure: 'R@10', rule: 'gain-overall' }],
      [
        { family: 'per-stratum', allPairs: true },
        { candidate: 'dense', baseline: 'hybrid', measure: 'nDCG@10', rule: 'equivalent', margin: 0.1 },
      ],
      [{ correction: 'bh' }, undefined],
    ];
    for (const [compare, gate] of cases) {
      const input = fixtureInput({ compare, ...(gate ? { gate } : {}) });
      const report = buildReportData(input);
      const declared = declaredFamilies({
        runIds: input.runs.map((r) => r.id),
        strata: report.strata.map((s) => ({ id: s.id, n: s.n })),
        testedMeasures: report.testedMeasures,
        cfg: compareSchema.parse(compare),
        ...(report.gateResult ? { gate: report.gateResult.config } : {}),
      });
      const sizes = (fs: readonly { id: string; size: number; correction: string }[]) => fs.map((f) => [f.id, f.size, f.correction]).sort();
      expect(sizes(declared), JSON.stringify({ compare, gate })).toEqual(sizes(report.families));
    }
  });
});

describe('the smallest attainable p of a family', () => {
  it('is 1/(B+1) by Monte Carlo and 2/2^n when the 2^n sign vectors are enumerated', () => {
    expect(smallestRandomizationP(106, 10_000)).toBe(1 / 10_001);
    expect(smallestRandomizationP(13, 10_000)).toBe(2 / 8192);
    expect(smallestRandomizationP(14, 10_000)).toBe(1 / 10_001);
  });

  it('rrf-vs-cc as it was: 512 tests and 10,000 draws reach 512/10,001 = 0.0512 at best; 11,000 is the round count that passes', () => {
    const r = familyReach(family(512, 106), 10_000, 0.05);
    expect(r.smallestCorrectedP).toBeCloseTo(512 / 10_001, 12);
    expect(r.reachable).toBe(false);
    // 1/(B + 1) < 0.05/512 needs B >= 10,240, rounded up to two digits.
    expect(r.needed).toBe(11_000);
    expect(familyReach(family(512, 106), 11_000, 0.05).reachable).toBe(true);
    expect(familyReach(family(512, 106), 20_000, 0.05).smallestCorrectedP).toBeCloseTo(512 / 20_001, 12);
  });

  it('enumeration: a stratum of 10 queries reaches 2/1024 whatever B, and one of 5 can never pass alpha/4', () => {
    expect(familyReach(family(4, 10), 10_000, 0.05)).toMatchObject({ reachable: true, smallestCorrectedP: (2 / 1024) * 4 });
    expect(familyReach(family(4, 5), 10_000, 0.05)).toMatchObject({ reachable: false, needed: null, smallestCorrectedP: (2 / 32) * 4 });
  });

  it('BY compares the smallest p with alpha/(m H_m); no correction with alpha', () => {
    const by = familyReach(family(3, 40, 'by'), 20, 0.05);
    expect(by.needed).toBe(roundUpNumber(Math.floor((3 * (1 + 1 / 2 + 1 / 3)) / 0.05)));
    expect(familyReach(family(30, 40, 'none'), 100, 0.05).reachable).toBe(true);
  });

  it('rounds counts up to two significant digits', () => {
    expect([roundUpNumber(10_240), roundUpNumber(480), roundUpNumber(1120), roundUpNumber(99), roundUpNumber(56_000)]).toEqual([11_000, 480, 1200, 99, 56_000]);
  });
});
