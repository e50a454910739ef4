import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'csv-stringify/sync';
import { answerLevelOf } from '../answer/section.js';
import type { AnswerQuestion } from '../answer/types.js';
import { buildReportData } from '../decision/build.js';
import { compileReportTex, PDFLATEX, PDFLATEX_MISSING } from '../testing/pdflatex.js';
import { tempDir } from '../testing/temp.js';
import { ANSWER_SECTION, answerComparisonRows, answerLevelBlocks, fmtUsd, MCNEMAR_FAMILY, renderAnswersCsv } from './answer-level.js';
import { renderComparisonsCsv } from './csv.js';
import { renderHtml } from './html.js';
import { latexEscape, renderLatex } from './latex.js';
import { renderMarkdown } from './markdown.js';
import { blocksToHtml, blocksToMarkdown } from './systems.js';
import { esc } from './svg.js';
import { wilsonInterval } from '../stats/wilson.js';
import { ANSWER_OPTIONS, ANSWER_QUESTIONS, ANSWERED_SYSTEMS, auditOf, systemOf } from './testdata/answer-level.js';
import { fixtureInput } from './testdata/fixture.js';

const gate = { candidate: 'dense', measure: 'nDCG@10' } as const;
const level = answerLevelOf(ANSWER_QUESTIONS, ANSWERED_SYSTEMS, ANSWER_OPTIONS);
const data = buildReportData({ ...fixtureInput({ gate }), answerLevel: level });
const plain = buildReportData(fixtureInput({ gate }));

/** A LongMemEval and a LoCoMo answer level, for their aggregate tables. */
function protocolLevel(protocol: 'longmemeval' | 'locomo') {
  const qs: AnswerQuestion[] = ['single-session-user', 'multi-session', 'knowledge-update', 'multi-session'].map((t, i) => ({
    id: i === 3 ? 'q4_abs' : `q${i + 1}`,
    text: 't',
    gold: 'g',
    stratum: protocol === 'locomo' ? `c${i + 2}` : t,
    ...(protocol === 'locomo' ? { category: i + 2 } : { questionType: t }),
    abstention: i === 3,
    evidence: [],
  }));
  const s = systemOf('s', 'reader', 'CWCC');
  return answerLevelOf(qs, [{ ...s, outcomes: s.outcomes.map((o, i) => ({ ...o, questionId: qs[i]!.id })) }], { protocol, pairs: [] });
}

