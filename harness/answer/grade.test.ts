import { afterEach, describe, expect, it } from 'vitest';
import type { ChatFn } from '../llm/openai.js';
import { type ScriptedChat, scriptedChat } from '../testing/answer-chat.js';
import { gradeAnswer, majority, reaskPrompt } from './grade.js';
import { judgeProfile } from './judges.js';
import type { AnswerQuestion } from './types.js';

const question: AnswerQuestion = {
  id: 'q1',
  text: 'Where does my sister live?',
  gold: 'Denver',
  stratum: 'multi-session',
  questionType: 'multi-session',
  abstention: false,
  evidence: ['d1'],
};
const opts = { samples: 1, temperature: 0, parseRetries: 0, judge: 'longmemeval/judge-m' };

let scripted: ScriptedChat | undefined;
afterEach(async () => {
  await scripted?.server.close();
  scripted = undefined;
});

/** A loopback judge that gives `replies` in turn (the last one again once they run out). */
async function judgeSaying(...replies: string[]): Promise<ScriptedChat> {
  scripted = await scriptedChat((_prompt, n) => replies[Math.min(n, replies.length - 1)] as string);
  return scripted;
}

describe('gradeAnswer', () => {
  it('grades one answer in the protocol decoding: the prompt for the question, 10 tokens, the given temperature', async () => {
    const s = await judgeSaying('Yes.');
    const grade = await gradeAnswer(await judgeProfile('longmemeval'), s.chat, question, 'She lives in Denver.', opts);
    expect(grade).toEqual({
      correct: true,
      samples: [{ status: 'graded', correct: true, reply: 'Yes.' }],
      flipRate: 0,
      tokens: { prompt: 7, completion: 2 },
      judge: 'longmemeval/judge-m',
    });
    expect(s.decodings()).toEqual([{ temperature: 0, maxTokens: 10 }]);
    expect(s.prompts()[0]).toContain("Reference answer: Denver\nAssistant's answer: She lives in Denver.");
  });

  it('reads each profile its own way: a fenced JSON label for locomo, a verdict word for binary', async () => {
    const s = await judgeSaying('```json\n{"label": "WRONG"}\n```', 'CORRECT - same city');
    expect((await gradeAnswer(await judgeProfile('locomo'), s.chat, question, 'Boston', opts)).correct).toBe(false);
    expect((await gradeAnswer(await judgeProfile('binary'), s.chat, question, 'Denver', opts)).correct).toBe(true);
    expect(s.decodings().map((d) => d.maxTokens)).toEqual([200, 10]);
  });

  it('takes the majority of the samples, with the flip rate and every token; a tie is wrong', async () => {
    const lme = await judgeProfile('longmemeval');
    const s = await judgeSaying('yes', 'no', 'yes', 'yes', 'no');
    const three = await gradeAnswer(lme, s.chat, question, 'Denver', { ...opts, samples: 3, temperature: 0.7 });
    expect(three).toMatchObject({ correct: true, flipRate: 1 / 3, tokens: { prompt: 21, completion: 6 } });
    expect(three.samples.map((x) => x.status === 'graded' && x.correct)).toEqual([true, false, true]);
    expect(s.decodings().every((d) => d.temperature === 0.7)).toBe(true);
    const tie = await gradeAnswer(lme, s.chat, question, 'Denver', { ...opts, samples: 2 });
    expect(tie).toMatchObject({ correct: false, flipRate: 0.5 });
  });

  it('asks again after an unreadable reply, with the format instruction, and counts the tokens of both', async () => {
    const s = await judgeSaying('The answer seems fine to me.', '{"label": "CORRECT"}');
    const grade = await gradeAnswer(await judgeProfile('locomo'), s.chat, question, 'Denver', { ...opts, parseRetries: 1 });
    expect(grade).toMatchObject({ correct: true, flipRate: 0, tokens: { prompt: 14, completion: 4 } });
    const [first, second] = s.prompts();
    expect(second).toBe(
      `${first}\n\nYour previous reply was:\nThe answer seems fine to me.\n\nIt could not be read. Reply with the JSON object {"label": "CORRECT"} or {"label": "WRONG"} and nothing else.`,
    );
  });

  it('an answer with no readable reply at all has no verdict: a failure, not a wrong answer', async () => {
    const s = await judgeSaying('Hmm.');
    const grade = await gradeAnswer(await judgeProfile('binary'), s.chat, question, 'Denver', { ...opts, samples: 2, parseRetries: 2 });
    expect(grade.correct).toBeUndefined();
    expect('correct' in grade).toBe(false);
    expect(grade.samples).toEqual([
      { status: 'failed', reason: 'no binary verdict could be read in 3 replies' },
      { status: 'failed', reason: 'no binary verdict could be read in 3 replies' },
    ]);
    expect(grade).toMatchObject({ flipRate: 0, tokens: { prompt: 42, completion: 12 } });
  });

  it('a failed request is a failed sample with its reason; the other samples still decide', async () => {
    scripted = await scriptedChat((_p, n) => (n === 0 ? { status: 500, body: { error: { message: 'overloaded' } } } : 'no'));
    const grade = await gradeAnswer(await judgeProfile('longmemeval'), scripted.chat, question, 'Boston', { ...opts, samples: 2 });
    expect(grade.correct).toBe(false);
    expect(grade.samples[0]).toEqual({
      status: 'failed',
      reason: `${scripted.server.url}/v1: chat completion with model judge-m failed after 1 attempt (maxRetries 0 used up): HTTP 500 (overloaded)`,
    });
    expect(grade).toMatchObject({ flipRate: 0, tokens: { prompt: 7, completion: 2 } });
  });

  it('re-asks with the same prompt when the profile gives no format instruction, and refuses nonsense options', async () => {
    const seen: string[] = [];
    const chat: ChatFn = async (prompt) => {
      seen.push(prompt);
      return { content: seen.length === 1 ? '' : 'yes', promptTokens: 1, completionTokens: 1 };
    };
    const { reask: _dropped, ...bare } = await judgeProfile('longmemeval');
    expect((await gradeAnswer(bare, chat, question, 'Denver', { ...opts, parseRetries: 1 })).correct).toBe(true);
    expect(seen[1]).toBe(seen[0]);
    expect(reaskPrompt('P', 'R', undefined)).toBe('P');
    await expect(gradeAnswer(bare, chat, question, 'x', { ...opts, samples: 0 })).rejects.toThrow(RangeError);
    await expect(gradeAnswer(bare, chat, question, 'x', { ...opts, parseRetries: -1 })).rejects.toThrow(RangeError);
  });
});

describe('majority', () => {
  it('over graded samples only; ties wrong; none graded, no verdict', () => {
    const g = (correct: boolean) => ({ status: 'graded' as const, correct, reply: '' });
    const f = { status: 'failed' as const, reason: 'x' };
    expect(majority([g(true), f, g(true), g(false)])).toEqual({ correct: true, flipRate: 1 / 3 });
    expect(majority([g(true), g(false)])).toEqual({ correct: false, flipRate: 0.5 });
    expect(majority([f, f])).toEqual({ flipRate: 0 });
    expect(majority([g(false)])).toEqual({ correct: false, flipRate: 0 });
  });
});
