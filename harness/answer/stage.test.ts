import { describe, expect, it } from 'vitest';
import { ContentStore } from '../cache/index.js';
import type { ChatFn } from '../llm/openai.js';
import { memoryLogger } from '../log.js';
import { tempDir } from '../testing/temp.js';
import { cachedGrader, cachedReader, uncachedReader } from './cache.js';
import { answerCosts } from './cost.js';
import { judgeProfile } from './judges.js';
import type { Reader } from './reader.js';
import { answerPerQuery, failedQuestions } from './score.js';
import { answerStage } from './stage.js';
import { type AnswerSource, evidenceInContext, fullHistory, topKContext } from './systems.js';
import type { AnswerQuestion, ContextItem, ReaderOutcome } from './types.js';

const q = (id: string, gold: string, evidence: string[], scope?: string): AnswerQuestion => ({
  id,
  text: `question ${id}`,
  gold,
  stratum: 's',
  abstention: false,
  evidence,
  ...(scope === undefined ? {} : { scope }),
});

/** A reader that answers with the first item's text, counting its calls; `fail` ids fail. */
function scriptedReader(local: boolean, fail: readonly string[] = []): Reader & { calls: string[] } {
  const calls: string[] = [];
  return {
    id: 'scripted',
    local,
    model: 'scripted-m',
    fingerprint: 'scripted-v1',
    calls,
    answer(question, context): Promise<ReaderOutcome> {
      calls.push(question.id);
      if (fail.includes(question.id)) return Promise.resolve({ status: 'failed', reason: 'HTTP 500', tokens: { prompt: 3, completion: 0 } });
      const text = context[0]?.text ?? 'nothing';
      return Promise.resolve({ status: 'answered', text, tokens: { prompt: 10, completion: 2 }, model: 'scripted-m', context: context.map((c) => c.id) });
    },
  };
}

/** A binary judge: CORRECT when the prompt's answer contains "right", unreadable when it contains "garble". */
function scriptedJudge(): ChatFn & { prompts: string[] } {
  const prompts: string[] = [];
  const chat: ChatFn = async (prompt) => {
    prompts.push(prompt);
    const content = prompt.includes('garble') ? '???' : prompt.includes('right') ? 'CORRECT' : 'WRONG';
    return { content, promptTokens: 20, completionTokens: 1 };
  };
  return Object.assign(chat, { prompts });
}

const store = () => new ContentStore(tempDir('harness-answer-cache'), { log: memoryLogger() });

describe('the answer caches', () => {
  it('serve a second answer from the store, keyed by the context; a failed answer is asked again', async () => {
    const inner = scriptedReader(true, ['q2']);
    const s = store();
    const reader = cachedReader(inner, s, memoryLogger(), { server: 'http://127.0.0.1:1/v1' });
    const ctx: ContextItem[] = [{ id: 'm1', text: 'the right answer' }];
    const first = await reader.answer(q('q1', 'x', []), ctx);
    expect(await reader.answer(q('q1', 'x', []), ctx)).toEqual(first);
    await reader.answer(q('q1', 'x', []), [{ id: 'm2', text: 'another context' }]);
    await reader.answer(q('q2', 'x', []), ctx);
    await reader.answer(q('q2', 'x', []), ctx);
    expect(inner.calls).toEqual(['q1', 'q1', 'q2', 'q2']);
    expect(reader.counts()).toEqual({ requests: 4, cached: 1 });
    // A cached answer keeps the tokens it cost, so a rerun's report shows the same cost.
    expect(first).toMatchObject({ tokens: { prompt: 10, completion: 2 } });
    const plain = uncachedReader(scriptedReader(true));
    await plain.answer(q('q1', 'x', []), ctx);
    expect(plain.counts()).toEqual({ requests: 1, cached: 0 });
  });

  it('cache each graded sample by its index; an unreadable sample is not stored; the majority decides, a tie is wrong', async () => {
    const chat = scriptedJudge();
    const profile = await judgeProfile('binary');
    const s = store();
    const opts = { samples: 2, temperature: 0, parseRetries: 0, judge: 'binary/j' };
    const grader = cachedGrader(profile, chat, { model: 'j', temperature: 0 }, opts, s, memoryLogger());
    const g = await grader.grade(q('q1', 'gold', []), 'the right one');
    expect(g).toMatchObject({ correct: true, flipRate: 0, tokens: { prompt: 40, completion: 2 }, judge: 'binary/j' });
    expect(await grader.grade(q('q1', 'gold', []), 'the right one')).toEqual(g);
    expect(chat.prompts).toHaveLength(2);
    const garbled = await grader.grade(q('q2', 'gold', []), 'garble');
    expect(garbled.correct).toBeUndefined();
    await grader.grade(q('q2', 'gold', []), 'garble');
    expect(chat.prompts).toHaveLength(6);
    expect(grader.counts()).toEqual({ requests: 6, cached: 2 });
  });
});

