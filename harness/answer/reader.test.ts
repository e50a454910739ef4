import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, InputError } from '../errors.js';
import { chatCompletion } from '../testing/chat.js';
import { tempFolder } from '../testing/files.js';
import { type Loopback, type LoopbackReply, startLoopback } from '../testing/loopback.js';
import { type ChatReaderConfig, chatReader } from './reader.js';
import type { AnswerQuestion, ContextItem } from './types.js';

const KEY = 'sk-answer-reader-planted-5d2a91';
const env = { READER_KEY: KEY };

let server: Loopback | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Body = { messages: { content: string }[]; temperature: number; max_tokens: number; model: string };
const bodyOf = (i: number) => server?.requests[i]?.json as Body;

async function serve(reply: (prompt: string) => LoopbackReply): Promise<Loopback> {
  server = await startLoopback((req) => reply((req.json as Body).messages[0]?.content ?? ''));
  return server;
}

const config = (over: Partial<ChatReaderConfig> = {}): ChatReaderConfig => ({
  model: 'reader-m',
  baseURL: `${server?.url}/v1`,
  apiKeyEnv: 'READER_KEY',
  local: false,
  temperature: 0,
  maxTokens: 500,
  budgetTokens: 4000,
  timeoutMs: 10_000,
  maxRetries: 0,
  ...over,
});

const question: AnswerQuestion = {
  id: 'q1',
  text: 'Where does my sister live?',
  gold: 'Denver',
  stratum: 'single-session-user',
  questionType: 'single-session-user',
  date: '2023/06/01 (Thu) 10:00',
  abstention: false,
  evidence: ['s2'],
};
const context: ContextItem[] = [
  { id: 's2', text: 'user: My sister moved to Denver.', timestamp: '2023-05-02' },
  { id: 's1', text: 'user: I adopted a dog.', timestamp: '2023-01-15' },
];

describe('chatReader', () => {
  it('asks with the built-in prompt: the history oldest first with dates, the date, the question; answers with the reply', async () => {
    await serve(() => chatCompletion('  Denver.\n', { prompt: 120, completion: 3 }));
    const reader = await chatReader(config(), env, 'study.yaml');
    expect(reader).toMatchObject({ id: 'chat:reader-m', local: false, model: 'reader-m' });
    const out = await reader.answer(question, context);
    expect(out).toEqual({ status: 'answered', text: 'Denver.', tokens: { prompt: 120, completion: 3 }, model: 'judge-m', context: ['s2', 's1'] });
    const body = bodyOf(0);
    expect(body).toMatchObject({ model: 'reader-m', temperature: 0, max_tokens: 500 });
    const prompt = body.messages[0]?.content ?? '';
    expect(prompt).toContain(
      "### Session 1, 2023-01-15\nuser: I adopted a dog.\n\n### Session 2, 2023-05-02\nuser: My sister moved to Denver.\n\nToday's date: 2023/06/01 (Thu) 10:00",
    );
    expect(prompt).toMatch(/Question: Where does my sister live\?\nAnswer:\n?$/);
    expect(server?.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('shows only what the budget holds, and says when the question has no date', async () => {
    await serve(() => chatCompletion('I do not know.', { prompt: 1, completion: 1 }));
    const reader = await chatReader(config({ budgetTokens: 18 }), env, 'study.yaml');
    const { date: _none, ...undated } = question;
    const out = await reader.answer(undated, context);
    expect(out).toMatchObject({ status: 'answered', context: ['s2'] });
    const prompt = bodyOf(0).messages[0]?.content ?? '';
    expect(prompt).toContain("My sister moved to Denver.\n\nToday's date: not given");
    expect(prompt).not.toContain('adopted');
  });

  it('a failed request is a failed outcome with its reason, naming no key; an empty reply fails too', async () => {
    const failing = await serve(() => ({ status: 503, headers: { 'retry-after-ms': '0' }, body: { error: { message: `busy, key ${KEY}` } } }));
    const reader = await chatReader(config({ maxRetries: 1 }), env, 'study.yaml');
    const out = await reader.answer(question, context);
    expect(out.status).toBe('failed');
    expect(out).toMatchObject({ tokens: { prompt: 0, completion: 0 } });
    const reason = out.status === 'failed' ? out.reason : '';
    expect(reason).toContain(`${failing.url}/v1: chat completion with model reader-m failed after 2 attempts (maxRetries 1 used up): 2 x HTTP 503`);
    expect(reason).not.toContain(KEY);
    await failing.close();

    await serve(() => chatCompletion('   ', { prompt: 50, completion: 0 }));
    const empty = await (await chatReader(config(), env, 'study.yaml')).answer(question, context);
    expect(empty).toEqual({ status: 'failed', reason: 'the reader replied with no text', tokens: { prompt: 50, completion: 0 } });
  });

  it('a missing key is a config error naming the variable, unless the server is declared local', async () => {
    await serve(() => chatCompletion('Denver', { prompt: 1, completion: 1 }));
    const missing = chatReader(config(), {}, 'study.yaml');
    await expect(missing).rejects.toThrow(ConfigError);
    await expect(missing).rejects.toThrow(/study\.yaml: 1 problem\n {2}answer reader: READER_KEY is not set/);
    const local = await chatReader(config({ local: true }), {}, 'study.yaml');
    expect(await local.answer(question, context)).toMatchObject({ status: 'answered', text: 'Denver' });
  });

  it("a user's prompt file replaces the built-in one; its placeholders are checked when the reader is made", async () => {
    await serve(() => chatCompletion('Denver', { prompt: 1, completion: 1 }));
    const dir = await tempFolder('answer-reader-prompt', {
      'mine.md': 'Q: {{question}}\nH:\n{{history}}',
      'nohistory.md': 'Answer {{question}} on {{date}}.',
      'stray.md': '{{history}}\n{{question}}\n{{today}}',
    });
    const reader = await chatReader(config({ promptFile: join(dir, 'mine.md') }), env, 'study.yaml');
    await reader.answer(question, context);
    expect(bodyOf(0).messages[0]?.content).toBe(
      'Q: Where does my sister live?\nH:\n### Session 1, 2023-01-15\nuser: I adopted a dog.\n\n### Session 2, 2023-05-02\nuser: My sister moved to Denver.',
    );
    expect(reader.fingerprint).not.toBe((await chatReader(config(), env, 'study.yaml')).fingerprint);
    const noHistory = chatReader(config({ promptFile: join(dir, 'nohistory.md') }), env, 'study.yaml');
    await expect(noHistory).rejects.toThrow(InputError);
    await expect(noHistory).rejects.toThrow(
      /nohistory\.md: the prompt has no \{\{history\}\}: this prompt takes \{\{history\}\}, \{\{question\}\}, \{\{date\}\}/,
    );
    await expect(chatReader(config({ promptFile: join(dir, 'stray.md') }), env, 'study.yaml')).rejects.toThrow(
      /stray\.md:3: unknown placeholder \{\{today\}\}/,
    );
    expect(server?.requests).toHaveLength(1);
  });
});
