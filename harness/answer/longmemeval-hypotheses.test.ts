import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HarnessError, type InputError, InputProblems } from '../errors.js';
import { longMemEvalAccuracy } from '../metrics/answer-accuracy.js';
import { tempFolder } from '../testing/files.js';
import { tempDir } from '../testing/temp.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { type AnswerRow, readAnswersFile } from './files.js';
import { formatHypotheses, readLongMemEvalHypotheses, writeHypotheses } from './longmemeval-hypotheses.js';

const TESTDATA = join(PROJECT_ROOT, 'harness', 'answer', 'testdata');
const HYPOTHESES = join(TESTDATA, 'longmemeval-hypotheses.jsonl');
const LABELS = `${HYPOTHESES}.eval-results-gpt-4o`;

/** question_id -> question_type from a LongMemEval reference file (the dataset, or our invented fixture). */
function questionTypes(file: string): Map<string, string> {
  const ref = JSON.parse(readFileSync(file, 'utf8')) as { question_id: string; question_type: string }[];
  return new Map(ref.map((q) => [q.question_id, q.question_type]));
}

/** The official figures, rounded as print_qa_metrics.py prints them (round(x, 4)). */
function metrics(rows: readonly AnswerRow[], types: ReadonlyMap<string, string>) {
  const acc = longMemEvalAccuracy(
    rows.map((r) => ({ questionId: r.questionId as string, questionType: types.get(r.questionId as string) as string, correct: r.recorded?.correct === true })),
  );
  const round = (x: number) => Number(x.toFixed(4));
  return {
    perType: Object.fromEntries(Object.entries(acc.perType).map(([t, c]) => [t, [round(c.accuracy), c.n]])),
    taskAveraged: round(acc.taskAveraged),
    overall: round(acc.overall.accuracy),
    abstention: [round(acc.abstention.accuracy), acc.abstention.n],
  };
}

describe('LongMemEval hypotheses with their judged log', () => {
  it('joins the labels on question_id as recorded grades named by the judge model', async () => {
    const rows = await readAnswersFile(HYPOTHESES, 'longmemeval', { labels: LABELS });
    expect(rows).toHaveLength(14);
    expect(rows[0]).toEqual({
      where: `${HYPOTHESES}:1`,
      questionId: 'u1',
      response: 'Your bike is green.',
      recorded: { correct: true, judge: 'gpt-4o-2024-08-06' },
    });
    expect(rows.every((r) => r.question === undefined && r.conversationIndex === undefined)).toBe(true);
  });

  it("reproduces the official print_qa_metrics.py's per-type, task-averaged, overall and abstention accuracy", async () => {
    const rows = await readAnswersFile(HYPOTHESES, 'longmemeval', { labels: LABELS });
    // Printed by src/evaluation/print_qa_metrics.py (xiaowu0162/LongMemEval @ 9e0b455f) run on these two fixture files.
    expect(metrics(rows, questionTypes(join(TESTDATA, 'longmemeval-reference.json')))).toEqual({
      perType: {
        'single-session-user': [0.6667, 3],
        'single-session-preference': [0.5, 2],
        'single-session-assistant': [0.5, 2],
        'multi-session': [0.3333, 3],
        'temporal-reasoning': [0.5, 2],
        'knowledge-update': [1.0, 2],
      },
      taskAveraged: 0.5833,
      overall: 0.5714,
      abstention: [0.5, 2],
    });
  });

  it('reads the judged log alone as a hypothesis file with its grades, and without labels records none', async () => {
    const fromLog = await readLongMemEvalHypotheses(LABELS);
    const joined = await readLongMemEvalHypotheses(HYPOTHESES, LABELS);
    expect(fromLog.map((r) => [r.questionId, r.response, r.recorded])).toEqual(joined.map((r) => [r.questionId, r.response, r.recorded]));
    expect((await readLongMemEvalHypotheses(HYPOTHESES)).some((r) => r.recorded !== undefined)).toBe(false);
  });

  it('reads a hypothesis file written as one JSON array, as evaluate_qa.py does', async () => {
    const dir = await tempFolder('lme-array', { 'h.json': '[\n {"question_id": "u1", "hypothesis": "green"},\n {"question_id": 42, "hypothesis": ""}\n]\n' });
    const rows = await readLongMemEvalHypotheses(join(dir, 'h.json'));
    expect(rows.map((r) => [r.where.replace(dir, ''), r.questionId, r.response])).toEqual([
      ['/h.json:[0]', 'u1', 'green'],
      ['/h.json:[1]', '42', ''],
    ]);
  });
});