describe('answerStage', () => {
  const docs = new Map([
    ['m1', { id: 'm1', text: 'the right answer', timestamp: '2024-01-02' }],
    ['s1', { id: 's1', text: 'a private right answer', sensitive: true }],
    ['m2', { id: 'm2', text: 'a wrong answer', timestamp: '2024-03-01' }],
  ]);
  const results = {
    q1: [['m1', 2] as [string, number], ['m2', 1] as [string, number]],
    q2: [['s1', 1] as [string, number]],
    q3: [['m2', 1] as [string, number]],
  };
  const questions = [q('q1', 'gold', ['m1']), q('q2', 'gold', ['s1']), q('q3', 'gold', ['m1'])];

  async function run(opts: { readerLocal: boolean; judgeLocal: boolean; sources?: AnswerSource[] }) {
    const reader = cachedReader(scriptedReader(opts.readerLocal, ['q3']), store(), memoryLogger());
    const chat = scriptedJudge();
    const grader = cachedGrader(
      await judgeProfile('binary'),
      chat,
      { model: 'j', temperature: 0 },
      { samples: 1, temperature: 0, parseRetries: 0, judge: 'binary/j' },
      store(),
      memoryLogger(),
    );
    const systems = await answerStage({
      questions,
      sources: opts.sources ?? [{ kind: 'reader', id: 'sys', contextOf: topKContext(results, undefined, docs, 1) }],
      readerAt: () => reader,
      budgetTokens: 1000,
      grader,
      judgeName: 'binary/j',
      judgeLocal: opts.judgeLocal,
      sensitiveEvidence: (x) => x.evidence.includes('s1'),
      readerConcurrency: 2,
      judgeConcurrency: 2,
      log: memoryLogger(),
    });
    return { systems, chat };
  }

  it('answers from the top-k, grades, attributes; a reader failure is an outcome, not a grade', async () => {
    const { systems } = await run({ readerLocal: true, judgeLocal: true });
    const [a, b, c] = systems[0]?.outcomes ?? [];
    expect(a).toMatchObject({
      questionId: 'q1',
      answer: { status: 'answered', text: 'the right answer', context: ['m1'] },
      grade: { correct: true },
      evidenceInContext: true,
    });
    expect(b).toMatchObject({ questionId: 'q2', grade: { correct: true } });
    expect(c).toMatchObject({ questionId: 'q3', answer: { status: 'failed', reason: 'HTTP 500' } });
    expect(c?.grade).toBeUndefined();
    const failures = failedQuestions(questions, systems, ['Acc', 'EM']);
    expect([...failures]).toEqual([['q3', [{ system: 'sys', cause: 'reader', reason: 'HTTP 500' }]]]);
    expect(answerPerQuery(questions.slice(0, 2), systems, ['Acc', 'EM'])).toEqual({ sys: { Acc: [1, 1], EM: [0, 0] } });
    expect(answerCosts(systems, { sys: { reader: 'scripted-m', judge: 'j' } }, { 'scripted-m': { input: 1, output: 1 } })).toEqual({
      sys: { reader: { prompt: 23, completion: 4, model: 'scripted-m', usd: 27 / 1e6 }, judge: { prompt: 40, completion: 2, model: 'j', usd: null } },
    });
  });

  it('sends no sensitive memory to a reader, nor a question with sensitive evidence to a judge, that is not local', async () => {
    const { systems, chat } = await run({ readerLocal: false, judgeLocal: false });
    const q2 = systems[0]?.outcomes[1];
    expect(q2?.answer).toMatchObject({ status: 'failed', reason: expect.stringMatching(/^skipped: sensitive/) });
    expect(failedQuestions(questions, systems, ['Acc']).get('q2')).toEqual([{ system: 'sys', cause: 'skipped-sensitive', reason: expect.any(String) }]);
    expect(chat.prompts.join('\n')).not.toContain('private');
    // A local reader may read it; its answer then goes to no judge that is not local.
    const local = await run({ readerLocal: true, judgeLocal: false });
    expect(local.systems[0]?.outcomes[1]?.grade).toMatchObject({ samples: [{ status: 'failed', reason: expect.stringMatching(/^skipped: sensitive/) }] });
    expect(local.chat.prompts.join('\n')).not.toContain('private');
  });

  it('answers-file rows: a recorded grade is the recorded judge, a row without one goes to the configured judge, a question without a row has no outcome', async () => {
    const row = (response: string, correct?: boolean) => ({ where: 'f:1', response, ...(correct === undefined ? {} : { recorded: { correct } }) });
    const mapping = {
      byQuestion: new Map([
        ['q1', row('nope', true)],
        ['q2', row('right')],
      ]),
      unmapped: [],
      missing: ['q3'],
    };
    const { systems } = await run({
      readerLocal: true,
      judgeLocal: true,
      sources: [{ kind: 'answers-file', id: 'file', mapping, recordedJudge: 'recorded:mem0' }],
    });
    const outcomes = systems[0]?.outcomes ?? [];
    expect(outcomes.map((o) => [o.questionId, o.grade?.correct, o.grade?.judge, o.evidenceInContext])).toEqual([
      ['q1', true, 'recorded:mem0', undefined],
      ['q2', true, 'binary/j', undefined],
    ]);
    expect(failedQuestions(questions, systems, ['Acc']).get('q3')).toEqual([{ system: 'file', cause: 'missing' }]);
  });
});

describe('contexts', () => {
  it('full-context: every document of the scope, newest first; evidence in context only with ids and a known context', () => {
    const es = {
      documents: [
        { id: 'a', text: 'old', timestamp: '2020-01-01' },
        { id: 'b', text: 'new', timestamp: '2023-01-01' },
        { id: 'c', text: 'other scope', timestamp: '2024-01-01' },
        { id: 'd', text: 'undated' },
      ],
      scopes: new Map([['s1', ['a', 'b', 'd']]]),
    };
    expect(fullHistory(es)(q('x', 'g', [], 's1')).items.map((i) => i.id)).toEqual(['b', 'a', 'd']);
    expect(fullHistory(es)(q('x', 'g', [])).items.map((i) => i.id)).toEqual(['c', 'b', 'a', 'd']);
    expect(evidenceInContext(q('x', 'g', ['a']), ['b', 'a'])).toBe(true);
    expect(evidenceInContext(q('x', 'g', ['a']), ['b'])).toBe(false);
    expect(evidenceInContext(q('x', 'g', []), ['b'])).toBeUndefined();
    expect(evidenceInContext(q('x', 'g', ['a']), undefined)).toBeUndefined();
  });
});
