import { describe, expect, it } from 'vitest';
import { compareSchema, gateSchema, type GateConfigInput } from '../compare/config.js';
import { buildReportData } from '../decision/build.js';
import { renderHtml } from '../report/html.js';
import { renderMarkdown } from '../report/markdown.js';
import type { ReportInput } from '../decision/types.js';
import { ppiMean, stratifiedPpiMean } from '../stats/ppi.js';
import { madeEvalset, madeHumanLabels } from '../testing/made-study.js';
import { mulberry32 } from '../testing/mulberry32.js';
import type { HumanLabelsInput } from '../decision/evidence-types.js';

/**
 * PPI on the paired difference and the judge's validation, end to end through the report builder, on a study
 * made here: 2 strata x 80 queries, three runs; the human values are the truth; the judge over-grades the
 * candidate's documents by `bias` on every query. 25 queries per stratum are human-labelled.
 */
interface Study {
  readonly input: ReportInput;
  /** The human delta cand − base over every query (what a study with every query labelled would find). */
  readonly trueDelta: number;
}

function study(o: { bias: number; trueGain: number; labelled?: number; gate?: Partial<GateConfigInput>; human?: boolean }): Study {
  const rnd = mulberry32(7);
  const noise = (s: number) => (rnd() - 0.5) * 2 * s;
  const n = 160;
  const queries = Array.from({ length: n }, (_, i) => ({ id: `q${String(i).padStart(3, '0')}`, stratum: i < 80 ? 'exact' : 'multi-hop' }));
  const clip = (x: number) => Math.min(1, Math.max(0, x));
  const base = queries.map(() => 0.2 + rnd() * 0.5);
  const human = {
    base: base.map((x) => clip(x)),
    cand: base.map((x) => clip(x + o.trueGain + noise(0.1))),
    other: base.map((x) => clip(x - 0.1 + noise(0.05))),
  };
  const judge = {
    base: human.base.map((x) => clip(x + noise(0.05))),
    cand: human.cand.map((x) => clip(x + o.bias + noise(0.05))),
    other: human.other.map((x) => clip(x + noise(0.05))),
  };
  const labelledPer = o.labelled ?? 25;
  const labelled = queries.filter((_, i) => i % 80 < labelledPer).map((q) => q.id);
  const humanLabels = madeHumanLabels(queries, labelled, human, {
    incomplete: 2,
    pairs: Array.from({ length: 60 }, (_, i) => ({ queryId: `q${i}`, docId: `d${i}`, stratum: 'exact', human: i % 4, judge: (i + (i % 5 === 0 ? 1 : 0)) % 4 })),
    thresholds: { minTau: 0.9, minQueries: 25, resamples: 300 },
  });
  const trueDelta = human.cand.reduce((t, x, i) => t + x - (human.base[i] as number), 0) / n;
  return {
    trueDelta,
    input: {
      name: 'ppi-study',
      configHash: 'x',
      evalset: madeEvalset(queries),
      runs: ['base', 'cand', 'other'].map((id) => ({ id, kind: 'fake', fingerprint: id })),
      measures: ['nDCG@10'],
      queries,
      perQuery: Object.fromEntries(Object.entries(judge).map(([r, v]) => [r, { 'nDCG@10': v }])),
      compare: compareSchema.parse({ baseline: 'base', permutations: 1000 }),
      gate: gateSchema.parse({ candidate: 'cand', measure: 'nDCG@10', ...o.gate }),
      ...(o.human === false ? {} : { humanLabels }),
      command: 'harness ablate --config study.yaml',
    },
  };
}

