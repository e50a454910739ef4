import { describe, expect, it } from 'vitest';
import { studentTQuantile, studentTTwoSided } from '../stats/index.js';
import { ConfigError } from '../errors.js';
import { buildReportData, checkReportInput, runLetter } from './build.js';
import { compareSchema, gateSchema } from './config.js';
import { findComparison } from './select.js';
import { fixtureInput } from './testdata/fixture.js';
import type { Comparison, ReportData } from './types.js';

function cmp(data: ReportData, stratum: string, measure: string, system: string, baseline = 'bm25'): Comparison {
  const c = findComparison(data, stratum, measure, baseline, system);
  if (!c) throw new Error(`no comparison ${system} vs ${baseline} ${measure} ${stratum}`);
  return c;
}

// Exact sign-flip test over 12 queries enumerates 2^12 = 4096 sign vectors.
const TWO_OF_4096 = 2 / 4096;

describe('buildReportData: comparisons on the hand-made fixture', () => {
  const data = buildReportData(fixtureInput());

  it('derives strata in order of appearance plus the pooled row', () => {
    expect(data.strata).toEqual([
      { id: 'exact', n: 12, overall: false },
      { id: 'paraphrase', n: 12, overall: false },
      { id: 'all', n: 24, overall: true },
    ]);
    expect(data.baseline).toBe('bm25');
    expect(data.letters).toEqual({ bm25: 'a', dense: 'b', hybrid: 'c' });
    expect(data.testedMeasures).toEqual(['nDCG@10', 'R@10', 'R@100']);
  });

  it('means per stratum', () => {
    const mean = (s: string, r: string, m: string) => data.summary.find((x) => x.stratum === s && x.run === r && x.measure === m)?.mean;
    expect(mean('exact', 'hybrid', 'nDCG@10')).toBeCloseTo((6 * 0.4 + 6 * 0.2) / 12, 12); // 0.3
    expect(mean('paraphrase', 'hybrid', 'nDCG@10')).toBeCloseTo((3 * 0.3 + 9 * 0.2) / 12, 12); // 0.225
    expect(mean('all', 'dense', 'Judged@10')).toBeCloseTo((12 * 1 + 12 * 0.7) / 24, 12); // 0.85
    expect(data.summary).toHaveLength(3 * 3 * 4); // strata x runs x measures
  });

  it('dense vs bm25 on nDCG@10, paraphrase: every query gains 0.2 or 0.4', () => {
    const c = cmp(data, 'paraphrase', 'nDCG@10', 'dense');
    expect(c.n).toBe(12);
    expect(c.baselineMean).toBeCloseTo(0.2, 12);
    expect(c.systemMean).toBeCloseTo(0.5, 12);
    expect(c.delta).toBeCloseTo(0.3, 12);
    expect([c.wins, c.ties, c.losses]).toEqual([12, 0, 0]);
    // All 12 differences positive: only the identity and the all-minus sign vector reach |sum| >= 3.6.
    expect(c.p).toBeCloseTo(TWO_OF_4096, 15);
    // d = 0.2, 0.4 alternating: mean 0.3, sd = sqrt(12 * 0.1^2 / 11).
    const sd = Math.sqrt((12 * 0.01) / 11);
    expect(c.dz).toBeCloseTo(0.3 / sd, 10);
    // MDE = (t_.975,11 + t_.8,11) * sd / sqrt(12).
    expect(c.mde).toBeCloseTo(((studentTQuantile(0.975, 11) + studentTQuantile(0.8, 11)) * sd) / Math.sqrt(12), 10);
    // Every resample mean lies between 0.2 and 0.4, and the CI brackets the mean.
    expect(c.ci95[0]).toBeGreaterThanOrEqual(0.2);
    expect(c.ci95[1]).toBeLessThanOrEqual(0.4);
    expect(c.ci95[0]).toBeLessThan(0.3);
    expect(c.ci95[1]).toBeGreaterThan(0.3);
    expect(c.significant).toBe(true);
  });

  it('identical vectors: delta 0, all ties, p 1, zero-width CI', () => {
    const c = cmp(data, 'exact', 'nDCG@10', 'dense');
    expect(c.delta).toBe(0);
    expect([c.wins, c.ties, c.losses]).toEqual([0, 12, 0]);
    expect(c.p).toBe(1); // every one of the 4096 sign vectors gives |0| >= 0
    expect(c.ci95).toEqual([0, 0]);
    expect(c.dz).toBe(0);
    expect(c.significant).toBe(false);
  });

  it('hybrid vs bm25: a loss in exact, a non-significant gain in paraphrase', () => {
    const exact = cmp(data, 'exact', 'nDCG@10', 'hybrid');
    expect(exact.delta).toBeCloseTo(-0.2, 12); // -0.1, -0.3 alternating
    expect([exact.wins, exact.ties, exact.losses]).toEqual([0, 0, 12]);
    expect(exact.p).toBeCloseTo(TWO_OF_4096, 15);
    expect(exact.significant).toBe(true);
    const para = cmp(data, 'paraphrase', 'nDCG@10', 'hybrid');
    expect(para.delta).toBeCloseTo((3 * 0.1) / 12, 12); // 0.025
    expect([para.wins, para.ties, para.losses]).toEqual([3, 9, 0]);
    // Three equal non-zero differences: |sum| >= 0.3 only when all three share a sign, 2 of 8 patterns.
    expect(para.p).toBeCloseTo(2 / 8, 12);
    expect(para.significant).toBe(false);
    const all = cmp(data, 'all', 'nDCG@10', 'hybrid');
    expect(all.delta).toBeCloseTo((12 * -0.2 + 3 * 0.1) / 24, 12); // -0.0875
    expect([all.wins, all.ties, all.losses]).toEqual([3, 9, 12]);
  });

  it('constant non-zero differences: d_z does not exist and is null, not a number', () => {
    const c = cmp(data, 'paraphrase', 'R@100', 'dense');
    expect(c.delta).toBeCloseTo(0.1, 12);
    expect(c.dz).toBeNull();
    expect(c.p).toBeCloseTo(TWO_OF_4096, 15);
  });

  it('per-test family: Holm over 2 pairs x 3 strata x 3 tested measures = 18 tests', () => {
    expect(data.families).toEqual([{ id: 'randomization', size: 18 }]);
    expect(data.comparisons).toHaveLength(18);
    expect(new Set(data.comparisons.map((c) => c.family))).toEqual(new Set(['randomization']));
  });

  it('Holm within a per-stratum family, derived by hand', () => {
    const d = buildReportData(fixtureInput({ compare: { family: 'per-stratum' } }));
    expect(d.families.map((f) => [f.id, f.size])).toEqual([
      ['randomization exact', 6],
      ['randomization paraphrase', 6],
      ['randomization all', 6],
    ]);
    // In `exact` the six p-values are 2/4096 (hybrid nDCG@10) and five 1s: Holm gives 6 * 2/4096, then 1s.
    const exact = d.comparisons.filter((c) => c.stratum === 'exact');
    expect(cmp(d, 'exact', 'nDCG@10', 'hybrid').pAdjusted).toBeCloseTo(6 * TWO_OF_4096, 15);
    expect(exact.filter((c) => c.pAdjusted === 1)).toHaveLength(5);
  });

  it('Bonferroni over the per-test family multiplies by 18', () => {
    const d = buildReportData(fixtureInput({ compare: { correction: 'bonferroni' } }));
    expect(cmp(d, 'exact', 'nDCG@10', 'hybrid').pAdjusted).toBeCloseTo(18 * TWO_OF_4096, 15);
    const none = buildReportData(fixtureInput({ compare: { correction: 'none' } }));
    const c = cmp(none, 'exact', 'nDCG@10', 'hybrid');
    expect(c.pAdjusted).toBe(c.p);
  });

  it('allPairs adds dense vs hybrid (earlier run as baseline): 3 pairs x 3 strata x 3 measures', () => {
    const d = buildReportData(fixtureInput({ compare: { allPairs: true } }));
    expect(d.families).toEqual([{ id: 'randomization', size: 27 }]);
    const c = cmp(d, 'exact', 'nDCG@10', 'hybrid', 'dense');
    expect(c.delta).toBeCloseTo(-0.2, 12);
  });

  it('the t-test and Wilcoxon are selectable', () => {
    const t = buildReportData(fixtureInput({ compare: { test: 't' } }));
    const c = cmp(t, 'exact', 'nDCG@10', 'hybrid');
    // t = mean / (sd / sqrt(n)) = -0.2 / (sqrt(0.12/11) / sqrt(12)) = -6.633, p two-sided on 11 df.
    expect(c.test).toBe('t');
    const tStat = -0.2 / (Math.sqrt(0.12 / 11) / Math.sqrt(12));
    expect(c.p).toBeCloseTo(studentTTwoSided(tStat, 11), 12);
    expect(c.p).toBeCloseTo(3.69e-5, 7);
    const w = buildReportData(fixtureInput({ compare: { test: 'wilcoxon' } }));
    // Twelve negative differences with tied |d|: approximate method, W+ = 0.
    expect(cmp(w, 'exact', 'nDCG@10', 'hybrid').p).toBeLessThan(0.01);
    expect(cmp(w, 'exact', 'nDCG@10', 'dense').p).toBe(1); // all differences zero
  });

  it('is deterministic: same input, same JSON', () => {
    expect(JSON.stringify(buildReportData(fixtureInput()))).toBe(JSON.stringify(data));
  });
});

