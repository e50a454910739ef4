import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HumanLabelsInput, PpiRow, Validation } from '../decision/evidence-types.js';
import type { ReportData } from '../decision/types.js';
import { answerSha } from '../kappa/answers-source.js';
import { studentTQuantile } from '../stats/special.js';
import { chatCompletion } from '../testing/chat.js';
import { runCaptured } from '../testing/cli.js';
import { type Loopback, type LoopbackRequest, startLoopback } from '../testing/loopback.js';
import { writeMemoryEvalSet } from '../testing/study.js';
import { tempDir } from '../testing/temp.js';
import { answerHumanInput, checkLabelledAnswers, readAnswerLabels } from './answer-labels.js';

// Hand labels of answers in an ablation (`answer.humanLabels`): the PPI-corrected accuracy difference computed by
// hand on a small study, the gate deciding on it, and every refusal (at load, before any run, after the answers).

const N = 30;
const gold = (k: number) => `code${k}`;
/** `good` retrieves the wrong memory for every 6th question, `bad` the right one for every 4th only. */
const right = (system: string, k: number) => (system === 'good' ? k % 6 !== 0 : k % 4 === 0);
/** The judge errs: a right answer to every 5th question called WRONG, a wrong one to 3, 10, 17, 24 called CORRECT. */
const judged = (k: number, isRight: boolean) => (isRight ? k % 5 !== 0 : k % 7 === 3);
const LABELLED = 12;

let dir: string;
let reader: Loopback;
let judge: Loopback;

beforeEach(async () => {
  dir = tempDir('answer-labels');
  const corpus = Array.from({ length: N }, (_, i) => ({ id: `m${i + 1}`, text: `Memory ${i + 1}: the code word is ${gold(i + 1)}.` }));
  const queries = Array.from({ length: N }, (_, i) => ({
    id: `q${i + 1}`,
    text: `What is the code word of memory ${i + 1}?`,
    stratum: 'exact',
    answer: gold(i + 1),
    qrels: { [`m${i + 1}`]: 1 },
  }));
  writeMemoryEvalSet(dir, corpus, queries);
  for (const system of ['good', 'bad']) {
    const lines = queries.map((_, i) => `q${i + 1} Q0 m${right(system, i + 1) ? i + 1 : ((i + 1) % N) + 1} 1 1 ${system}`);
    writeFileSync(join(dir, `${system}.trec`), `${lines.join('\n')}\n`);
  }
  reader = await startLoopback((req: LoopbackRequest) => {
    const prompt = (req.json as { messages: { content: string }[] }).messages[0]?.content ?? '';
    return chatCompletion(`It is ${/\bcode\d+\b/.exec(prompt)?.[0]}.`, { prompt: 10, completion: 3 });
  });
  judge = await startLoopback((req: LoopbackRequest) => {
    const prompt = (req.json as { messages: { content: string }[] }).messages[0]?.content ?? '';
    const k = Number(/Question: .*memory (\d+)\b/.exec(prompt)?.[1]);
    return chatCompletion(judged(k, /Answer: It is (\w+)\./.exec(prompt)?.[1] === gold(k)) ? 'CORRECT' : 'WRONG', { prompt: 10, completion: 1 });
  });
});
afterEach(async () => {
  await reader.close();
  await judge.close();
});

/** The study: Acc of good against bad, gated on Acc; `more` adds to the answer block, `gate` to the gate. */
function study(opts: { answer?: string; gate?: string; measures?: string; top?: string } = {}): string {
  writeFileSync(
    join(dir, 'study.yaml'),
    `name: labelled
evalset: { format: memory, path: es }
measures: [${opts.measures ?? 'Acc'}]
topK: 10
output: out
cache: cache
${opts.top ?? ''}arms:
  - { id: bad, kind: run-file, params: { path: bad.trec } }
  - { id: good, kind: run-file, params: { path: good.trec } }
compare: { baseline: bad }
gate: { candidate: good, measure: Acc, rule: gain-overall${opts.gate ?? ''} }
answer:
  reader: { kind: chat, model: reader-m, baseURL: "${reader.url}/v1", apiKeyEnv: TEST_KEY, local: true, topK: 1, maxRetries: 0 }
  judge: { profile: binary, model: judge-m, baseURL: "${judge.url}/v1", apiKeyEnv: TEST_KEY, local: true, parseRetries: 0, maxRetries: 0 }
${opts.answer ?? ''}`,
  );
  return 'study.yaml';
}