describe('PPI on the paired difference', () => {
  it('the plain delta of each row is the report comparison delta (an independent computation)', () => {
    const data = buildReportData(study({ bias: 0.08, trueGain: 0 }).input);
    expect(data.ppi).toHaveLength(data.comparisons.length);
    for (const c of data.comparisons) {
      const row = data.ppi?.find((r) => r.stratum === c.stratum && r.system === c.system && r.baseline === c.baseline);
      expect(row?.plainDelta).toBeCloseTo(c.delta, 12);
    }
  });

  it('a judge over-grading the candidate: the plain delta is biased, the PPI interval covers the true delta', () => {
    const s = study({ bias: 0.08, trueGain: 0 });
    const data = buildReportData(s.input);
    const all = data.ppi?.find((r) => r.stratum === 'all' && r.system === 'cand');
    expect(all?.plainDelta).toBeGreaterThan(s.trueDelta + 0.06);
    const ppi = all?.ppi;
    expect(ppi?.ci[0]).toBeLessThan(s.trueDelta);
    expect(ppi?.ci[1]).toBeGreaterThan(s.trueDelta);
    expect(Math.abs((ppi?.estimate as number) - s.trueDelta)).toBeLessThan(0.03);
    expect(ppi?.n).toBe(50);
    expect(ppi?.N).toBe(110);
    // The gate's family is overall + 2 strata: each PPI interval at 1 − 0.05/3.
    expect(ppi?.level).toBeCloseTo(1 - 0.05 / 3, 12);
  });

  it('per stratum it is ppiMean on that stratum, overall stratifiedPpiMean over the strata, as the kernels give them', () => {
    const s = study({ bias: 0.08, trueGain: 0 });
    const data = buildReportData(s.input);
    const d = (pq: ReportInput['perQuery'], r: string) => (pq[r]?.['nDCG@10'] ?? []).map((x, i) => x - (pq.base?.['nDCG@10']?.[i] as number));
    const judge = d(s.input.perQuery, 'cand');
    const human = d(s.input.humanLabels?.perQuery ?? {}, 'cand');
    const sample = (from: number) => ({
      human: human.slice(from === 0 ? 0 : 25, from === 0 ? 25 : 50),
      judgeOnLabelled: judge.slice(from, from + 25),
      judgeOnUnlabelled: judge.slice(from + 25, from + 80),
    });
    const exact = data.ppi?.find((r) => r.stratum === 'exact' && r.system === 'cand');
    expect(exact?.ppi?.estimate).toBeCloseTo(ppiMean(sample(0), { alpha: 0.05 / 3 }).estimate, 12);
    const overall = stratifiedPpiMean([{ sample: sample(0) }, { sample: sample(80) }], { alpha: 0.05 / 3 });
    expect(data.ppi?.find((r) => r.stratum === 'all' && r.system === 'cand')?.ppi?.ci).toEqual(overall.ci);
  });

  it('gate.judged: ppi decides on the corrected interval: the biased judge ADOPTs, PPI does not', () => {
    const plain = buildReportData(study({ bias: 0.08, trueGain: 0 }).input);
    expect(plain.gateResult?.verdict).toBe('ADOPT');
    const ppi = buildReportData(study({ bias: 0.08, trueGain: 0, gate: { judged: 'ppi' } }).input);
    expect(ppi.gateResult?.verdict).toBe('INCONCLUSIVE');
    expect(ppi.gateResult?.reason).toContain('PPI-corrected delta');
    // A real gain is still found on the corrected interval.
    const real = buildReportData(study({ bias: 0, trueGain: 0.1, gate: { judged: 'ppi' } }).input);
    expect(real.gateResult?.verdict).toBe('ADOPT');
  });

  it('too few labelled queries in a stratum: no PPI, said why; the PPI gate cannot adopt', () => {
    const data = buildReportData(study({ bias: 0, trueGain: 0.1, labelled: 1, gate: { judged: 'ppi' } }).input);
    const row = data.ppi?.find((r) => r.stratum === 'exact' && r.system === 'cand');
    expect(row?.unavailable).toBe('1 human-labelled query in exact; the PPI interval needs at least 10 per stratum');
    expect(data.gateResult?.verdict).toBe('INCONCLUSIVE');
  });
});

