import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { locomoFromJson, locomoOptions } from '../../evalset/adapters/locomo.js';
import { loadMemory } from '../../evalset/memory.js';
import type { EvalSet, Query } from '../../evalset/types.js';
import { describeShared, PROJECT_ROOT, sharedPath } from '../testing/shared.js';
import { answerQuestions, conversationIndexOf, evalSetProtocol, isAnswerOnly, withoutAnswerOnly } from './questions.js';

function evalSet(queries: readonly Query[], qrels: Record<string, Record<string, number>>, format?: string): EvalSet {
  return {
    name: 't',
    ...(format === undefined ? {} : { format }),
    documents: [],
    queries,
    qrels: new Map(Object.entries(qrels).map(([q, judged]) => [q, new Map(Object.entries(judged))])),
  };
}

describe('answerQuestions', () => {
  const queries: Query[] = [
    {
      id: 'a_abs',
      text: 'When did I sell the boat?',
      stratum: 'temporal-reasoning',
      scope: 'a_abs',
      answer: 'Never mentioned',
      metadata: { questionType: 'temporal-reasoning', questionDate: '2023/05/30 (Tue) 08:08' },
    },
    { id: 'b', text: 'Which city?', stratum: 'exact', answer: 'Lisbon', metadata: { date: '2024-03-05T10:00:00Z', category: 4 } },
    { id: 'c', text: 'No gold here', stratum: 'exact' },
    { id: 'd', text: 'Trap?', stratum: 'adversarial', answer: 'Not answerable', metadata: { abstention: true, category: 5, answerOnly: true } },
  ];
  const qrels = { a_abs: {}, b: { m3: 1, m1: 0, m2: 3, m0: -1 }, c: { m1: 1 } };

  it('gives every query with an answer as a Question, and counts the others', () => {
    const { questions, withoutAnswer } = answerQuestions(evalSet(queries, qrels, 'longmemeval'));
    expect(withoutAnswer).toBe(1);
    expect(questions).toEqual([
      {
        id: 'a_abs',
        text: 'When did I sell the boat?',
        gold: 'Never mentioned',
        stratum: 'temporal-reasoning',
        scope: 'a_abs',
        // LongMemEval's question date, as ISO 8601.
        date: '2023-05-30T08:08:00',
        questionType: 'temporal-reasoning',
        // `_abs` under the longmemeval protocol, without any metadata flag.
        abstention: true,
        evidence: [],
      },
      // Evidence: grades >= 1 only, in the order the qrels list them; an own ISO date wins.
      { id: 'b', text: 'Which city?', gold: 'Lisbon', stratum: 'exact', date: '2024-03-05T10:00:00Z', category: 4, abstention: false, evidence: ['m3', 'm2'] },
      { id: 'd', text: 'Trap?', gold: 'Not answerable', stratum: 'adversarial', category: 5, abstention: true, evidence: [] },
    ]);
  });

  it('reads `_abs` as abstention only under the longmemeval protocol; an explicit protocol wins over the format', () => {
    const generic = answerQuestions(evalSet(queries, qrels)).questions;
    expect(generic.map((q) => q.abstention)).toEqual([false, false, true]);
    const forced = answerQuestions(evalSet(queries, qrels), { protocol: 'longmemeval' }).questions;
    expect(forced.map((q) => q.abstention)).toEqual([true, false, true]);
  });

  it('leaves out a question date that does not parse, rather than passing on text no reader can order', () => {
    const q: Query = { id: 'x', text: 't', stratum: 's', answer: 'y', metadata: { questionDate: 'last Tuesday', date: 'soon' } };
    expect(answerQuestions(evalSet([q], {})).questions[0]?.date).toBeUndefined();
  });
});

describe('evalSetProtocol', () => {
  it("is the eval set's format where it names a protocol, else generic", () => {
    expect(evalSetProtocol(evalSet([], {}, 'locomo'))).toBe('locomo');
    expect(evalSetProtocol(evalSet([], {}, 'longmemeval'))).toBe('longmemeval');
    expect(evalSetProtocol(evalSet([], {}, 'memory'))).toBe('generic');
    expect(evalSetProtocol(evalSet([], {}))).toBe('generic');
  });
});