describe('the answer level section', () => {
  it('renders as Markdown (snapshot)', async () => {
    await expect(blocksToMarkdown(answerLevelBlocks(data)).join('\n')).toMatchFileSnapshot('./__snapshots__/answer-level.md');
  });

  it('renders as HTML (snapshot)', async () => {
    await expect(blocksToHtml(answerLevelBlocks(data), esc).join('\n')).toMatchFileSnapshot('./__snapshots__/answer-level.html');
  });

  it('shows the hand-checked numbers, every table over the 6 kept questions and own accuracy apart', () => {
    const md = blocksToMarkdown(answerLevelBlocks(data)).join('\n');
    expect(md).toContain('Every accuracy, lexical mean and test below is over the 6 kept questions');
    // bm25 on the kept q1-q6: 3 of 6; the pair rows: b / c and p of McNemar on the same 6.
    expect(md).toContain('| bm25 | all | 6 | 3 | 0.5000 |');
    expect(md).toContain('| dense vs bm25 | all | 6 | 0.5000 | 0.6667 | +0.1667 | 1 / 2 | 1.0000 | 1.0000 |');
    expect(md).toContain('| mem0 vs bm25 | all | 6 | 0.5000 | 0.8333 | +0.3333 | 0 / 2 | 0.5000 | 1.0000 |');
    // Attribution of bm25 on q1-q6: 2/1 in context, 0/2 missing; retrieval misses 2 of 3 wrong answers.
    expect(md).toContain('| bm25 | 5 | 2 / 1 | 0 / 2 | 0.6667 | 0.0000 | 66.7% | 33.3% | 1 |');
    // Cost of bm25 over every question: $0.00094 reader, $0.000546 judge, $0.001486 in all, over 4 correct answers.
    expect(md).toContain('| bm25 | reader-m | 800 / 70 | judge-m | 1050 / 21 | $0.00094 | $0.00055 | $0.0015 | $0.00037 |');
    expect(md).toContain('| mem0 | answers-file | 8 | 7 | 0 | 0 | 0 | 1 | 0 |');
    expect(md).toContain('- mem0: 2 answers-file rows mapped to no question; 1 question with no row');
    // Own accuracy, labelled as not the summary's: bm25 4 of its 7 graded (q8 included).
    expect(md).toContain("It is not the summary's Acc nor what the gate compares");
    expect(md).toContain('| bm25 | 7 | 4 | 0.5714 | [0.2505, 0.8418] |');
  });

  it("never shows an accuracy for a system that differs from the summary's Acc without a label", () => {
    const a = data.answerLevel!;
    const acc = (run: string) => level.systems.find((s) => s.id === run)!.strata.at(-1)!.accuracy;
    // The summary's Acc of a report is the mean over its queries, which are the kept questions.
    for (const s of a.systems) expect(s.strata.at(-1)?.n).toBe(a.kept);
    expect(['bm25', 'dense', 'mem0'].map(acc)).toEqual([3 / 6, 4 / 6, 5 / 6]);
    // Nothing failed: one accuracy per system, no own-accuracy table.
    const clean = answerLevelOf(ANSWER_QUESTIONS, [systemOf('a', 'reader', 'CCWWCCWW')], { protocol: 'generic', pairs: [] });
    const md = blocksToMarkdown(answerLevelBlocks({ ...data, answerLevel: clean })).join('\n');
    expect(md).toContain('is over all 8 questions (no system failed on any)');
    expect(md).not.toContain('own accuracy');
  });

  it('shows only what exists when nobody graded: lexical means, failures and cost, no accuracy or McNemar table', () => {
    const lexical = [{ 'F1-LoCoMo': 0.5, 'F1-set': 0.4, EM: 0 }];
    const ungraded = answerLevelOf(
      ANSWER_QUESTIONS,
      [
        systemOf('bm25', 'reader', 'UUUUUUUU', { lexical: Array(8).fill(lexical[0]) }),
        systemOf('fts5', 'reader', 'UUUUUUUU', { lexical: Array(8).fill(lexical[0]) }),
      ],
      { protocol: 'generic', pairs: [{ baseline: 'bm25', system: 'fts5' }] },
    );
    const view = { ...data, answerLevel: ungraded };
    const md = blocksToMarkdown(answerLevelBlocks(view)).join('\n');
    expect(md).toContain('No answer was graded (no answer judge is configured and no grade was recorded): lexical measures only, no accuracy.');
    for (const absent of [
      '### Accuracy by stratum',
      '### Protocol aggregates',
      '### Paired comparisons',
      '### Judge variance',
      '### Attribution',
      'own accuracy',
    ])
      expect(md).not.toContain(absent);
    expect(md).toContain('| bm25 | F1-LoCoMo | 8 | 0.5000 |');
    expect(md).toContain('| bm25 | F1-set | 8 | 0.4000 |');
    expect(md).toContain('### Failures');
    expect(md).toContain('### Answer cost');
    expect(renderComparisonsCsv(view)).not.toContain(MCNEMAR_FAMILY);
    expect(renderAnswersCsv(view)?.trimEnd().split('\n')).toHaveLength(1);
  });

  it('shows the answer judge audit: each probe with its accepted rate, interval and status, the gold control last', () => {
    const audited = answerLevelOf(ANSWER_QUESTIONS, ANSWERED_SYSTEMS, { ...ANSWER_OPTIONS, audit: auditOf('fooled') });
    const md = blocksToMarkdown(answerLevelBlocks({ ...data, answerLevel: audited })).join('\n');
    expect(md).toContain('### Answer judge audit');
    expect(md).toContain('The judge binary/judge-m, which graded bm25, dense, was given probed answers made from 7 questions (seed 1');
    const [lo, hi] = wilsonInterval(6, 10);
    expect(md).toContain('- candidates: the candidates probe');
    expect(md).toContain(`| candidates | reject | 10 | 6 | 60.0% | [${lo.toFixed(4)}, ${hi.toFixed(4)}] | 1 | FOOLED (accepted above the threshold) |`);
    // 2 of 10 is not above 0.2: within the threshold.
    expect(md).toMatch(/\| dont-know \| reject \| 10 \| 2 \| 20\.0% .* \| ok \|/);
    expect(md).toContain('| negated | reject | 0 | 0 | n/a | n/a | 1 | not graded |');
    expect(md).toMatch(/\| gold \| accept \| 10 \| 7 \| 70\.0% .* REJECTS GOLD \(accepted below 1 - threshold\) \|/);
    expect(md.indexOf('### Answer judge audit')).toBeLessThan(md.indexOf('### Failures'));
    expect(blocksToMarkdown(answerLevelBlocks(data)).join('\n')).not.toContain('Answer judge audit');
  });

  it("stands in report.md and report.html after the study's answers, and nowhere without an answer level", () => {
    const md = renderMarkdown(data);
    expect(md.indexOf(`## ${ANSWER_SECTION}`)).toBeGreaterThan(md.indexOf('## Gate'));
    expect(md.indexOf(`## ${ANSWER_SECTION}`)).toBeLessThan(md.indexOf('## Other warnings'));
    expect(renderHtml(data)).toContain(`<h2>${ANSWER_SECTION}</h2>`);
    expect(renderMarkdown(plain)).not.toContain(ANSWER_SECTION);
    expect(renderHtml(plain)).not.toContain(ANSWER_SECTION);
    expect(renderLatex(plain)).not.toContain(ANSWER_SECTION);
    expect(answerLevelBlocks(plain)).toEqual([]);
  });

  it("labels each protocol's aggregates as the protocol reports them", () => {
    const lme = blocksToMarkdown(answerLevelBlocks({ ...data, answerLevel: protocolLevel('longmemeval') })).join('\n');
    expect(lme).toContain('### Protocol aggregates (LongMemEval)');
    // Types ssu 1/1, ms 1/2 (q4_abs right), ku 1/1: task-averaged (1 + 0.5 + 1) / 3.
    expect(lme).toContain('| s | task-averaged (mean of 3 type accuracies) |  |  | 0.8333 | n/a (a mean of means) |');
    expect(lme).toContain('| s | abstention (_abs questions) | 1 | 1 | 1.0000 |');
    expect(lme).toContain('| s | overall without abstention | 3 | 2 | 0.6667 |');
    const locomo = blocksToMarkdown(answerLevelBlocks({ ...data, answerLevel: protocolLevel('locomo') })).join('\n');
    expect(locomo).toContain('| s | 5 adversarial | 1 | 1 | 1.0000 |');
    expect(locomo).toContain('| s | overall on categories 1-4 | 3 | 2 | 0.6667 |');
    expect(locomo).toContain('| s | overall with category 5 (adversarial) | 4 | 3 | 0.7500 |');
  });

  it('says so when the judge sampled each answer once', () => {
    const once = answerLevelOf(ANSWER_QUESTIONS, [systemOf('a', 'reader', 'CCCCCCCC')], { protocol: 'generic', pairs: [] });
    expect(blocksToMarkdown(answerLevelBlocks({ ...data, answerLevel: once })).join('\n')).toContain(
      "One judge sample per answer: the judge's variance was not measured",
    );
  });

  it('formats dollars', () => {
    expect([fmtUsd(null), fmtUsd(0), fmtUsd(0.000123), fmtUsd(0.05), fmtUsd(0.5), fmtUsd(12.345)]).toEqual([
      'n/a',
      '$0',
      '$0.00012',
      '$0.050',
      '$0.50',
      '$12.35',
    ]);
  });
});

