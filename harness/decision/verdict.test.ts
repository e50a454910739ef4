import { describe, expect, it } from 'vitest';
import { fixtureInput } from '../report/testdata/fixture.js';
import { renderMarkdown } from '../report/markdown.js';
import { buildReportData } from './build.js';
import type { Validation } from './evidence-types.js';
import type { ReportInput } from './types.js';
import { decide, GATE_EXIT } from './verdict.js';

const gated = (over: Partial<ReportInput> = {}, gate: Record<string, unknown> = {}): ReportInput => {
  const base = fixtureInput({ gate: { candidate: 'dense', measure: 'nDCG@10', ...gate }, compare: { test: 't' } });
  return { ...base, ...over };
};

const judged = (input: ReportInput, grades?: Record<string, number[]>): ReportInput => ({
  ...input,
  evalset: {
    ...input.evalset,
    qrelsSource: 'judged',
    judge: { model: 'm', prompt: 'umbrela@abc', qrelsVersion: 'v1', ...(grades ? { grades } : {}) },
  },
});

describe('the Decision: one verdict with its qualifiers and exit status', () => {
  it('on gold qrels: the gate verdict, no qualifier on the judge, exit by verdict alone', () => {
    const d = buildReportData(gated()).decision;
    expect(d?.basis).toBe('gold');
    expect(d?.judge).toBeUndefined();
    expect(d?.headline.startsWith(d.verdict)).toBe(true);
    expect(d?.exitCode).toBe(d?.verdict === 'REJECT' ? GATE_EXIT.reject : GATE_EXIT.stands);
    // The substitute gate candidate is named in the headline, not buried among repeated warnings.
    expect(d?.qualifiers).toContain('dense is a substitute');
  });

  it('on judge labels with no human labels: "judge not validated", exit 4, and the report leads with it', () => {
    const data = buildReportData(judged(gated(), { exact: [10, 2, 0, 0], paraphrase: [0, 12, 0, 0], all: [10, 14, 0, 0] }));
    const d = data.decision;
    expect(d?.headline).toMatch(/^(ADOPT|REJECT|INCONCLUSIVE) on judge labels; judge not validated \(no human labels\)/);
    expect(d?.exitCode).toBe(GATE_EXIT.judgeUnvalidated);
    const md = renderMarkdown(data);
    expect(md).toContain(`**${d?.headline}**`);
    expect(md).toContain('| paraphrase | 12 | 0 (0%) | 12 (100%) | 0 (0%) | 0 (0%) |');
  });

  it('gate.judgeValidation: optional keeps the qualifier in the sentence but lets the verdict code stand', () => {
    const d = buildReportData(judged(gated({}, { judgeValidation: 'optional' }))).decision;
    expect(d?.headline).toContain('judge not validated');
    expect(d?.exitCode).not.toBe(GATE_EXIT.judgeUnvalidated);
  });

  it('a FAILED validation is in the headline, with what the human labels say', () => {
    const base = buildReportData(judged(gated()));
    const validation: Validation = {
      labelsFile: 'labels.json',
      qrelsVersion: 'v1',
      labelledQueries: 24,
      incompleteQueries: 0,
      measure: 'nDCG@10',
      signs: [],
      gate: { judge: base.gateResult?.verdict as string, human: 'INCONCLUSIVE', reproduces: base.gateResult?.verdict === 'INCONCLUSIVE' },
      agreement: { pairs: 0 },
      thresholds: { minQueries: 20, minTau: 0.8, resamples: 0 },
      pass: false,
      failures: ['the gate says X under the judge and INCONCLUSIVE under the human labels'],
    };
    const d = decide({ ...base, validation }, base.gateResult as NonNullable<typeof base.gateResult>, base.warnings);
    expect(d.headline).toContain('judge validation FAILED');
    expect(d.exitCode).toBe(GATE_EXIT.judgeUnvalidated);
  });

  it('labels of another qrels version do not validate these judgments', () => {
    const base = buildReportData(judged(gated()));
    const v = { qrelsVersion: 'v0', pass: true, failures: [] } as unknown as Validation;
    expect(decide({ ...base, validation: v }, base.gateResult as NonNullable<typeof base.gateResult>, []).headline).toContain(
      'judge not validated on these judgments',
    );
  });

  it('a gold-only verdict that differs is a qualifier', () => {
    const input = { ...judged(gated()), goldOnly: { verdict: 'REJECT' as const, reason: 'r', judgedQueries: 24 } };
    const d = buildReportData(input).decision;
    if (d?.verdict !== 'REJECT') expect(d?.qualifiers).toContain('gold qrels alone give REJECT');
    expect(renderMarkdown(buildReportData(input))).toContain('On gold qrels alone (24 queries with gold judgments), the gate says REJECT');
  });
});

describe('answers: head-to-head questions and the best per stratum', () => {
  it('a question is its own family and its answer names the better system or neither', () => {
    const input = fixtureInput({ compare: { test: 't', questions: [{ id: 'dense-vs-hybrid', baseline: 'dense', system: 'hybrid', measure: 'nDCG@10' }] } });
    const data = buildReportData(input);
    const rows = data.comparisons.filter((c) => c.family === 'question dense-vs-hybrid');
    expect(rows.map((c) => c.stratum).sort()).toEqual(['all', 'exact', 'paraphrase']);
    const q = data.answers.questions[0];
    expect(q?.sentence).toMatch(
      /^dense-vs-hybrid: (dense is better than hybrid|hybrid is better than dense|neither hybrid nor dense is significantly better) on nDCG@10 overall/,
    );
    expect(renderMarkdown(data)).toContain('## Answers');
  });

  it('adding a question does not move the gate', () => {
    const plain = buildReportData(gated());
    const asked = buildReportData(
      gated({ compare: { ...gated().compare, questions: [{ id: 'q', baseline: 'dense', system: 'hybrid', role: 'confirmatory' }] } }),
    );
    expect(asked.gateResult).toEqual(plain.gateResult);
  });

  it('the best per stratum tests every other system against it, in a family of its own', () => {
    const data = buildReportData(fixtureInput({ compare: { test: 't' } }));
    // paraphrase: dense (0.4/0.6 alternating) above bm25 (0.2) in every query, and above hybrid in all but three.
    const b = data.answers.best.find((x) => x.stratum === 'paraphrase');
    expect(b?.best).toBe('dense');
    expect(b?.worse).toContain('bm25');
    expect([...(b?.notWorse ?? []), ...(b?.worse ?? [])].sort()).toEqual(['bm25', 'hybrid']);
    // exact: bm25 and dense tie at 0.5 in every query (bm25 first in run order), so dense is not worse.
    const e = data.answers.best.find((x) => x.stratum === 'exact');
    expect(e).toMatchObject({ best: 'bm25' });
    expect(e?.notWorse).toContain('dense');
    // The answers add no comparison to the report's own, so nothing the gate reads moves.
    expect(data.comparisons).toEqual(buildReportData(fixtureInput({ compare: { test: 't' } })).comparisons);
  });

  it('a question naming an unknown run is refused', () => {
    const input = fixtureInput({ compare: { questions: [{ id: 'x', baseline: 'nope', system: 'dense' }] } });
    expect(() => buildReportData(input)).toThrow(/compare\.questions\[0\]\.baseline: unknown run "nope"/);
  });
});
