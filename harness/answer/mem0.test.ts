import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError, InputProblems } from '../errors.js';
import { tempFolder } from '../testing/files.js';
import { PROJECT_ROOT, sharedMissing, sharedPath } from '../testing/shared.js';
import { locomoAccuracy } from '../metrics/answer-accuracy.js';
import { readAnswersFile } from './files.js';
import { mapAnswerRows } from './map-rows.js';
import { readMem0File } from './mem0.js';
import type { AnswerQuestion } from './types.js';

const TESTDATA = join(PROJECT_ROOT, 'harness', 'answer', 'testdata');

describe("mem0's evaluation output (evals.py: string categories and answers, llm_score)", () => {
  it('reads every record as a row, conversations in index order, records in file order', async () => {
    const file = join(TESTDATA, 'mem0-evals.json');
    const rows = await readAnswersFile(file, 'mem0');
    expect(rows.map((r) => [r.where.slice(file.length + 1), r.conversationIndex, r.category, r.recorded?.correct])).toEqual([
      ['0[0]', 0, 2, true],
      ['0[1]', 0, 4, true],
      ['0[2]', 0, 4, false],
      ['0[3]', 0, 1, true],
      ['0[4]', 0, 3, false],
      ['1[0]', 1, 4, true],
      ['1[1]', 1, 2, false],
    ]);
    expect(rows[0]).toEqual({
      where: `${file}:0[0]`,
      conversationIndex: 0,
      question: 'When did Ann move to Lisbon?',
      response: 'Ann moved in May 2023.',
      gold: 'May 2023',
      category: 2,
      recorded: { correct: true, f1: 0.6666666666666666 },
    });
  });
});

describe("mem0's search output (int categories, numeric answers, category 5 without answer, no grades)", () => {
  it('keeps numbers as the text Python writes and category 5 rows without a gold', async () => {
    const rows = await readMem0File(join(TESTDATA, 'mem0-search.json'));
    expect(rows.map((r) => ({ gold: r.gold, category: r.category, recorded: r.recorded }))).toEqual([
      { gold: 'May 2023', category: 2, recorded: undefined },
      { gold: '2022', category: 2, recorded: undefined },
      { gold: undefined, category: 5, recorded: undefined },
    ]);
  });

  it("reads the judge script's spelling (gt_answer, llm_label)", async () => {
    const dir = await tempFolder('mem0', {
      'judged.json': JSON.stringify({ 2: [{ question: 'Q?', gt_answer: 7, response: 'seven', category: 1, llm_label: 1 }] }),
    });
    const [row] = await readMem0File(join(dir, 'judged.json'));
    expect(row).toMatchObject({ conversationIndex: 2, gold: '7', response: 'seven', recorded: { correct: true } });
  });
});

describe('malformed mem0 files name the file, the key and what to do', () => {
  const read = async (data: unknown) => {
    const dir = await tempFolder('mem0-bad', { 'bad.json': JSON.stringify(data) });
    return readMem0File(join(dir, 'bad.json')).then(
      () => undefined,
      (e: unknown) => e,
    );
  };

  it('refuses a top level that is not an object keyed by conversation index', async () => {
    const err = await read([{ question: 'Q?' }]);
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).message).toMatch(/bad\.json: expected a JSON object keyed by LoCoMo conversation index/);
    expect((err as InputError).exitCode).toBe(2);
    expect(String(await read({ locomo_experiment_user_0: [] }))).toMatch(/key "locomo_experiment_user_0" is not a conversation index/);
  });

  it('collects every bad record, each by key[i], without quoting answers', async () => {
    const err = await read({
      0: [
        { question: 'Q?', answer: 'secret gold', response: null, category: '2' },
        { question: 'Q?', answer: 'a', response: 'r', category: 7 },
        { question: 'Q?', answer: 'a', response: 'r', category: 1, llm_score: 0.5 },
        { question: 'Q?', answer: { x: 1 }, response: 'r', category: 1 },
        { question: '', answer: 'a', response: 'r', category: 1 },
      ],
      1: 'not an array',
    });
    expect(err).toBeInstanceOf(InputProblems);
    const messages = (err as InputProblems).problems.map((p) => p.message.replace(/^.*bad\.json: /, ''));
    expect(messages).toEqual([
      '0[0]: field "response" must be a string, got null; a question the system did not answer still needs one ("" counts as no answer)',
      '0[1]: field "category" must be a LoCoMo category 1-5 (a number or its text), got 7',
      '0[2]: field "llm_score" must be 1 (CORRECT) or 0 (WRONG), got 0.5',
      '0[3]: field "answer" must be a string or a number, got an object',
      '0[4]: field "question" must be a non-empty string, got an empty string',
      '1: expected an array of question records',
    ]);
    expect(String(err)).not.toContain('secret gold');
  });

  it('names a missing file and a truncated one', async () => {
    await expect(readMem0File('/nonexistent/mem0.json')).rejects.toThrow(/\/nonexistent\/mem0\.json: file not found/);
    const dir = await tempFolder('mem0-trunc', { 't.json': '{"0": [{"question": "Q?"' });
    await expect(readMem0File(join(dir, 't.json'))).rejects.toThrow(/t\.json:1: not valid JSON/);
  });
});