describe('warnings', () => {
  const data = buildReportData(fixtureInput());
  const codes = data.warnings.map((w) => `${w.code}:${w.subject}`);

  it('flags every stratum under 50 queries', () => {
    expect(codes.filter((c) => c.startsWith('underpowered-stratum'))).toEqual([
      'underpowered-stratum:exact',
      'underpowered-stratum:paraphrase',
      'underpowered-stratum:all',
    ]);
    const d = buildReportData(fixtureInput({ compare: { underpoweredBelow: 13 } }));
    expect(d.warnings.filter((w) => w.code === 'underpowered-stratum').map((w) => w.subject)).toEqual(['exact', 'paraphrase']);
  });

  it('flags non-significant comparisons with |delta| below the MDE', () => {
    const mde = data.warnings.filter((w) => w.code === 'mde-above-delta');
    expect(mde.map((w) => w.subject)).toEqual(['paraphrase', 'all']);
    // paraphrase: hybrid nDCG@10 (delta 0.025 < MDE) and dense R@10 (delta 0.1/12 < MDE).
    expect(mde[0]?.message).toContain('2 non-significant comparisons');
    expect(mde[0]?.message).toContain('hybrid vs bm25 on nDCG@10: delta +0.0250');
  });

  it('flags judgment holes from Judged@10 below the threshold', () => {
    const holes = data.warnings.filter((w) => w.code === 'judged-holes');
    expect(holes.map((w) => w.subject)).toEqual(['dense']);
    expect(holes[0]?.message).toContain('paraphrase (0.7000), all (0.8500)');
    const lenient = buildReportData(fixtureInput({ compare: { judgedThreshold: 0.7 } }));
    expect(lenient.warnings.filter((w) => w.code === 'judged-holes')).toEqual([]);
  });

  it('says holes were not checked when no Judged@k is measured', () => {
    const input = fixtureInput();
    const noJudged = {
      ...input,
      measures: input.measures.filter((m) => m !== 'Judged@10'),
    };
    const d = buildReportData(noJudged);
    expect(d.warnings.filter((w) => w.code === 'holes-unchecked').map((w) => w.severity)).toEqual(['info']);
  });

  it('flags a family where no Monte Carlo p can pass the first corrected threshold', () => {
    expect(codes.filter((c) => c.startsWith('permutations-too-few'))).toEqual([]);
    // 100 permutations: smallest p 1/101 = 0.0099 > 0.05/18 = 0.0028 (18 tests: 2 systems x 3 strata x 3 measures).
    const d = buildReportData(fixtureInput({ compare: { permutations: 100 } }));
    const w = d.warnings.filter((x) => x.code === 'permutations-too-few');
    expect(w).toHaveLength(1);
    expect(w[0]?.severity).toBe('serious');
    expect(w[0]?.message).toContain('has 18 tests');
    expect(w[0]?.message).toContain('at least 360');
  });

  it('flags substitutes', () => {
    const subs = data.warnings.filter((w) => w.code === 'substitute');
    expect(subs.map((w) => w.subject)).toEqual(['dense']);
    expect(subs[0]?.message).toContain('GloVe stands in for bge-large');
  });
});

