import { describe, expect, it } from 'vitest';
import { answerLevelOf } from '../answer/section.js';
import { gateSchema } from '../compare/config.js';
import { ANSWER_OPTIONS, ANSWER_QUESTIONS, ANSWERED_SYSTEMS, auditOf, systemOf } from '../report/testdata/answer-level.js';
import { fixtureInput } from '../report/testdata/fixture.js';
import { answerAuditFindings, answerLevelWarnings, failureCount, HIGH_FLIP_RATE } from './answer-level.js';
import { buildReportData } from './build.js';
import type { GateResult } from './types.js';

const level = answerLevelOf(ANSWER_QUESTIONS, ANSWERED_SYSTEMS, ANSWER_OPTIONS);

/** A gate result on `measure` comparing dense against bm25 (the warnings read only its config). */
function gateOn(measure: string): GateResult {
  return { verdict: 'ADOPT', reason: 'r', config: { ...gateSchema.parse({ candidate: 'dense', measure }), baseline: 'bm25' } };
}

describe('answer level warnings', () => {
  it('none without an answer level', () => {
    expect(answerLevelWarnings({})).toEqual([]);
  });

  it('one warning for every system with failures, and one for a judge that flips above the threshold', () => {
    const ws = answerLevelWarnings({ answerLevel: level });
    expect(ws.map((w) => [w.code, w.severity, w.subject, w.gate])).toEqual([
      ['answer-failures', 'warning', 'bm25, dense, mem0', false],
      ['judge-flip-rate', 'warning', 'bm25', false],
    ]);
    // bm25 1 reader failure, dense 1 judge + 1 sensitive, mem0 1 missing row (and 2 unmapped rows): 4 of 3 x 8.
    expect(ws[0]?.message).toContain('4 of 24 answers have no usable outcome');
    expect(ws[0]?.message).toContain('6 of 8 questions kept');
    expect(ws[0]?.message).toContain('dense (1 judge, 1 skipped as sensitive)');
    expect(ws[0]?.message).toContain('mem0 (1 with no answer row, 2 answers-file rows mapped to no question)');
    // bm25: 2 answers of 7 split 2-1 over 3 samples: mean flip rate 2/21 = 9.5%.
    expect(ws[1]?.message).toContain('bm25: mean flip rate 9.5%, 2 of 7 answers split over 3 samples');
    expect(2 / 21).toBeGreaterThan(HIGH_FLIP_RATE);
  });

  it('bear on the gate only when it decides on an answer measure and compares a system they name', () => {
    expect(answerLevelWarnings({ answerLevel: level, gateResult: gateOn('nDCG@10') }).map((w) => w.gate)).toEqual([false, false]);
    expect(answerLevelWarnings({ answerLevel: level, gateResult: gateOn('Acc') }).map((w) => w.gate)).toEqual([true, true]);
  });

  it('say nothing when nothing failed and the judge agrees with itself', () => {
    const clean = answerLevelOf(ANSWER_QUESTIONS, [systemOf('a', 'reader', 'CCWWCCWW', { samples: Array(8).fill('') })], { protocol: 'generic', pairs: [] });
    expect(failureCount(clean.systems[0]!.failures)).toBe(0);
    expect(answerLevelWarnings({ answerLevel: clean })).toEqual([]);
  });

  it('ungraded answers are no failure', () => {
    expect(failureCount({ reader: 1, judge: 2, sensitive: 3, missing: 4, ungraded: 100 })).toBe(10);
  });
});

describe('the answer level in the decision stage', () => {
  const gate = { candidate: 'dense', measure: 'nDCG@10' } as const;
  const plain = buildReportData(fixtureInput({ gate }));
  const withAnswers = buildReportData({ ...fixtureInput({ gate }), answerLevel: level });

  it('adds its warnings to the report, and keeps the answer level in report.json', () => {
    const codes = withAnswers.warnings.map((w) => w.code);
    expect(codes).toContain('answer-failures');
    expect(codes).toContain('judge-flip-rate');
    expect(plain.warnings.map((w) => w.code)).not.toContain('answer-failures');
    expect(JSON.parse(JSON.stringify(withAnswers)).answerLevel).toEqual(level);
  });

  it('never changes the verdict or its qualifiers: its warnings are caveats of severity warning', () => {
    expect(withAnswers.decision).toEqual(plain.decision);
    expect(withAnswers.warnings.filter((w) => w.code.startsWith('answer') || w.code === 'judge-flip-rate').every((w) => w.severity === 'warning')).toBe(true);
  });
});

