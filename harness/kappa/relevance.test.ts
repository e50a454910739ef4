import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, UsageError } from '../errors.js';
import type { JudgmentRecord } from '../judge/store.js';
import { measureTable, reportedMeasure, reportedMeasures } from '../compare/measures.js';
import { parseMeasure } from '../metrics/measure.js';
import { decidingMeasure, relevantGrade } from '../metrics/relevant-grade.js';
import { runCaptured } from '../testing/cli.js';
import { tempJudgments } from '../testing/judgments.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { DEFAULT_RELEVANT_AT, kappaRelevance } from './relevance.js';

/**
 * Issue 41, item 4: the kappa check reads relevance where the decision's measure does. nDCG gains from grade 1,
 * so a judge that grades 1 where the human grades 0 inflates nDCG; a kappa split at grade 2 could not see it.
 */

describe('relevantGrade: the lowest grade a measure draws value from', () => {
  const grade = (spelling: string, relevanceLevel: number) => relevantGrade(parseMeasure(spelling), relevanceLevel);
  it('graded gains: the lowest grade 1-3 with a gain above 0 (linear, exp, or the gains table)', () => {
    expect(grade('nDCG@10', 2)).toBe(1);
    expect(grade('nDCG(gain=exp)@10', 2)).toBe(1);
    expect(grade('nDCG(gains={1:0,2:1,3:3})', 1)).toBe(2);
    expect(grade('nDCG(gains={1:0,2:0,3:0})', 1)).toBeUndefined();
    expect(grade('RBP', 3)).toBe(1);
  });
  it('binary measures: rel= or the config relevance level (trec_eval -l); no relevance at all: the level', () => {
    expect(grade('P@10', 2)).toBe(2);
    expect(grade('P(rel=3)@10', 1)).toBe(3);
    expect(grade('AP', 1)).toBe(1);
    expect(grade('Judged@10', 2)).toBe(2);
  });
  it('the deciding measure is the gate one, else the first tested one', () => {
    const read = reportedMeasures(['Judged@10', 'P@10', 'nDCG@10']);
    expect(decidingMeasure(read, reportedMeasure('nDCG@10'))?.spelling).toBe('nDCG@10');
    expect(decidingMeasure(read, undefined)?.spelling).toBe('P@10');
    expect(decidingMeasure(reportedMeasures(['Judged@10', 'Judged@20']), undefined)?.spelling).toBe('Judged@10');
    expect(decidingMeasure([], undefined)).toBeUndefined();
  });
});

describe('kappaRelevance: where the binary kappa splits', () => {
  const config = (gate: string | undefined, relevanceLevel = 1) => ({
    file: 'study.yaml',
    measures: ['nDCG@10', 'P@10'],
    parsedMeasures: measureTable(reportedMeasures(['nDCG@10', 'P@10'])),
    ...(gate === undefined ? {} : { gate: { measure: gate } }),
    relevanceLevel,
  });
  it('without a config grade 1, by hand any grade 1-3, with a config the gate measure', () => {
    expect(kappaRelevance({}).relevantAt).toBe(DEFAULT_RELEVANT_AT);
    expect(kappaRelevance({}).relevantFrom).toContain('the default');
    expect(kappaRelevance({ relevantAt: 2 })).toEqual({ relevantAt: 2, relevantFrom: 'set by --relevant-at 2' });
    expect(kappaRelevance({ config: config('P@10', 2) })).toEqual({ relevantAt: 2, relevantFrom: "the gate's P@10" });
    expect(kappaRelevance({ config: config('nDCG@10', 2) })).toEqual({ relevantAt: 1, relevantFrom: "the gate's nDCG@10" });
    expect(kappaRelevance({ config: config(undefined, 3) }).relevantFrom).toBe("nDCG@10, the config's first tested measure (no gate)");
  });
  it('refuses a split no binary kappa can check, and two sources at once', () => {
    expect(() => kappaRelevance({ relevantAt: 0 })).toThrow(UsageError);
    expect(() => kappaRelevance({ relevantAt: 1.5 })).toThrow('--relevant-at 1.5: give a grade 1, 2 or 3');
    expect(() => kappaRelevance({ relevantAt: 2, config: config('P@10') })).toThrow('--relevant-at and --config both');
    expect(() => kappaRelevance({ config: config('P@10', 4) })).toThrow(ConfigError);
    expect(() => kappaRelevance({ config: config('P@10', 4) })).toThrow("the gate's P@10 counts grade 4 and above as relevant");
  });
});

/** `n` judged pairs; the judge grades pair i `judge(i)`. */
function judgments(n: number, judge: (i: number) => number): Promise<string> {
  const records: JudgmentRecord[] = Array.from({ length: n }, (_, i) => ({
    queryId: `q${i}`,
    docId: `d${i}`,
    stratum: i % 2 === 0 ? 'exact' : 'multi-hop',
    status: 'judged' as const,
    grade: judge(i),
    samples: [judge(i)],
    parseFailures: 0,
  }));
  return tempJudgments('kappa-relevance', records, '0123456789abcdef');
}

/** Labels every pair of `judgments(n, ..)` with `human`. */
function labels(dir: string, n: number, human: (i: number) => number): void {
  writeFileSync(join(dir, 'human.txt'), Array.from({ length: n }, (_, i) => `q${i} 0 d${i} ${human(i)}`).join('\n'));
}