describe('answer-only queries and conversation indexes', () => {
  it('withoutAnswerOnly drops the answer-only queries, and is the same object when there are none', () => {
    const q = (id: string, answerOnly?: boolean): Query => ({ id, text: id, stratum: 's', ...(answerOnly ? { metadata: { answerOnly } } : {}) });
    const es = evalSet([q('a'), q('b', true), q('c')], { a: { m: 1 } });
    expect(isAnswerOnly(es.queries[1]!)).toBe(true);
    expect(withoutAnswerOnly(es).queries.map((x) => x.id)).toEqual(['a', 'c']);
    const plain = evalSet([q('a')], {});
    expect(withoutAnswerOnly(plain)).toBe(plain);
  });

  it('conversationIndexOf reads the query metadata by question id; undefined where the eval set does not know it', () => {
    const es = evalSet(
      [
        { id: 'c1:q0', text: 't', stratum: 's', metadata: { conversationIndex: 1 } },
        { id: 'x', text: 't', stratum: 's' },
      ],
      {},
    );
    expect(conversationIndexOf({ id: 'c1:q0' }, es)).toBe(1);
    expect(conversationIndexOf({ id: 'x' }, es)).toBeUndefined();
    expect(conversationIndexOf({ id: 'missing' }, es)).toBeUndefined();
  });
});

describe('the bundled example', () => {
  const dir = join(PROJECT_ROOT, 'evalset', 'examples', 'alex-memory');
  it('gives every query a gold answer, and an exact question one whose words a memory that answers it holds', async () => {
    const es = await loadMemory(dir);
    const { questions, withoutAnswer } = answerQuestions(es);
    expect(withoutAnswer).toBe(0);
    expect(questions).toHaveLength(es.queries.length);
    // An extractive reader can only be scored lexically if the gold is in the memories: every word of an exact
    // question's gold (articles aside) occurs in one of its fully answering (grade 3) memories.
    const text = new Map(es.documents.map((d) => [d.id, d.text.toLowerCase()]));
    const words = (s: string) =>
      s
        .toLowerCase()
        .split(/[^\p{L}\p{N}$:,.-]+/u)
        .filter((w) => w !== '' && !['a', 'an', 'the'].includes(w));
    for (const q of questions.filter((x) => x.stratum === 'exact')) {
      const full = [...(es.qrels.get(q.id) ?? [])].filter(([, g]) => g === 3).map(([d]) => text.get(d) ?? '');
      const held = full.some((t) => words(q.gold).every((w) => t.includes(w.replace(/[,.]$/, ''))));
      expect(held, `${q.id}: "${q.gold}"`).toBe(true);
    }
  });
});

describeShared('answerQuestions on LoCoMo', ['data/locomo/locomo10.json'], () => {
  it('gives the 1,540 questions of categories 1-4, with their evidence, conversation index and category', async () => {
    const raw = JSON.parse(await readFile(sharedPath('data', 'locomo', 'locomo10.json'), 'utf8')) as unknown;
    const es = locomoFromJson('locomo10.json', raw, locomoOptions.parse({ keepWithoutEvidence: true })).evalSet;
    expect(evalSetProtocol(es)).toBe('locomo');
    const { questions, withoutAnswer } = answerQuestions(es);
    expect([questions.length, withoutAnswer]).toEqual([1540, 0]);
    expect(questions.filter((q) => q.evidence.length === 0).map((q) => q.id)).toEqual(['conv-26:q30', 'conv-26:q46', 'conv-50:q39', 'conv-50:q42']);
    expect(questions.some((q) => q.abstention)).toBe(false);
    expect(new Set(questions.map((q) => conversationIndexOf(q, es)))).toEqual(new Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
    // The retrieval view is the default load's queries.
    const plain = locomoFromJson('locomo10.json', raw, locomoOptions.parse({})).evalSet;
    expect(withoutAnswerOnly(es).queries).toEqual(plain.queries);
  });
});