describe('the answer level in CSV', () => {
  it('adds the McNemar tests to comparisons.csv under their own test and family, cells by column name', () => {
    const lines = renderComparisonsCsv(data).trimEnd().split('\n');
    const header = (lines[0] as string).split(',');
    const rows = lines.filter((l) => l.includes(MCNEMAR_FAMILY)).map((l) => Object.fromEntries(l.split(',').map((v, i) => [header[i], v])));
    expect(rows).toHaveLength(6);
    expect(rows[0]).toMatchObject({ stratum: 'all', n: '6', measure: 'Acc', system: 'dense', baseline: 'bm25', test: 'mcnemar-exact', p: '1', pAdjusted: '1' });
    expect(rows[3]).toMatchObject({ stratum: 'all', n: '6', system: 'mem0', wins: '2', losses: '0' });
    expect(rows[0]).toMatchObject({ wins: '2', ties: '3', losses: '1', significant: 'false', role: 'exploratory', ciLo: '', mde: '' });
    expect(renderComparisonsCsv(plain)).not.toContain(MCNEMAR_FAMILY);
    expect(answerComparisonRows(plain, header)).toEqual([]);
  });

  it('writes answers.csv: strata, then protocol aggregates, then own accuracy, at full precision', () => {
    const csv = renderAnswersCsv(data) as string;
    const lines = csv.trimEnd().split('\n');
    expect(lines[0]).toBe('system,source,group,label,n,correct,accuracy,ciLo,ciHi,level');
    const [lo, hi] = level.systems[0]!.strata[2]!.interval!;
    expect(lines[3]).toBe(stringify([['bm25', 'reader', 'stratum', 'all', '6', '3', String(3 / 6), String(lo), String(hi), '0.95']]).trimEnd());
    expect(lines[4]).toContain('bm25,reader,generic,overall (abstention questions included),6,3,');
    expect(lines[6]).toContain(`bm25,reader,own,own graded questions,7,4,${4 / 7},`);
    // 3 systems x (3 strata + 2 generic rows + own accuracy).
    expect(lines).toHaveLength(1 + 3 * 6);
    expect(renderAnswersCsv(plain)).toBeUndefined();
  });
});

if (!PDFLATEX) process.stderr.write(`[skip] the answer level in report.tex: ${PDFLATEX_MISSING}\n`);

describe.skipIf(!PDFLATEX)('the answer level in report.tex', () => {
  it('compiles with pdflatex, specials in system names included', async () => {
    const odd = answerLevelOf(ANSWER_QUESTIONS, [...ANSWERED_SYSTEMS, systemOf('mem_0 & "ménage" #2|x', 'answers-file', 'CWCWCWCW')], {
      ...ANSWER_OPTIONS,
      pairs: [...ANSWER_OPTIONS.pairs, { baseline: 'bm25', system: 'mem_0 & "ménage" #2|x' }],
    });
    const tex = renderLatex({ ...data, answerLevel: odd });
    expect(tex).toContain(`\\subsection*{${ANSWER_SECTION}}`);
    expect(tex).toContain(latexEscape('mem_0 & "ménage" #2|x'));
    const dir = tempDir('harness-answer-tex');
    await writeFile(join(dir, 'report.tex'), tex);
    expect(compileReportTex(dir)).toBe(true);
  }, 60_000);
});
