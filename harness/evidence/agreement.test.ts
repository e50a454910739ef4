import { describe, expect, it } from 'vitest';
import { compareSchema, gateSchema } from '../compare/config.js';
import { buildReportData } from '../decision/build.js';
import type { HumanLabelsInput, HumanPair } from '../decision/evidence-types.js';
import type { ReportInput } from '../decision/types.js';
import { renderMarkdown } from '../report/markdown.js';
import { madeEvalset } from '../testing/made-study.js';

/**
 * Issue 41, item 4: the report's judge validation binarises its kappa where the decision's measure counts
 * relevance, as `harness kappa --config` does, so a judge that grades 1 where the human grades 0 shows in it.
 */

// 20 pairs the judge inflates 0 -> 1, 20 agreed at 3, 20 agreed at 0.
const pairs: HumanPair[] = Array.from({ length: 60 }, (_, i) => {
  const [human, judge] = i < 20 ? [0, 1] : i < 40 ? [3, 3] : [0, 0];
  return { queryId: `q${i % 30}`, docId: `d${i}`, stratum: 'exact', human, judge };
});
// Relevant at grade 1: human 20 of 60, judge 40; p_o 2/3, p_e 4/9, kappa (2/3 - 4/9) / (5/9) = 0.4. At grade 2: 1.
const KAPPA_AT_1 = 0.4;

function input(measure: string, relevanceLevel?: number): ReportInput {
  const queries = Array.from({ length: 30 }, (_, i) => ({ id: `q${i}`, stratum: 'exact' }));
  const values = (shift: number) => queries.map((_, i) => 0.3 + ((i * 7) % 10) / 50 + shift);
  const perQuery = { base: { [measure]: values(0) }, cand: { [measure]: values(0.05) } };
  const humanLabels: HumanLabelsInput = {
    file: 'human.qrels',
    kind: 'qrels',
    qrelsVersion: 'v1',
    queries: queries.map((q) => q.id),
    incomplete: 0,
    perQuery,
    pairs,
    ...(relevanceLevel === undefined ? {} : { relevanceLevel }),
    thresholds: { minTau: 0.9, minQueries: 25, resamples: 100 },
  };
  return {
    name: 'agreement',
    configHash: 'x',
    evalset: madeEvalset(queries),
    runs: ['base', 'cand'].map((id) => ({ id, kind: 'fake', fingerprint: id })),
    measures: [measure],
    queries,
    perQuery,
    compare: compareSchema.parse({ baseline: 'base', permutations: 200 }),
    gate: gateSchema.parse({ candidate: 'cand', measure }),
    humanLabels,
    command: 'harness ablate --config study.yaml',
  };
}

describe("the judge validation's binary kappa splits where the gate's measure counts relevance", () => {
  it('nDCG@10 gains from grade 1: the inflated pairs count (0.4), and the report says where it split', () => {
    const data = buildReportData(input('nDCG@10'));
    expect(data.validation?.agreement.relevantAt).toBe(1);
    expect(data.validation?.agreement.kappaBinary).toBeCloseTo(KAPPA_AT_1, 12);
    expect(renderMarkdown(data)).toContain('kappa (relevant at grade >= 1, as nDCG@10 counts relevance) 0.400');
  });

  it('P@10 at relevanceLevel 2, or P(rel=2)@10: split at 2, where the inflation does not matter (1.0)', () => {
    for (const d of [buildReportData(input('P@10', 2)), buildReportData(input('P(rel=2)@10'))]) {
      expect(d.validation?.agreement.relevantAt).toBe(2);
      expect(d.validation?.agreement.kappaBinary).toBeCloseTo(1, 12);
    }
    // Without a relevance level the config default, 1, applies to P@10.
    expect(buildReportData(input('P@10')).validation?.agreement.kappaBinary).toBeCloseTo(KAPPA_AT_1, 12);
  });
});