describe('gate', () => {
  it('ADOPT: dense gains overall on nDCG@10 and loses in no stratum', () => {
    const d = buildReportData(fixtureInput({ gate: { candidate: 'dense', measure: 'nDCG@10' } }));
    expect(d.gateResult?.verdict).toBe('ADOPT');
    expect(d.gateResult?.reason).toMatch(/^significant gain overall and no significant loss in any stratum: nDCG@10 in all \(n=24\): dense 0\.5000 vs bm25 0\.3500, delta \+0\.1500/);
  });

  it('REJECT: hybrid loses significantly in the exact stratum', () => {
    const d = buildReportData(fixtureInput({ gate: { candidate: 'hybrid', measure: 'nDCG@10' } }));
    expect(d.gateResult?.verdict).toBe('REJECT');
    expect(d.gateResult?.reason).toMatch(/^significant loss in nDCG@10 in exact \(n=12\): hybrid 0\.3000 vs bm25 0\.5000, delta -0\.2000/);
    // gain-overall ignores strata; overall the loss is not significant after Holm, so it is inconclusive.
    const g = buildReportData(fixtureInput({ gate: { candidate: 'hybrid', measure: 'nDCG@10', rule: 'gain-overall' } }));
    expect(g.gateResult?.verdict).toBe('INCONCLUSIVE');
  });

  it('INCONCLUSIVE: no significant difference on R@10, with the MDE named', () => {
    const d = buildReportData(fixtureInput({ gate: { candidate: 'dense', measure: 'R@10' } }));
    expect(d.gateResult?.verdict).toBe('INCONCLUSIVE');
    expect(d.gateResult?.reason).toMatch(/^no significant difference overall: R@10 in all \(n=24\)/);
    expect(d.gateResult?.reason).toContain('MDE');
  });

  it('INCONCLUSIVE: a significant gain below minDelta', () => {
    const d = buildReportData(fixtureInput({ gate: { candidate: 'dense', measure: 'nDCG@10', minDelta: 0.2 } }));
    expect(d.gateResult?.verdict).toBe('INCONCLUSIVE');
    expect(d.gateResult?.reason).toMatch(/^significant gain overall, but below minDelta 0\.2000/);
  });

  it('no-loss: non-inferiority from the overall CI', () => {
    const ok = buildReportData(fixtureInput({ gate: { candidate: 'dense', measure: 'R@10', rule: 'no-loss', minDelta: 0.02 } }));
    // overall R@10 CI lower bound is about -0.008, above -0.02.
    expect(ok.gateResult?.verdict).toBe('ADOPT');
    const strict = buildReportData(fixtureInput({ gate: { candidate: 'dense', measure: 'R@10', rule: 'no-loss' } }));
    expect(strict.gateResult?.verdict).toBe('INCONCLUSIVE');
    const bad = buildReportData(fixtureInput({ gate: { candidate: 'hybrid', measure: 'nDCG@10', rule: 'no-loss' } }));
    expect(bad.gateResult?.verdict).toBe('REJECT');
  });

  it('a gate pair outside baseline-vs-all is added in its own orientation', () => {
    const d = buildReportData(fixtureInput({ gate: { baseline: 'dense', candidate: 'hybrid', measure: 'nDCG@10' } }));
    expect(d.families).toEqual([{ id: 'randomization', size: 27 }]);
    expect(d.gateResult?.verdict).toBe('REJECT');
    expect(d.gateResult?.config.baseline).toBe('dense');
  });
});