describe('the answer judge audit in the decision stage', () => {
  const fooled = answerLevelOf(ANSWER_QUESTIONS, ANSWERED_SYSTEMS, { ...ANSWER_OPTIONS, audit: auditOf('fooled') });
  const sound = answerLevelOf(ANSWER_QUESTIONS, ANSWERED_SYSTEMS, { ...ANSWER_OPTIONS, audit: auditOf('sound') });
  const auditWarnings = (l: typeof fooled, measure?: string) =>
    answerLevelWarnings({ answerLevel: l, ...(measure === undefined ? {} : { gateResult: gateOn(measure) }) }).filter((w) => w.code === 'answer-judge-audit');

  it('finds the probes accepted above maxAcceptRate and a gold control accepted below 1 minus it; a probe nobody graded says nothing', () => {
    const f = answerAuditFindings(fooled.judgeAudit!);
    expect(f.fooled.map((p) => p.probe)).toEqual(['candidates', 'padding']);
    expect(f.goldRejected.map((p) => p.probe)).toEqual(['gold']);
    // sound: padding accepted in 1 of 10 (0.1, within 0.2), the gold in 10 of 10.
    expect(answerAuditFindings(sound.judgeAudit!)).toEqual({ fooled: [], goldRejected: [] });
    expect(auditWarnings(sound, 'Acc')).toEqual([]);
  });

  it('is serious and on the gate when the gate decides on Acc and the audited judge graded a system it compares; a warning otherwise', () => {
    const [onAcc] = auditWarnings(fooled, 'Acc');
    expect(onAcc).toMatchObject({ code: 'answer-judge-audit', severity: 'serious', gate: true, subject: 'binary/judge-m' });
    expect(onAcc?.message).toContain('candidates accepted in 60.0% of 10, padding accepted in 30.0% of 10 probed answers (above 20.0%)');
    expect(onAcc?.message).toContain('the gold answer itself gold accepted in 70.0% of 10 times (below 80.0%)');
    expect(onAcc?.message).toContain('It graded bm25, dense');
    expect(auditWarnings(fooled, 'nDCG@10')).toMatchObject([{ severity: 'warning', gate: false }]);
    expect(auditWarnings(fooled, 'F1-LoCoMo')).toMatchObject([{ severity: 'warning', gate: false }]);
    expect(auditWarnings(fooled)).toMatchObject([{ severity: 'warning', gate: false }]);
    // A gate on Acc between systems the audited judge never graded (recorded grades): not on the gate.
    const recorded = answerLevelOf(ANSWER_QUESTIONS, [ANSWERED_SYSTEMS[2]!, systemOf('mem0-b', 'answers-file', 'CWCWCWCW', { judge: 'recorded:mem0' })], {
      protocol: 'generic',
      pairs: [],
      audit: auditOf('fooled'),
    });
    const gate: GateResult = { verdict: 'ADOPT', reason: 'r', config: { ...gateSchema.parse({ candidate: 'mem0-b', measure: 'Acc' }), baseline: 'mem0' } };
    expect(answerLevelWarnings({ answerLevel: recorded, gateResult: gate }).find((w) => w.code === 'answer-judge-audit')).toMatchObject({
      severity: 'warning',
      gate: false,
    });
  });

  it('qualifies the verdict of a gate on Acc (ADR 0044), and leaves a gate on nDCG@10 as it was', () => {
    const accGate = { candidate: 'dense', measure: 'Acc' } as const;
    const base = fixtureInput({ gate: accGate });
    // The fixture scores retrieval measures; a gate on Acc reads per-question Acc values of every run.
    const acc: Readonly<Record<string, number[]>> = {
      bm25: base.queries.map((_, i) => i % 2),
      dense: base.queries.map(() => 1),
      hybrid: base.queries.map((_, i) => i % 2),
    };
    const perQuery = Object.fromEntries(Object.entries(base.perQuery).map(([run, m]) => [run, { ...m, Acc: acc[run] ?? [] }]));
    const withAcc = { ...base, measures: [...base.measures, 'Acc'], perQuery };
    const clean = buildReportData({ ...withAcc, answerLevel: sound });
    const biased = buildReportData({ ...withAcc, answerLevel: fooled });
    expect(clean.decision?.qualifiers.join('; ') ?? '').not.toContain('answer-judge-audit');
    expect(biased.decision?.verdict).toBe(clean.decision?.verdict);
    expect(biased.decision?.qualifiers).toContain('serious warning on the gate: answer-judge-audit');
    expect(biased.decision?.headline).toContain('answer-judge-audit');
    expect(biased.warnings.find((w) => w.code === 'answer-judge-audit')).toMatchObject({ severity: 'serious', gate: true });
    const ndcg = fixtureInput({ gate: { candidate: 'dense', measure: 'nDCG@10' } });
    expect(buildReportData({ ...ndcg, answerLevel: fooled }).decision).toEqual(buildReportData({ ...ndcg, answerLevel: sound }).decision);
  });
});
