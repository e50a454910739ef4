import { describe, expect, it } from 'vitest';
import { studentTQuantile, studentTTwoSided } from '../stats/index.js';
import { ConfigError } from '../errors.js';
import { buildReportData, checkReportInput, runLetter } from '../decision/build.js';
import { compareSchema, gateSchema } from '../compare/config.js';
import { findComparison } from '../decision/select.js';
import { fixtureInput } from './testdata/fixture.js';
import type { Comparison, ReportData, ReportInput } from '../decision/types.js';

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
    // MDE at the family's first Holm threshold alpha/m, m = 18: (t_{1-0.05/36, 11} + t_{.8, 11}) * sd / sqrt(12).
    expect(c.mde).toBeCloseTo(((studentTQuantile(1 - 0.05 / 36, 11) + studentTQuantile(0.8, 11)) * sd) / Math.sqrt(12), 10);
    // Holm: the smallest p 2/4096 of the 18 is multiplied by 18 (ties keep input order; the first of five equal p).
    expect(c.pAdjusted).toBeCloseTo(18 * TWO_OF_4096, 15);
    // The interval inverts the exact test at alpha * p / pAdjusted = 0.05/18: it excludes 0, brackets the mean,
    // and lies within the range of the differences (no sign flip of shifted values reaches beyond it).
    expect(c.ciLevel).toBeCloseTo(1 - 0.05 / 18, 15);
    expect(c.ci[0] as number).toBeGreaterThan(0);
    expect(c.ci[0] as number).toBeLessThan(0.3);
    expect(c.ci[1] as number).toBeGreaterThan(0.3);
    // (plus the test's own tolerance on sums, 1e-10 of the mean |d|)
    expect(c.ci[1] as number).toBeLessThanOrEqual(0.4 + 1e-9);
    expect(c.significant).toBe(true);
  });

  it('identical vectors: delta 0, all ties, p 1, zero-width CI', () => {
    const c = cmp(data, 'exact', 'nDCG@10', 'dense');
    expect(c.delta).toBe(0);
    expect([c.wins, c.ties, c.losses]).toEqual([0, 12, 0]);
    expect(c.p).toBe(1); // every one of the 4096 sign vectors gives |0| >= 0
    expect(c.ci).toEqual([0, 0]);
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
    expect(data.families).toEqual([{ id: 'randomization', size: 18, role: 'exploratory', correction: 'holm' }]);
    expect(new Set(data.comparisons.map((c) => c.role))).toEqual(new Set(['exploratory']));
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
    expect(d.families).toEqual([{ id: 'randomization', size: 27, role: 'exploratory', correction: 'holm' }]);
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
    // Twelve negative differences with tied |d| (0.1, 0.3): n <= 13 with ties, so scipy's auto enumerates the
    // 2^12 sign flips: W+ = 0 is reached only by all-negative signs, p = 2 · 1/4096 (the normal approximation
    // gives 0.0017: scipy `wilcoxon(b, a, method='asymptotic')`).
    expect(cmp(w, 'exact', 'nDCG@10', 'hybrid').p).toBeCloseTo(TWO_OF_4096, 15);
    expect(cmp(w, 'exact', 'nDCG@10', 'dense').p).toBe(1); // all differences zero
  });

  it('is deterministic: same input, same JSON', () => {
    expect(JSON.stringify(buildReportData(fixtureInput()))).toBe(JSON.stringify(data));
  });
});

