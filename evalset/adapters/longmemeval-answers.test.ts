import { describe, expect, it } from 'vitest';
import { describeShared, sharedPath } from '../../harness/testing/shared.js';
import { readJsonFile } from '../lines.js';
import { loadLongMemEval, longMemEvalFromJson, longMemEvalOptions } from './longmemeval.js';

/** Gold answers and the answer-only questions of the LongMemEval adapter (retrieval behaviour: longmemeval.test.ts). */

const user = (content: string, has_answer?: boolean) => ({ role: 'user', content, ...(has_answer === undefined ? {} : { has_answer }) });
const assistant = (content: string, has_answer?: boolean) => ({ role: 'assistant', content, ...(has_answer === undefined ? {} : { has_answer }) });

/** An answerable question, one whose evidence is an assistant turn only, and an abstention question. */
function three(): Record<string, unknown>[] {
  return [
    {
      question_id: 'q1',
      question_type: 'multi-session',
      question: 'How many pets?',
      answer: 2,
      question_date: '2023/06/01 (Thu) 00:58',
      haystack_dates: ['2023/05/26 (Fri) 09:00'],
      haystack_session_ids: ['answer_1'],
      haystack_sessions: [[user('Got a dog and a cat.', true), assistant('Congrats.')]],
      answer_session_ids: ['answer_1'],
    },
    {
      question_id: 'q2',
      question_type: 'single-session-assistant',
      question: 'What did you recommend?',
      answer: 'Dune',
      haystack_dates: ['2023/05/28 (Sun) 10:20'],
      haystack_session_ids: ['answer_3'],
      haystack_sessions: [[user('Recommend a book?'), assistant('Dune.', true)]],
      answer_session_ids: ['answer_3'],
    },
    {
      question_id: 'q3_abs',
      question_type: 'temporal-reasoning',
      question: 'When did I sell the boat?',
      answer: 'You never mentioned selling a boat.',
      haystack_dates: ['2023/05/25 (Thu) 20:21'],
      haystack_session_ids: ['answer_9'],
      haystack_sessions: [[user('I bought a boat.', true)]],
      answer_session_ids: ['answer_9'],
    },
  ];
}

describe('LongMemEval adapter: gold answers', () => {
  it('every query carries its answer, a number as its decimal string; the question date stays as written', () => {
    const { evalSet } = longMemEvalFromJson('t.json', three(), longMemEvalOptions.parse({}));
    expect(evalSet.format).toBe('longmemeval');
    expect(evalSet.queries).toHaveLength(1);
    expect(evalSet.queries[0]).toMatchObject({ id: 'q1', answer: '2', metadata: { questionType: 'multi-session', questionDate: '2023/06/01 (Thu) 00:58' } });
    expect(evalSet.queries[0]?.metadata?.['answerOnly']).toBeUndefined();
  });

  it('by default, abstention questions and those without a has_answer user turn are skipped as before', () => {
    const { evalSet, stats } = longMemEvalFromJson('t.json', three(), longMemEvalOptions.parse({}));
    expect([stats.abstention, stats.noTarget, stats.answerOnly]).toEqual([['q3_abs'], ['q2'], []]);
    expect(evalSet.notes).toEqual([
      'LongMemEval: 3 questions, 1 kept, unit session, user turns only',
      '1 abstention questions (_abs) skipped: q3_abs',
      "1 questions with no user turn marked has_answer skipped, as LongMemEval's averages skip them: q2",
    ]);
  });

  it('includeAbstention and keepWithoutEvidence keep them as answer-only queries: scoped to their haystack, no qrels', () => {
    for (const unit of ['session', 'turn'] as const) {
      const options = longMemEvalOptions.parse({ unit, includeAbstention: true, keepWithoutEvidence: true });
      const { evalSet, stats } = longMemEvalFromJson('t.json', three(), options);
      expect(evalSet.queries.map((q) => [q.id, q.answer, q.metadata?.['abstention'], q.metadata?.['answerOnly']])).toEqual([
        ['q1', '2', undefined, undefined],
        ['q2', 'Dune', undefined, true],
        ['q3_abs', 'You never mentioned selling a boat.', true, true],
      ]);
      // The abstention haystack flags a has_answer turn, yet nothing in it answers the question: no qrels.
      expect([...evalSet.qrels.keys()]).toEqual(['q1']);
      expect(evalSet.scopes?.get('q3_abs')).toEqual([unit === 'session' ? 'answer_9' : 'answer_9_1']);
      expect(stats.answerOnly).toEqual(['q2', 'q3_abs']);
      expect(stats.noRelevant).toEqual([]);
      expect(evalSet.notes).toEqual([
        `LongMemEval: 3 questions, 3 kept, unit ${unit}, user turns only`,
        '2 questions kept for answer measures only, without qrels (abstention, or no has_answer turn): q2, q3_abs',
      ]);
    }
  });

  it('each option keeps only its own kind, and a question without an answer stays skipped', () => {
    const abs = longMemEvalFromJson('t.json', three(), longMemEvalOptions.parse({ includeAbstention: true })).evalSet;
    expect(abs.queries.map((q) => q.id)).toEqual(['q1', 'q3_abs']);
    const data = three();
    delete data[1]!['answer'];
    const noAnswer = longMemEvalFromJson('t.json', data, longMemEvalOptions.parse({ keepWithoutEvidence: true }));
    expect(noAnswer.evalSet.queries.map((q) => q.id)).toEqual(['q1']);
    expect(noAnswer.evalSet.notes).toContain("1 questions with no user turn marked has_answer skipped, as LongMemEval's averages skip them: q2");
  });

  it('rejects an answer that is neither text nor a number, naming the question', () => {
    const data = three();
    data[0]!['answer'] = ['2'];
    expect(() => longMemEvalFromJson('t.json', data, longMemEvalOptions.parse({}))).toThrow(/\[0\]\.answer/);
  });
});

describeShared('LongMemEval adapter: answers on the 2-question sample', ['data/longmemeval/longmemeval_sample.json'], () => {
  const file = sharedPath('data', 'longmemeval', 'longmemeval_sample.json');
  it('keeps both questions for answer measures, the abstention one without qrels; streamed and whole-file agree', async () => {
    const options = longMemEvalOptions.parse({ unit: 'turn', includeAbstention: true, keepWithoutEvidence: true });
    const data = (await readJsonFile(file)) as { question_id: string; answer: string }[];
    const { evalSet } = longMemEvalFromJson(file, data, options);
    expect(evalSet.queries.map((q) => [q.id, q.answer, q.metadata?.['abstention'] === true])).toEqual(
      data.map((d) => [d.question_id, d.answer, d.question_id.endsWith('_abs')]),
    );
    expect([...evalSet.qrels.keys()]).toEqual(['6a1eabeb']);
    expect(await loadLongMemEval(file, options)).toEqual(evalSet);
  });
});