const kappa = (dir: string, ...more: string[]) =>
  runCaptured(['kappa', '--judgments', 'judgments', '--labels', 'human.txt', '--resamples', '50', ...more], dir);

describe('harness kappa checks the relevance the decision uses', () => {
  it('0% agreement (judge 1, human 0 on every pair): FAIL, exit 1, with the split and where it comes from', async () => {
    const dir = await judgments(60, () => 1);
    labels(dir, 60, () => 0);
    const r = await kappa(dir);
    expect(r.code, r.stderr).toBe(1);
    expect(r.out).toContain(
      "  binary      0.000 [0.000, 0.000]  (relevant at grade >= 1, the default: trec_eval's relevance level 1, where nDCG's gains start; --config reads the gate's measure)\n",
    );
    expect(r.out).toContain('raw agreement: 0.0% on grades, 0.0% on relevance (grade >= 1)');
    expect(r.out).toContain('kappa check: FAIL: raw agreement 0.0% (human and judge differ on every pair)');
    expect(r.out).toContain('weighted (quadratic) kappa 0.000');
    expect(r.out).not.toContain('UNDEFINED');
    expect(r.stderr).toContain('kappa check FAIL');
  });

  it('0% agreement is FAIL on any kappa and at any threshold, even one kappa 0 reaches', async () => {
    const dir = await judgments(60, () => 1);
    labels(dir, 60, () => 0);
    for (const on of ['none', 'quadratic']) expect((await kappa(dir, '--on', on, '--threshold', '0')).out).toContain('kappa check: FAIL: raw agreement 0.0%');
  });

  it('one category only, agreed on every pair: UNDEFINED with 100% raw agreement, exit 1; --relevant-at 2 shows the old blindness', async () => {
    const dir = await judgments(60, () => 0);
    labels(dir, 60, () => 0);
    const r = await kappa(dir);
    expect(r.code).toBe(1);
    expect(r.out).toContain('kappa check: UNDEFINED: binary kappa (relevant at grade >= 1, the default');
    expect(r.out).toContain('both raters call every pair not relevant (grade < 1), raw agreement 100.0% on a sample without variation');
    expect(r.stderr).toContain('kappa check UNDEFINED');
    // The pairs split at grade 2: both sides "not relevant", agreement 100%: the grade-1 inflation is invisible.
    const judged1 = await judgments(60, () => 1);
    labels(judged1, 60, () => 0);
    const at2 = await kappa(judged1, '--relevant-at', '2');
    expect(at2.out).toContain('kappa check: UNDEFINED: binary kappa (relevant at grade >= 2, set by --relevant-at 2)');
  });

  it('one grade only on the 0-3 scale, agreed: UNDEFINED there too; agreement with both categories: PASS, exit 0', async () => {
    const one = await judgments(60, () => 1);
    labels(one, 60, () => 1);
    const r = await kappa(one, '--on', 'none');
    expect(r.out).toContain('kappa check: UNDEFINED: unweighted kappa is undefined: both raters call every pair grade 1');
    expect(r.code).toBe(1);
    const two = await judgments(60, (i) => i % 2);
    labels(two, 60, (i) => i % 2);
    const pass = await kappa(two);
    expect(pass.out).toContain(
      "kappa check: PASS: binary kappa (relevant at grade >= 1, the default: trec_eval's relevance level 1, where nDCG's gains start; --config reads the gate's measure) 1.000 >= threshold 0.6; raw agreement 100.0%; weighted (quadratic) kappa 1.000",
    );
    expect(pass.code, pass.stderr).toBe(0);
  });

  it('--config: the split is read from the gate measure and the relevance level, and printed', async () => {
    const dir = await judgments(60, () => 1);
    labels(dir, 60, (i) => (i % 3 === 0 ? 2 : 1));
    const es = join(PROJECT_ROOT, 'evalset', 'examples', 'alex-memory');
    const study = (measure: string) =>
      [
        'name: k',
        `evalset: { format: memory, path: ${es} }`,
        'measures: [nDCG@10, P@10]',
        'relevanceLevel: 2',
        'arms:',
        '  - { id: a, kind: bm25 }',
        '  - { id: b, kind: bm25, params: { k1: 1.2 } }',
        'compare: { baseline: a }',
        `gate: { candidate: b, measure: ${measure} }`,
      ].join('\n');
    writeFileSync(join(dir, 'ndcg.yaml'), study('nDCG@10'));
    writeFileSync(join(dir, 'p.yaml'), study('P@10'));
    const ndcg = await kappa(dir, '--config', 'ndcg.yaml');
    expect(ndcg.out, ndcg.stderr).toContain("(relevant at grade >= 1, the gate's nDCG@10)");
    // Every pair is relevant at grade 1 to both: agreement is perfect and kappa undefined.
    expect(ndcg.out).toContain('kappa check: UNDEFINED');
    const p = await kappa(dir, '--config', 'p.yaml');
    expect(p.out).toContain("(relevant at grade >= 2, the gate's P@10)");
    expect(p.out).toContain('raw agreement: 66.7% on grades, 66.7% on relevance (grade >= 2)');
    expect(p.out).toContain("kappa check: FAIL: binary kappa (relevant at grade >= 2, the gate's P@10) 0.000 < threshold 0.6; raw agreement 66.7%");
    expect(p.code).toBe(1);
    const both = await kappa(dir, '--config', 'p.yaml', '--relevant-at', '1');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--relevant-at and --config both');
  });
});