describe('warnings', () => {
  const data = buildReportData(fixtureInput());
  const codes = data.warnings.map((w) => `${w.code}:${w.subject}`);

  it('flags the strata under 50 queries in one warning', () => {
    expect(codes.filter((c) => c.startsWith('underpowered-stratum'))).toEqual(['underpowered-stratum:exact, paraphrase, all']);
    const d = buildReportData(fixtureInput({ compare: { underpoweredBelow: 13 } }));
    expect(d.warnings.filter((w) => w.code === 'underpowered-stratum').map((w) => w.subject)).toEqual(['exact, paraphrase']);
  });

  it('flags non-significant comparisons with |delta| below the MDE: one note for the exploratory ones', () => {
    const mde = data.warnings.filter((w) => w.code === 'mde-above-delta');
    expect(mde.map((w) => [w.subject, w.severity, w.gate])).toEqual([['exploratory', 'info', false]]);
    expect(mde[0]?.message).toContain('hybrid vs bm25 on nDCG@10 in paraphrase: delta +0.0250');
  });

  it('judgment holes: one warning listing the runs, only for a pooled qrels', () => {
    const holes = data.warnings.filter((w) => w.code === 'judged-holes');
    expect(holes.map((w) => w.subject)).toEqual(['dense']);
    expect(holes[0]?.message).toContain('dense (paraphrase 0.7000, all 0.8500)');
    const lenient = buildReportData(fixtureInput({ compare: { judgedThreshold: 0.7 } }));
    expect(lenient.warnings.filter((w) => w.code === 'judged-holes')).toEqual([]);
  });

  it('qrels that list only relevant documents: no judged-holes, one note instead', () => {
    const d = buildReportData(fixtureInput({ qrelsJudgesNonRelevant: false }));
    expect(d.warnings.filter((w) => w.code === 'judged-holes')).toEqual([]);
    expect(d.warnings.filter((w) => w.code === 'qrels-relevant-only').map((w) => [w.severity, w.gate])).toEqual([['info', false]]);
  });

  it('says holes were not checked when no Judged@k is measured (pooled qrels)', () => {
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
    expect(w.map((x) => [x.subject, x.severity, x.gate])).toEqual([['randomization', 'warning', false]]);
    expect(w[0]?.message).toContain('has 18 tests');
    expect(w[0]?.message).toContain('at least 360');
  });

  it('flags substitutes', () => {
    const subs = data.warnings.filter((w) => w.code === 'substitute');
    expect(subs.map((w) => w.subject)).toEqual(['dense']);
    expect(subs[0]?.message).toContain('GloVe stands in for bge-large');
  });

  it('are few, and those bearing on the gate come first, then by severity', () => {
    const d = buildReportData(fixtureInput({ gate: { candidate: 'dense', measure: 'nDCG@10' } }));
    expect(d.warnings.map((w) => `${w.gate ? 'gate' : '-'} ${w.severity} ${w.code}`)).toEqual([
      'gate serious substitute',
      'gate warning underpowered-stratum',
      'gate warning judged-holes',
      '- info mde-above-delta',
    ]);
  });
});