describe('config and input checks', () => {
  it('declares every default once', () => {
    expect(compareSchema.parse({})).toEqual({
      test: 'randomization',
      permutations: 10_000,
      resamples: 10_000,
      ciMethod: 'bca',
      seed: 42,
      alpha: 0.05,
      correction: 'holm',
      family: 'per-test',
      allPairs: false,
      underpoweredBelow: 50,
      power: 0.8,
      judgedThreshold: 0.9,
    });
    expect(gateSchema.parse({ candidate: 'x', measure: 'nDCG@10' }).rule).toBe('gain-overall-no-loss');
    expect(compareSchema.safeParse({ tests: 't' }).success).toBe(false);
    expect(gateSchema.safeParse({ candidate: 'x', measure: 'nDCG@10', rule: 'win' }).success).toBe(false);
  });

  it('reports every problem of an inconsistent input at once', () => {
    const input = fixtureInput({ gate: { candidate: 'dens', measure: 'nDCG@5' } });
    const bad = {
      ...input,
      compare: { ...input.compare, baseline: 'bm26' },
      perQuery: { ...input.perQuery, hybrid: { ...input.perQuery['hybrid'], 'R@10': [1, 2] } },
    };
    expect(checkReportInput(bad)).toEqual([
      'compare.baseline: unknown run "bm26" (known runs: bm25, dense, hybrid)',
      'gate.candidate: unknown run "dens" (known runs: bm25, dense, hybrid)',
      'gate.measure: "nDCG@5" is not among the measures (nDCG@10, R@10, R@100, Judged@10)',
      'perQuery.hybrid.R@10: 2 values for 24 queries',
    ]);
    expect(() => buildReportData(bad)).toThrow(ConfigError);
  });

  it('rejects a NaN per-query value and the reserved stratum name', () => {
    const input = fixtureInput();
    const nan = { ...input, perQuery: { ...input.perQuery, bm25: { ...input.perQuery['bm25'], 'R@10': [Number.NaN, ...Array(23).fill(0)] } } };
    expect(checkReportInput(nan)).toEqual(['perQuery.bm25.R@10[0]: NaN is not a finite number (query q01)']);
    const reserved = { ...input, queries: input.queries.map((q, i) => (i === 0 ? { ...q, stratum: 'all' } : q)) };
    expect(checkReportInput(reserved)[0]).toMatch(/stratum "all" is reserved/);
  });

  it('a single stratum gets no pooled row', () => {
    const input = fixtureInput();
    const one = { ...input, queries: input.queries.map((q) => ({ ...q, stratum: 'all' })) };
    const d = buildReportData(one);
    expect(d.strata).toEqual([{ id: 'all', n: 24, overall: false }]);
    expect(d.families).toEqual([{ id: 'randomization', size: 6 }]);
  });

  it('run letters continue past z', () => {
    expect([runLetter(0), runLetter(25), runLetter(26), runLetter(27), runLetter(52)]).toEqual(['a', 'z', 'aa', 'ab', 'ba']);
  });
});
