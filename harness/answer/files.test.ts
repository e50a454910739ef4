import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError, InputProblems, UsageError } from '../errors.js';
import { tempFolder } from '../testing/files.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { type AnswersFileFormat, readAnswersFile } from './files.js';

const TESTDATA = join(PROJECT_ROOT, 'harness', 'answer', 'testdata');

describe('our answers JSONL', () => {
  it('reads ids, (conversation, question) lines and recorded grades; skips blank lines; ignores extra fields', async () => {
    const file = join(TESTDATA, 'answers.jsonl');
    expect(await readAnswersFile(file, 'jsonl')).toEqual([
      { where: `${file}:1`, questionId: 'conv-a:q0', response: 'May 2023', gold: 'May 2023', recorded: { correct: true, judge: 'human' } },
      { where: `${file}:2`, conversationIndex: 0, question: 'What did Bo buy?', response: 'A red bike.', category: 4 },
      { where: `${file}:4`, questionId: 'conv-b:q1', response: '', recorded: { correct: false, f1: 0 } },
    ]);
  });

  it('names every bad line and what it needs', async () => {
    const lines = [
      '{"response": "r"}',
      '{"conversation": 0, "response": "r"}',
      '{"question_id": "q1"}',
      '{"question_id": "q1", "response": "r", "correct": "yes"}',
      '{"conversation": -1, "question": "Q?", "response": "r"}',
      '{"question_id": "q1", "response": "r", "f1": 2}',
      '{"question_id": "q1", "response": "r"',
    ];
    const dir = await tempFolder('answers', { 'a.jsonl': `${lines.join('\n')}\n` });
    const err = await readAnswersFile(join(dir, 'a.jsonl'), 'jsonl').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputProblems);
    const messages = (err as InputProblems).problems.map((p) => [
      p.line,
      p.message.replace(/^.*a\.jsonl:\d+: /, '').replace(/^not valid JSON .*/, 'not valid JSON'),
    ]);
    expect(messages).toEqual([
      [1, 'the line names no question: give "question_id", or both "conversation" and "question"'],
      [2, 'the line names no question: give "question_id", or both "conversation" and "question"'],
      [3, 'missing field "response"'],
      [4, 'field "correct" must be true or false, got "yes"'],
      [5, 'field "conversation" must be an integer of at least 0, got -1'],
      [6, 'field "f1" must be a number from 0 to 1, got 2'],
      [7, 'not valid JSON'],
    ]);
  });
});

describe('readAnswersFile options', () => {
  it('refuses labels for a format that records its grades itself, and an unknown format', async () => {
    const mem0 = join(TESTDATA, 'mem0-evals.json');
    await expect(readAnswersFile(mem0, 'mem0', { labels: 'x' })).rejects.toThrow(UsageError);
    await expect(readAnswersFile(mem0, 'mem0', { labels: 'x' })).rejects.toThrow(/labels are read for format longmemeval only/);
    await expect(readAnswersFile(mem0, 'csv' as AnswersFileFormat)).rejects.toThrow(/unknown format "csv"/);
  });

  it('a missing file is an InputError with exit code 2', async () => {
    const err = await readAnswersFile('/nonexistent/a.jsonl', 'jsonl').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).exitCode).toBe(2);
  });
});