describe('gate', () => {
  it('ADOPT: dense gains overall on nDCG@10 and loses in no stratum', () => {
    const d = buildReportData(fixtureInput({ gate: { candidate: 'dense', measure: 'nDCG@10' } }));
    expect(d.gateResult?.verdict).toBe('ADOPT');
    expect(d.gateResult?.reason).toMatch(
      /^significant gain overall and no significant loss in any stratum: nDCG@10 in all \(n=24\): dense 0\.5000 vs bm25 0\.3500, delta \+0\.1500/,
    );
  });

  it('the gate is its own family: its pair on its measure, overall and per stratum, the rest exploratory', () => {
    const d = buildReportData(fixtureInput({ gate: { candidate: 'dense', measure: 'nDCG@10' } }));
    expect(d.families).toEqual([
      { id: 'gate', size: 3, role: 'confirmatory', correction: 'holm' },
      { id: 'randomization', size: 15, role: 'exploratory', correction: 'holm' },
    ]);
    const gate = d.comparisons.filter((c) => c.role === 'confirmatory');
    expect(gate.map((c) => `${c.system}-${c.baseline} ${c.measure} ${c.stratum} ${c.family}`)).toEqual([
      'dense-bm25 nDCG@10 exact gate',
      'dense-bm25 nDCG@10 paraphrase gate',
      'dense-bm25 nDCG@10 all gate',
    ]);
    // paraphrase: exact p 2/4096 is the smallest of the three, so Holm multiplies it by 3.
    expect(cmp(d, 'paraphrase', 'nDCG@10', 'dense').pAdjusted).toBeCloseTo(3 * TWO_OF_4096, 15);
    // gain-overall decides on the overall row alone: a family of one.
    const g = buildReportData(fixtureInput({ gate: { candidate: 'dense', measure: 'nDCG@10', rule: 'gain-overall' } }));
    expect(g.families.find((f) => f.role === 'confirmatory')?.size).toBe(1);
    // An FDR correction is not a family-wise claim; the gate falls back to Holm.
    const bh = buildReportData(fixtureInput({ compare: { correction: 'bh' }, gate: { candidate: 'dense', measure: 'nDCG@10' } }));
    expect(bh.families.map((f) => f.correction)).toEqual(['holm', 'bh']);
  });

  it('REJECT: hybrid loses significantly overall, and so in every rule', () => {
    const d = buildReportData(fixtureInput({ gate: { candidate: 'hybrid', measure: 'nDCG@10' } }));
    expect(d.gateResult?.verdict).toBe('REJECT');
    expect(d.gateResult?.reason).toMatch(/^significant loss overall: nDCG@10 in all \(n=24\): hybrid 0\.2625 vs bm25 0\.3500, delta -0\.0875/);
    const g = buildReportData(fixtureInput({ gate: { candidate: 'hybrid', measure: 'nDCG@10', rule: 'gain-overall' } }));
    expect(g.gateResult?.verdict).toBe('REJECT');
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

  it('no-loss: non-inferiority from the overall interval', () => {
    const ok = buildReportData(fixtureInput({ gate: { candidate: 'dense', measure: 'R@10', rule: 'no-loss', minDelta: 0.05 } }));
    const all = cmp(ok, 'all', 'R@10', 'dense');
    expect(all.ci[0] as number).toBeGreaterThan(-0.05);
    expect(ok.gateResult?.verdict).toBe('ADOPT');
    const strict = buildReportData(fixtureInput({ gate: { candidate: 'dense', measure: 'R@10', rule: 'no-loss' } }));
    expect(strict.gateResult?.verdict).toBe('INCONCLUSIVE');
    const bad = buildReportData(fixtureInput({ gate: { candidate: 'hybrid', measure: 'nDCG@10', rule: 'no-loss' } }));
    expect(bad.gateResult?.verdict).toBe('REJECT');
  });

  it('a gate pair outside baseline-vs-all is added in its own orientation', () => {
    const d = buildReportData(fixtureInput({ gate: { baseline: 'dense', candidate: 'hybrid', measure: 'nDCG@10' } }));
    expect(d.families.map((f) => [f.id, f.size])).toEqual([
      ['randomization', 24],
      ['gate', 3],
    ]);
    expect(d.gateResult?.verdict).toBe('REJECT');
    expect(d.gateResult?.config.baseline).toBe('dense');
  });
});

describe('statistics a reviewer accepts', () => {
  const excludesZero = (c: Comparison): boolean => (c.ci[0] !== null && c.ci[0] > 0) || (c.ci[1] !== null && c.ci[1] < 0);

  it('every interval excludes 0 exactly when its comparison is significant (randomization and t, any correction)', () => {
    const inputs = [
      fixtureInput(),
      fixtureInput({ gate: { candidate: 'dense', measure: 'nDCG@10' } }),
      fixtureInput({ compare: { correction: 'bonferroni', allPairs: true } }),
      fixtureInput({ compare: { correction: 'none' } }),
      fixtureInput({ compare: { test: 't' }, gate: { candidate: 'hybrid', measure: 'nDCG@10' } }),
      nearAlphaInput(),
    ];
    let significant = 0;
    for (const input of inputs) {
      for (const c of buildReportData(input).comparisons) {
        if (c.p === null) continue;
        expect(excludesZero(c), `${c.system} vs ${c.baseline} ${c.measure} ${c.stratum}: p ${c.pAdjusted} ci ${c.ci}`).toBe(c.significant);
        if (c.significant) significant++;
      }
    }
    expect(significant).toBeGreaterThan(10);
  });

  it('Bonferroni intervals are the simultaneous 1 - alpha/m ones', () => {
    const d = buildReportData(fixtureInput({ compare: { correction: 'bonferroni' } }));
    // Where m·p < 1 the level is 1 - alpha·p/(m·p) = 1 - 0.05/18.
    expect(cmp(d, 'exact', 'nDCG@10', 'hybrid').ciLevel).toBeCloseTo(1 - 0.05 / 18, 15);
  });

  it('query order does not move any number: the draws follow query ids, not input order', () => {
    const input = fixtureInput({ gate: { candidate: 'dense', measure: 'nDCG@10' } });
    // Reverse the queries inside each stratum (strata keep their order of appearance).
    const order = [...Array.from({ length: 12 }, (_, i) => 11 - i), ...Array.from({ length: 12 }, (_, i) => 23 - i)];
    const shuffled = {
      ...input,
      queries: order.map((i) => input.queries[i] as { id: string; stratum: string }),
      perQuery: Object.fromEntries(
        Object.entries(input.perQuery).map(([run, byMeasure]) => [
          run,
          Object.fromEntries(Object.entries(byMeasure).map(([m, v]) => [m, order.map((i) => v[i] as number)])),
        ]),
      ),
    };
    const a = buildReportData(input);
    const b = buildReportData(shuffled);
    // The pooled row has 24 queries, so its p is Monte Carlo: it used to depend on the order.
    expect(cmp(b, 'all', 'R@10', 'dense').permutations).toBe(10_000);
    expect(b.comparisons).toEqual(a.comparisons);
    expect(b.gateResult).toEqual(a.gateResult);
  });

  it('each Monte Carlo p carries its standard error; enumerated ones carry 0', () => {
    const d = buildReportData(fixtureInput());
    const mc = cmp(d, 'all', 'R@10', 'dense');
    expect(mc.pMcse).toBeCloseTo(Math.sqrt(((mc.p as number) * (1 - (mc.p as number))) / 10_000), 15);
    expect(cmp(d, 'exact', 'R@10', 'dense')).toMatchObject({ permutations: 4096, pMcse: 0, nearAlpha: false });
    const t = buildReportData(fixtureInput({ compare: { test: 't' } }));
    expect(cmp(t, 'exact', 'nDCG@10', 'hybrid')).toMatchObject({ permutations: null, pMcse: null });
  });

  it('a gate p within its error of alpha is redrawn with more permutations; an exploratory one is flagged', () => {
    const d = buildReportData(nearAlphaInput());
    const gate = cmp(d, 'all', 'nDCG@10', 'cand', 'base');
    const other = cmp(d, 'all', 'nDCG@10', 'other', 'base');
    expect(gate.role).toBe('confirmatory');
    // 100 draws: standard error about 0.027, so p ≈ 0.08 is within two of 0.05; 1,000 draws settle it.
    expect(other.permutations).toBe(100);
    expect(other.nearAlpha).toBe(true);
    expect(gate.permutations).toBe(1000);
    expect(gate.nearAlpha).toBe(false);
    expect(d.warnings.filter((w) => w.code === 'p-near-alpha').map((w) => [w.subject, w.gate])).toEqual([['exploratory', false]]);
  });
});

/**
 * One stratum of 40 queries: `cand` and `other` both beat `base` by 0.1 on 26 queries and lose 0.1 on 14, so
 * the exact two-sided sign-flip p is P(|2X − 40| >= 12), X ~ Bin(40, ½), = 0.0807: near alpha at 100 draws.
 */
function nearAlphaInput(): ReportInput {
  const n = 40;
  const d = Array.from({ length: n }, (_, i) => (i < 26 ? 0.1 : -0.1));
  const base = Array.from({ length: n }, () => 0.5);
  const cand = base.map((b, i) => b + (d[i] as number));
  return {
    ...fixtureInput(),
    runs: [
      { id: 'base', kind: 'bm25', fingerprint: 'b' },
      { id: 'cand', kind: 'bm25', fingerprint: 'c' },
      { id: 'other', kind: 'bm25', fingerprint: 'o' },
    ],
    measures: ['nDCG@10'],
    queries: Array.from({ length: n }, (_, i) => ({ id: `q${String(i).padStart(2, '0')}`, stratum: 'all' })),
    perQuery: { base: { 'nDCG@10': base }, cand: { 'nDCG@10': cand }, other: { 'nDCG@10': cand } },
    compare: compareSchema.parse({ permutations: 100 }),
    gate: gateSchema.parse({ candidate: 'cand', measure: 'nDCG@10', rule: 'gain-overall' }),
  };
}

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
      questions: [],
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
    expect(d.families).toEqual([{ id: 'randomization', size: 6, role: 'exploratory', correction: 'holm' }]);
  });

  it('run letters continue past z', () => {
    expect([runLetter(0), runLetter(25), runLetter(26), runLetter(27), runLetter(52)]).toEqual(['a', 'z', 'aa', 'ab', 'ba']);
  });
});