/** LoCoMo's questions of categories 1-4 as the answer stage sees them, with each one's conversation index. */
function locomoQuestions(file: string): { questions: AnswerQuestion[]; conversationOf: (q: AnswerQuestion) => number | undefined } {
  type Sample = { sample_id: string; qa: { question: string; answer?: unknown; category: number }[] };
  const samples = JSON.parse(readFileSync(file, 'utf8')) as Sample[];
  const questions: AnswerQuestion[] = [];
  const conversation = new Map<string, number>();
  samples.forEach((s, si) => {
    s.qa.forEach((qa, qi) => {
      if (qa.category === 5) return;
      const id = `${s.sample_id}:q${qi}`;
      conversation.set(id, si);
      questions.push({ id, text: qa.question, gold: String(qa.answer), stratum: String(qa.category), category: qa.category, abstention: false, evidence: [] });
    });
  });
  return { questions, conversationOf: (q) => conversation.get(q.id) };
}

/**
 * mem0's generate_scores.py: the mean of llm_score over the file's rows, overall and per category, rounded to 4
 * decimals; its files hold categories 1-4 only, so the overall is locomoAccuracy's `overall` (category 5 left out).
 */
function mem0Accuracy(rows: readonly { category: number; correct: boolean }[]) {
  const acc = locomoAccuracy(rows);
  const perCategory = Object.fromEntries(Object.entries(acc.perCategory).map(([c, cell]) => [c, { n: cell.n, acc: cell.accuracy.toFixed(4) }]));
  return { n: acc.overall.n, overall: acc.overall.accuracy.toFixed(4), perCategory };
}

/**
 * Published mem0-protocol graded runs, kept outside the repository (their licence is their authors'), under
 * ../published (HARNESS_PUBLISHED_DIR): see docs/answers-files.md, "Reproducing published runs", for where each
 * comes from. Memobase's LoCoMo benchmark (memodb-io/memobase, docs/experiments/locomo-benchmark, README at commit
 * 358c16bb) publishes two graded runs of one system, v0.0.32 and v0.0.37, and their scores per LoCoMo category
 * number (its table names the categories after mem0's labels: 1 "single-hop", 2 temporal, 3 "multi-hop", 4
 * "open-domain"; LoCoMo's own code calls 1 multi-hop, 3 open-domain, 4 single-hop).
 */
const PUBLISHED_DIR = process.env['HARNESS_PUBLISHED_DIR'] ?? resolve(PROJECT_ROOT, '..', 'published');
const PUBLISHED = [
  { file: 'memobase/memobase_eval_0503_3000.json', overall: '0.7091', perCategory: ['0.6383', '0.8037', '0.5208', '0.7182'] },
  { file: 'memobase/memobase_eval_0710_3000.json', overall: '0.7578', perCategory: ['0.7092', '0.8505', '0.4688', '0.7717'] },
] as const;
const LOCOMO = sharedPath('data', 'locomo', 'locomo10.json');

const absent = [
  ...PUBLISHED.map((p) => join(PUBLISHED_DIR, p.file)).filter((f) => !existsSync(f)),
  ...(existsSync(LOCOMO) ? [] : [sharedMissing(['data/locomo/locomo10.json'])]),
];
if (absent.length > 0) process.stderr.write(`[skip] published mem0 runs: missing ${absent.join(', ')}\n`);

describe.skipIf(absent.length > 0)('published mem0-protocol runs of Memobase on LoCoMo reproduce their published accuracy', () => {
  const { questions, conversationOf } = existsSync(LOCOMO) ? locomoQuestions(LOCOMO) : { questions: [], conversationOf: () => undefined };
  const categoryOf = new Map(questions.map((q) => [q.id, q.category ?? 0]));

  it.each(PUBLISHED)('$file: n = 1,540, every row mapped, overall and per-category accuracy to 4 decimals', async (p) => {
    const rows = await readAnswersFile(join(PUBLISHED_DIR, p.file), 'mem0');
    const mapping = mapAnswerRows(rows, questions, { conversationOf });
    expect({ rows: rows.length, mapped: mapping.byQuestion.size, unmapped: mapping.unmapped.length, missing: mapping.missing.length }).toEqual({
      rows: 1540,
      mapped: 1540,
      unmapped: 0,
      missing: 0,
    });
    // Each row went to its own question: the gold it carries is that question's (repeated questions included).
    const wrongGold = questions.filter((q) => mapping.byQuestion.get(q.id)?.gold !== q.gold).map((q) => q.id);
    expect(wrongGold).toEqual([]);
    expect(rows.filter((r) => r.recorded?.correct === undefined)).toEqual([]);
    const graded = [...mapping.byQuestion].map(([id, r]) => ({ category: categoryOf.get(id) ?? 0, correct: r.recorded?.correct === true }));
    const acc = mem0Accuracy(graded);
    expect(acc).toEqual({
      n: 1540,
      overall: p.overall,
      perCategory: {
        1: { n: 282, acc: p.perCategory[0] },
        2: { n: 321, acc: p.perCategory[1] },
        3: { n: 96, acc: p.perCategory[2] },
        4: { n: 841, acc: p.perCategory[3] },
      },
    });
  });
});
