import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../testing/shared.js';
import { type AnswerRow, readAnswersFile } from './files.js';
import { mapAnswerRows, normaliseQuestion } from './map-rows.js';
import type { AnswerQuestion } from './types.js';

const question = (id: string, text: string): AnswerQuestion => ({ id, text, gold: 'g', stratum: 's', abstention: false, evidence: [] });

/** Two conversations; conv-a repeats one question word for word, as LoCoMo does. */
const QUESTIONS = [
  question('conv-a:q0', 'When did Ann move to Lisbon?'),
  question('conv-a:q1', 'What did Bo buy?'),
  question('conv-a:q2', 'What did Bo buy?'),
  question('conv-a:q3', 'What do Ann and Bo both enjoy?'),
  question('conv-b:q0', 'Which city did Cy visit in June?'),
  question('conv-b:q1', 'When did Cy start painting?'),
];
const conversationOf = (q: AnswerQuestion) => ({ 'conv-a': 0, 'conv-b': 1 })[q.id.split(':')[0] as string];

const row = (where: string, fields: Partial<AnswerRow>): AnswerRow => ({ where, response: 'r', ...fields });

describe('mapAnswerRows', () => {
  it('maps by conversation and normalised text, repeated questions by order, and counts the rest', () => {
    const rows = [
      row('f:1[0]', { conversationIndex: 1, question: 'which city did cy visit in june?' }),
      row('f:0[1]', { conversationIndex: 0, question: 'What did  Bo buy?' }),
      row('f:0[2]', { conversationIndex: 0, question: 'WHAT DID BO BUY?' }),
      row('f:0[3]', { conversationIndex: 0, question: 'What did Bo buy?' }),
      row('f:0[0]', { conversationIndex: 0, question: '  When did Ann move to Lisbon?\n' }),
      row('f:2[0]', { conversationIndex: 2, question: 'When did Ann move to Lisbon?' }),
      row('f:1[9]', { conversationIndex: 1, question: 'What did Bo buy?' }),
    ];
    const m = mapAnswerRows(rows, QUESTIONS, { conversationOf });
    expect([...m.byQuestion].map(([id, r]) => [id, r.where])).toEqual([
      ['conv-a:q0', 'f:0[0]'],
      ['conv-a:q1', 'f:0[1]'],
      ['conv-a:q2', 'f:0[2]'],
      ['conv-b:q0', 'f:1[0]'],
    ]);
    // A third "What did Bo buy?" has no third question; conversation 2 does not exist; conv-b never asks about Bo.
    expect(m.unmapped.map((r) => r.where)).toEqual(['f:0[3]', 'f:2[0]', 'f:1[9]']);
    expect(m.missing).toEqual(['conv-a:q3', 'conv-b:q1']);
  });

  it('maps by question id first; a second row for one id, or an id the eval set lacks, is unmapped', () => {
    const rows = [
      row('a:1', { questionId: 'conv-a:q2' }),
      row('a:2', { conversationIndex: 0, question: 'What did Bo buy?' }),
      row('a:3', { questionId: 'conv-a:q2' }),
      row('a:4', { questionId: 'conv-z:q0', conversationIndex: 0, question: 'What do Ann and Bo both enjoy?' }),
    ];
    const m = mapAnswerRows(rows, QUESTIONS, { conversationOf });
    // The text row takes the first "What did Bo buy?" the id row left open; a row with an id never falls back to text.
    expect([...m.byQuestion].map(([id, r]) => [id, r.where])).toEqual([
      ['conv-a:q1', 'a:2'],
      ['conv-a:q2', 'a:1'],
    ]);
    expect(m.unmapped.map((r) => r.where)).toEqual(['a:3', 'a:4']);
    expect(m.missing).toEqual(['conv-a:q0', 'conv-a:q3', 'conv-b:q0', 'conv-b:q1']);
  });

  it('maps questions without a conversation by id only, and a row without one to nothing', () => {
    const m = mapAnswerRows([row('x:1', { question: 'What did Bo buy?' })], QUESTIONS, { conversationOf: () => undefined });
    expect(m.byQuestion.size).toBe(0);
    expect(m.unmapped).toHaveLength(1);
    expect(m.missing).toHaveLength(QUESTIONS.length);
  });

  it('maps our JSONL fixture: ids and (conversation, question) lines together', async () => {
    const rows = await readAnswersFile(join(PROJECT_ROOT, 'harness', 'answer', 'testdata', 'answers.jsonl'), 'jsonl');
    const m = mapAnswerRows(rows, QUESTIONS, { conversationOf });
    expect([...m.byQuestion.keys()]).toEqual(['conv-a:q0', 'conv-a:q1', 'conv-b:q1']);
    expect(m.unmapped).toEqual([]);
  });
});

describe('normaliseQuestion', () => {
  it('folds case, whitespace, compatibility forms and curly quotes; keeps punctuation and words', () => {
    expect(normaliseQuestion('  What is\tAnn\u2019s  ＣＡＴ called?\n')).toBe("what is ann's cat called?");
    expect(normaliseQuestion('\u201CHello\u201D')).toBe('"hello"');
    expect(normaliseQuestion('What did Bo buy')).not.toBe(normaliseQuestion('What did Bo buy?'));
  });
});