const ablate = (file: string) => runCaptured(['ablate', '--config', file], dir, { TEST_KEY: 'k' });
const said = (r: { stderr: string; log: readonly string[] }) => r.stderr + r.log.join('\n');

/** A labels file of the first `n` questions, every system labelled by the truth. */
function labelsFile(n = LABELLED): string {
  const lines = Array.from({ length: n }, (_, i) => ['bad', 'good'].map((s) => `${s} q${i + 1} ${right(s, i + 1) ? 1 : 0}`)).flat();
  writeFileSync(join(dir, 'labels.tsv'), `${lines.join('\n')}\n`);
  return 'labels.tsv';
}

function report(): ReportData & { ppi: PpiRow[]; validation: Validation; humanLabels: HumanLabelsInput } {
  const [name] = readdirSync(join(dir, 'out'));
  return JSON.parse(readFileSync(join(dir, 'out', name as string, 'report.json'), 'utf8'));
}

const mean = (v: readonly number[]) => v.reduce((a, b) => a + b, 0) / v.length;
const var1 = (v: readonly number[]) => v.reduce((a, x) => a + (x - mean(v)) ** 2, 0) / (v.length - 1);

describe('answer.humanLabels in an ablation', () => {
  it('corrects the Acc difference by PPI as the estimator written out gives it, and the gate decides on it', async () => {
    const r = await ablate(study({ answer: `  humanLabels: ${labelsFile()}\n`, gate: ', judged: ppi' }));
    expect(r.code, said(r)).toBe(0);
    const data = report();
    // Judge-based per-question differences good - bad, and the human ones on the labelled questions.
    const d = Array.from({ length: N }, (_, i) => Number(judged(i + 1, right('good', i + 1))) - Number(judged(i + 1, right('bad', i + 1))));
    const h = Array.from({ length: LABELLED }, (_, i) => Number(right('good', i + 1)) - Number(right('bad', i + 1)));
    expect(data.perQuery['good']?.['Acc']).toEqual(Array.from({ length: N }, (_, i) => Number(judged(i + 1, right('good', i + 1)))));
    const unlabelled = d.slice(LABELLED);
    const rectifier = h.map((x, i) => x - (d[i] as number));
    const estimate = mean(unlabelled) + mean(rectifier);
    const A = var1(unlabelled) / unlabelled.length;
    const B = var1(rectifier) / LABELLED;
    const se = Math.sqrt(A + B);
    const df = (A + B) ** 2 / (A ** 2 / (unlabelled.length - 1) + B ** 2 / (LABELLED - 1));
    const t = studentTQuantile(0.975, df);
    const row = data.ppi.find((p) => p.measure === 'Acc' && p.system === 'good' && p.baseline === 'bad');
    expect(row?.plainDelta).toBeCloseTo(mean(d), 12);
    expect(row?.ppi?.n).toBe(LABELLED);
    expect(row?.ppi?.N).toBe(N - LABELLED);
    expect(row?.ppi?.lambda).toBe(1);
    expect(row?.ppi?.level).toBeCloseTo(0.95, 12);
    expect(row?.ppi?.estimate).toBeCloseTo(estimate, 12);
    expect(row?.ppi?.se).toBeCloseTo(se, 12);
    expect(row?.ppi?.df).toBeCloseTo(df, 9);
    expect(row?.ppi?.ci[0]).toBeCloseTo(estimate - t * se, 9);
    expect(row?.ppi?.ci[1]).toBeCloseTo(estimate + t * se, 9);
    // The same interval from scipy.stats.t.ppf(0.975, df) on this case's estimate, se and df.
    expect(row?.ppi?.ci[0]).toBeCloseTo(0.3663700811365232, 9);
    expect(row?.ppi?.ci[1]).toBeCloseTo(1.3002965855301434, 9);
    // The gate read the PPI interval; the validation compared the decision under the judge and the human labels.
    expect(data.gateResult?.reason).toContain(`PPI-corrected delta`);
    expect(data.gateResult?.verdict).toBe(estimate - t * se > 0 ? 'ADOPT' : 'INCONCLUSIVE');
    expect(data.humanLabels).toMatchObject({ file: 'labels.tsv', kind: 'qrels', queries: Array.from({ length: LABELLED }, (_, i) => `q${i + 1}`) });
    expect(data.humanLabels.pairs).toHaveLength(2 * LABELLED);
    expect(data.humanLabels.perQuery['bad']?.['Acc']).toEqual(Array.from({ length: LABELLED }, (_, i) => Number(right('bad', i + 1))));
    expect(data.validation).toMatchObject({ labelsFile: 'labels.tsv', labelledQueries: LABELLED, measure: 'Acc' });
    expect(data.validation.agreement.pairs).toBe(2 * LABELLED);
    expect(data.validation.qrelsVersion).toMatch(/^answers:[0-9a-f]{16}$/);
  }, 60_000);

  it('reads a session, and refuses a label of an answer this run did not give (exit 2, at its line)', async () => {
    const items = Array.from({ length: LABELLED }, (_, i) =>
      ['bad', 'good'].map((system) => {
        const k = i + 1;
        const text = `It is ${right(system, k) ? gold(k) : gold((k % N) + 1)}.`;
        return { questionId: `q${k}`, system, stratum: 'exact', answerSha: answerSha(text) };
      }),
    ).flat();
    const labels = items.map((it) => (right(it.system, Number(it.questionId.slice(1))) ? 1 : 0));
    const session = (xs: typeof items) =>
      `{"sessionVersion":1,"kind":"answers","gradesVersion":"x","seed":1,"position":${xs.length},\n"items":[\n${xs.map((x) => JSON.stringify(x)).join(',\n')}\n],\n"labels":[\n${labels.join(',\n')}\n]}\n`;
    writeFileSync(join(dir, 'session.json'), session(items));
    const ok = await ablate(study({ answer: '  humanLabels: session.json\n', gate: ', judged: ppi' }));
    expect(ok.code, said(ok)).toBe(0);
    expect(report().humanLabels.kind).toBe('session');
    expect(report().ppi.find((p) => p.measure === 'Acc')?.ppi?.n).toBe(LABELLED);
    writeFileSync(join(dir, 'session.json'), session(items.map((it, i) => (i === 5 ? { ...it, answerSha: answerSha('It is something else.') } : it))));
    const stale = await ablate(study({ answer: '  humanLabels: session.json\n', gate: ', judged: ppi' }));
    expect(stale.code).toBe(2);
    expect(said(stale)).toContain(`session.json:8: system good, question q3: the answer labelled is not the answer this run gave`);
  }, 60_000);

  it('refuses a bad labels file before any system runs, naming file and line; fewer than 10 whole questions too', async () => {
    writeFileSync(join(dir, 'labels.tsv'), 'good q1 1\nbad q1 0\nnobody q2 1\ngood q99 1\ngood q3 yes\n');
    const bad = await ablate(study({ answer: '  humanLabels: labels.tsv\n', gate: ', judged: ppi' }));
    expect(bad.code).toBe(2);
    expect(said(bad)).toContain('labels.tsv:3: system nobody, question q2: nobody is not an answered system of this study (bad, good)');
    expect(said(bad)).toContain('labels.tsv:4: system good, question q99: not a question this study scores');
    expect(said(bad)).toContain('labels.tsv:5: system good, question q3: label "yes" is not 1 (correct) or 0 (wrong)');
    expect(reader.requests).toHaveLength(0);
    const few = await ablate(study({ answer: `  humanLabels: ${labelsFile(9)}\n`, gate: ', judged: ppi' }));
    expect(few.code).toBe(2);
    expect(said(few)).toContain('9 questions labelled for every answered system (bad, good; 0 in part); PPI on accuracy needs at least 10 per stratum');
    expect(reader.requests).toHaveLength(0);
  }, 60_000);

  it('refuses at load what the labels cannot support, naming the key', async () => {
    const problem = async (opts: Parameters<typeof study>[0]) => {
      const r = await ablate(study(opts));
      expect(r.code).toBe(2);
      return said(r);
    };
    labelsFile();
    expect(await problem({ gate: ', judged: ppi' })).toContain(
      'gate.judged: "ppi" on Acc corrects the answer judge with hand labels of answers; add answer.humanLabels',
    );
    expect(await problem({ answer: '  humanLabels: labels.tsv\n', top: 'humanLabels: labels.tsv\nqrels: judged\njudgments: j\n' })).toContain(
      'a study reads one set of human labels',
    );
    expect(await problem({ top: 'humanLabels: labels.tsv\nqrels: judged\njudgments: j\n' })).toContain(
      'gate.measure: Acc is an answer measure, and humanLabels label the judged pool',
    );
    expect(await problem({ answer: '  humanLabels: labels.tsv\n', measures: 'Acc, nDCG@10', top: 'qrels: judged\njudgments: j\n' })).toContain(
      'answer.humanLabels: nDCG@10 are scored on qrels: judged, a judge these labels of answers do not check',
    );
    expect(await problem({ answer: '  humanLabels: gone.tsv\n' })).toContain('answer.humanLabels: gone.tsv is not a file');
    writeFileSync(
      join(dir, 'lexical.yaml'),
      readFileSync(join(dir, 'study.yaml'), 'utf8')
        .replace('measures: [Acc]', 'measures: [EM]')
        .replace('measure: Acc', 'measure: EM')
        .replace('gone.tsv', 'labels.tsv'),
    );
    const lexical = await ablate('lexical.yaml');
    expect(lexical.code).toBe(2);
    expect(said(lexical)).toContain('answer.humanLabels: hand labels of answers check the answer judge');
    const ppiOnEm = await ablate(study({ gate: ', judged: ppi', measures: 'Acc, EM', answer: '  humanLabels: labels.tsv\n' }));
    expect(ppiOnEm.code, said(ppiOnEm)).toBe(0);
    writeFileSync(join(dir, 'em.yaml'), readFileSync(join(dir, 'study.yaml'), 'utf8').replace('measure: Acc', 'measure: EM'));
    expect(said(await ablate('em.yaml'))).toContain('gate.judged: "ppi" corrects a judge\'s grades, and EM reads none (only Acc does)');
  }, 60_000);
});