describe('decision-level validation', () => {
  it('a biased judge fails: the gate verdict does not reproduce under human labels; a serious judge-unvalidated warning', () => {
    const data = buildReportData(study({ bias: 0.08, trueGain: 0 }).input);
    const v = data.validation;
    expect(v?.gate).toEqual({ judge: 'ADOPT', human: 'INCONCLUSIVE', reproduces: false });
    expect(v?.pass).toBe(false);
    expect(v?.failures.join('; ')).toContain('the gate says ADOPT under the judge');
    const w = data.warnings.find((x) => x.code === 'judge-unvalidated');
    expect(w?.severity).toBe('serious');
    expect(w?.gate).toBe(true);
    expect(w?.message).toContain('failed validation on 50 human-labelled queries');
  });

  it('an unbiased judge passes: verdict and signs reproduce, tau 1; pair agreement is reported', () => {
    const data = buildReportData(study({ bias: 0, trueGain: 0.1 }).input);
    const v = data.validation;
    expect(v?.gate?.reproduces).toBe(true);
    expect(v?.tau?.value).toBe(1);
    expect(v?.tauAP?.value).toBe(1);
    expect(v?.signs.every((s) => s.reproduces)).toBe(true);
    expect(v?.pass).toBe(true);
    expect(v?.agreement.pairs).toBe(60);
    expect(v?.agreement.kappaQuadratic).toBeGreaterThan(0);
    expect(v?.agreement.alphaOrdinal).toBeGreaterThan(0);
    expect(v?.agreement.ac1).toBeGreaterThan(0);
    expect(data.warnings.some((x) => x.code === 'judge-unvalidated')).toBe(false);
  });

  it('a single labelled query: no rebuild, a failed validation that says why', () => {
    const input = study({ bias: 0, trueGain: 0.1 }).input;
    const labels = input.humanLabels as HumanLabelsInput;
    const one = {
      ...labels,
      queries: labels.queries.slice(0, 1),
      perQuery: { base: { 'nDCG@10': [0.1] }, cand: { 'nDCG@10': [0.2] }, other: { 'nDCG@10': [0] } },
    };
    const data = buildReportData({ ...input, humanLabels: one });
    expect(data.validation?.pass).toBe(false);
    expect(data.validation?.failures).toEqual(["1 human-labelled query among the report's, fewer than 25"]);
  });

  it('too few labelled queries fail the validation by the config threshold', () => {
    const data = buildReportData(study({ bias: 0, trueGain: 0.1, labelled: 10 }).input);
    expect(data.validation?.failures).toContain('20 human-labelled queries, fewer than 25');
  });

  it('judged qrels without human labels: a serious warning on the gate; gold qrels: none', () => {
    const input = study({ bias: 0, trueGain: 0.1, human: false }).input;
    const data = buildReportData(input);
    expect(data.validation).toBeUndefined();
    const w = data.warnings.find((x) => x.code === 'judge-unvalidated');
    expect(w?.severity).toBe('serious');
    expect(w?.message).toContain('with no human labels');
    const gold = buildReportData({ ...input, evalset: { ...input.evalset, qrelsSource: 'gold' } });
    expect(gold.warnings.some((x) => x.code === 'judge-unvalidated')).toBe(false);
  });

  it('human labels of another qrels version are flagged', () => {
    const input = study({ bias: 0, trueGain: 0.1 }).input;
    const data = buildReportData({ ...input, evalset: { ...input.evalset, judge: { model: 'judge-m', prompt: 'p', qrelsVersion: 'v2' } } });
    expect(data.warnings.find((x) => x.code === 'judge-unvalidated')?.message).toContain('qrels version v1, the report scores version v2');
  });
});

describe('rendering', () => {
  it('report.md and report.html show plain and PPI deltas side by side in the gate part, and the Validation section', () => {
    const data = buildReportData(study({ bias: 0.08, trueGain: 0, gate: { judged: 'ppi' } }).input);
    const md = renderMarkdown(data);
    const gate = md.slice(md.indexOf('## Gate'), md.indexOf('## Other warnings'));
    expect(gate).toContain('| stratum | n | delta (judge) | CI (judge) | delta (PPI) | CI (PPI) | PPI level | human-labelled |');
    expect(gate).toContain('The gate decides on the PPI-corrected interval');
    expect(gate).toContain('Judge validation: FAILED');
    expect(md).toContain('## Validation');
    expect(md).toContain('FAIL: the judge against 50 human-labelled queries (2 labelled in part, left out) from human.qrels, qrels version v1.');
    expect(md).toContain('Kendall tau');
    const html = renderHtml(data);
    expect(html).toContain('delta (PPI)');
    expect(html).toContain('<h2>Validation</h2>');
    expect(JSON.parse(JSON.stringify(data)).ppi.length).toBe(data.comparisons.length);
  });

  it('a judged report without labels says no validation was made; a gold one has no Validation section', () => {
    const input = study({ bias: 0, trueGain: 0.1, human: false }).input;
    const md = renderMarkdown(buildReportData(input));
    expect(md).toContain('Judge validation: none: the judge (judge-m, qrels version v1) was not checked against human labels');
    expect(renderMarkdown(buildReportData({ ...input, evalset: { ...input.evalset, qrelsSource: 'gold' } }))).not.toContain('## Validation');
  });
});