describe('mismatched or malformed LongMemEval files are refused, naming the line', () => {
  const problems = async (files: Record<string, string>, labels?: string) => {
    const dir = await tempFolder('lme-bad', files);
    const err = await readLongMemEvalHypotheses(join(dir, 'h.jsonl'), labels === undefined ? undefined : join(dir, labels)).catch((e: unknown) => e);
    expect((err as InputError).exitCode).toBe(2);
    const list = err instanceof InputProblems ? err.problems : [err as InputError];
    return list.map((p) => p.message.replaceAll(`${dir}/`, ''));
  };
  const line = (o: object) => JSON.stringify(o);

  it('a question twice, a missing hypothesis, a malformed label', async () => {
    const h = [
      line({ question_id: 'a', hypothesis: 'x' }),
      line({ question_id: 'a', hypothesis: 'y' }),
      line({ question_id: 'b' }),
      line({ question_id: 'c d', hypothesis: 'x' }),
      line({ question_id: 'e', hypothesis: 'x', autoeval_label: true }),
      line({ question_id: 'f', hypothesis: 'x', autoeval_label: { model: 'm', label: 'yes' } }),
    ].join('\n');
    expect(await problems({ 'h.jsonl': h })).toEqual([
      'h.jsonl:2: question_id a again (first at h.jsonl:1)',
      'h.jsonl:3: missing field "hypothesis"',
      'h.jsonl:4: field "question_id" must be a non-empty string without whitespace, got "c d"',
      'h.jsonl:5: field "autoeval_label" must be an object {model, label}, got true',
      'h.jsonl:6: autoeval_label.label must be true or false, got "yes"',
    ]);
  });

  it('labels for another question, for another hypothesis, disagreeing with the file, or twice', async () => {
    const label = (id: string, hyp: string | undefined, l: boolean) =>
      line({ question_id: id, ...(hyp === undefined ? {} : { hypothesis: hyp }), autoeval_label: { model: 'm', label: l } });
    const h = [line({ question_id: 'a', hypothesis: 'x' }), line({ question_id: 'b', hypothesis: 'y', autoeval_label: { model: 'm', label: true } })].join(
      '\n',
    );
    const labels = [
      label('a', 'other', true),
      label('b', 'y', false),
      label('z', undefined, true),
      label('z', undefined, true),
      line({ question_id: 'q' }),
    ].join('\n');
    expect(await problems({ 'h.jsonl': h, 'l.jsonl': labels }, 'l.jsonl')).toEqual([
      'l.jsonl:4: question_id z again (first on line 3)',
      'l.jsonl:5: missing field "autoeval_label"',
    ]);
    const fixed = [label('a', 'other', true), label('b', 'y', false), label('z', undefined, true)].join('\n');
    const msgs = await problems({ 'h.jsonl': h, 'l.jsonl': fixed }, 'l.jsonl');
    expect(msgs).toEqual([
      'l.jsonl:1: the label judged another hypothesis for question_id a than h.jsonl:1 holds',
      'l.jsonl:2: the label for question_id b disagrees with the one h.jsonl:2 records',
      'l.jsonl:3: a label for question_id z, which the hypothesis file does not have',
    ]);
  });

  it('names the element of a JSON array', async () => {
    const dir = await tempFolder('lme-array-bad', { 'h.json': '[{"question_id": "a", "hypothesis": 3}]' });
    await expect(readLongMemEvalHypotheses(join(dir, 'h.json'))).rejects.toThrow(/h\.json: \[0\]: field "hypothesis" must be a string, got 3/);
  });
});