describe('the labels as the decision stage reads them', () => {
  it('gives Acc from the labels on the questions labelled for every system, every other measure as scored', async () => {
    const lines = ['a q1 1', 'b q1 0', 'a q2 0', 'b q2 1', 'a q3 1', ...Array.from({ length: 10 }, (_, i) => [`a x${i} 1`, `b x${i} 1`]).flat()];
    writeFileSync(join(dir, 'l.tsv'), `${lines.join('\n')}\n`);
    const questions = new Map([['q1', 's'], ['q2', 's'], ['q3', 's'], ...Array.from({ length: 10 }, (_, i) => [`x${i}`, 't'] as [string, string])]);
    const set = await readAnswerLabels(join(dir, 'l.tsv'), { systems: ['a', 'b'], questions });
    expect(set.complete).toEqual(['q1', 'q2', ...Array.from({ length: 10 }, (_, i) => `x${i}`)]);
    expect(set.incomplete).toEqual(['q3']);
    const input = answerHumanInput(set, {
      file: 'l.tsv',
      queries: [
        { id: 'q2', stratum: 's' },
        { id: 'q3', stratum: 's' },
        { id: 'q1', stratum: 's' },
      ],
      perQuery: { a: { Acc: [1, 1, 1], EM: [0.5, 0, 1] }, b: { Acc: [0, 0, 1], EM: [0, 0, 0.25] } },
      relevanceLevel: 1,
      thresholds: { minTau: 0.9, minQueries: 25, resamples: 100 },
    });
    expect(input.queries).toEqual(['q2', 'q1']);
    expect(input.perQuery).toEqual({ a: { Acc: [0, 1], EM: [0.5, 1] }, b: { Acc: [1, 0], EM: [0, 0.25] } });
    expect(input.incomplete).toBe(1);
    expect(input.pairs.map((p) => [p.queryId, p.docId, p.human, p.judge])).toEqual([
      ['q1', 'a', 1, 1],
      ['q1', 'b', 0, 1],
      ['q2', 'a', 0, 1],
      ['q2', 'b', 1, 0],
      ['q3', 'a', 1, 1],
    ]);
    // A labels file records no answer identity, so nothing to refuse; a session's label of another text is.
    expect(() => checkLabelledAnswers(set, () => 'ffff')).not.toThrow();
  });
});