describe('writeHypotheses', () => {
  it('writes JSONL the official scripts and our reader read back, atomically, into a new folder', async () => {
    const path = join(tempDir('lme-write'), 'out', 'system.jsonl');
    const rows = [
      { questionId: 'u1', hypothesis: 'Green, "of course".\nSecond line.' },
      { questionId: 'a2', hypothesis: '' },
    ];
    await writeHypotheses(path, rows);
    const text = await readFile(path, 'utf8');
    expect(text.split('\n')).toEqual([
      '{"question_id":"u1","hypothesis":"Green, \\"of course\\".\\nSecond line."}',
      '{"question_id":"a2","hypothesis":""}',
      '',
    ]);
    expect(readdirSync(dirname(path))).toEqual(['system.jsonl']);
    expect((await readLongMemEvalHypotheses(path)).map((r) => ({ questionId: r.questionId, hypothesis: r.response }))).toEqual(rows);
  });

  it('refuses a question written twice, and writes nothing', async () => {
    const path = join(tempDir('lme-write-dup'), 'h.jsonl');
    expect(() =>
      formatHypotheses(path, [
        { questionId: 'x', hypothesis: '1' },
        { questionId: 'x', hypothesis: '2' },
      ]),
    ).toThrow(HarnessError);
    await expect(
      writeHypotheses(path, [
        { questionId: 'x', hypothesis: '1' },
        { questionId: 'x', hypothesis: '2' },
      ]),
    ).rejects.toThrow(/question_id x is written twice/);
    expect(existsSync(path)).toBe(false);
  });
});

/**
 * A published LongMemEval run with its judged log, kept outside the repository under ../published
 * (HARNESS_PUBLISHED_DIR): Memory-Agents/memory-agents, memory_agents/longmemeval/ at commit aaf3a298 (oracle
 * history, 500 questions), whose evaluate_qa.py printout (my_predictions.jsonl.Results_Summary.txt) says
 * "Accuracy: 0.724" and the per-type figures below. The per-type figures need the dataset's question types: set
 * HARNESS_LONGMEMEVAL_REFERENCE to longmemeval_oracle.json (or _s) to check them too.
 */
const PUBLISHED_DIR = process.env['HARNESS_PUBLISHED_DIR'] ?? resolve(PROJECT_ROOT, '..', 'published');
const RUN = join(PUBLISHED_DIR, 'memory-agents-longmemeval', 'my_predictions.jsonl');
const REFERENCE = process.env['HARNESS_LONGMEMEVAL_REFERENCE'];
const PUBLISHED_PER_TYPE = {
  'single-session-user': [0.9429, 70],
  'single-session-preference': [0.4, 30],
  'single-session-assistant': [0.9643, 56],
  'multi-session': [0.6692, 133],
  'temporal-reasoning': [0.594, 133],
  'knowledge-update': [0.7949, 78],
};

if (!existsSync(RUN)) process.stderr.write(`[skip] published LongMemEval run: ${RUN} is not here (docs/answers-files.md, "Reproducing published runs")\n`);
else if (REFERENCE === undefined)
  process.stderr.write('[skip] published LongMemEval run, per-type figures: HARNESS_LONGMEMEVAL_REFERENCE (the dataset file) is not set\n');

describe.skipIf(!existsSync(RUN))('a published LongMemEval run with its judged log', () => {
  it('reads 500 hypotheses, every one labelled by gpt-4o-2024-08-06, overall 0.724 as evaluate_qa.py printed', async () => {
    const rows = await readAnswersFile(RUN, 'longmemeval', { labels: `${RUN}.eval-results-gpt-4o` });
    expect(rows).toHaveLength(500);
    expect(new Set(rows.map((r) => r.recorded?.judge))).toEqual(new Set(['gpt-4o-2024-08-06']));
    const correct = rows.filter((r) => r.recorded?.correct === true).length;
    expect(Number((correct / rows.length).toFixed(4))).toBe(0.724);
    expect(rows.filter((r) => r.questionId?.includes('_abs'))).toHaveLength(30);
  });

  it.skipIf(REFERENCE === undefined)('reproduces the per-type figures with the dataset question types', async () => {
    const rows = await readAnswersFile(RUN, 'longmemeval', { labels: `${RUN}.eval-results-gpt-4o` });
    const m = metrics(rows, questionTypes(REFERENCE as string));
    expect(m.perType).toEqual(PUBLISHED_PER_TYPE);
    expect(m.overall).toBe(0.724);
  });
});
