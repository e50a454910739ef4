import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, HarnessError } from '../errors.js';
import { memoryLogger } from '../log.js';
import { type AnthropicLoopback, anthropicError, anthropicLoopback, MESSAGE_TOKENS } from '../testing/anthropic-loopback.js';
import { anthropicChat } from './anthropic.js';
import type { LimiterClock } from './limiter.js';
import type { ChatEndpoint } from './types.js';

/**
 * The Anthropic client through the real `@anthropic-ai/sdk` against a loopback Messages API: the reply, its
 * tokens and the model that served it, failures that name the key variable and never the key, 529 and 429
 * retried after the wait they ask for, and the deadline to the last byte.
 */

const KEY = 'sk-ant-planted-4f1d2e9a';
const KEY_ENV = 'ANTHROPIC_LOOPBACK_KEY';

/** Time `k` times faster than the wall clock, so backoffs of seconds take milliseconds. */
function fastClock(k: number): LimiterClock {
  const base = Date.now();
  return { now: () => base + (Date.now() - base) * k, sleep: (ms) => new Promise((r) => setTimeout(r, ms / k)) };
}

let api: AnthropicLoopback | undefined;
afterEach(async () => {
  await api?.server.close();
  api = undefined;
});

function endpoint(url: string, over: Partial<ChatEndpoint> = {}): ChatEndpoint {
  return {
    provider: 'anthropic',
    model: 'claude-x',
    baseURL: url,
    apiKeyEnv: KEY_ENV,
    local: false,
    maxRetries: 0,
    timeoutMs: 10_000,
    concurrency: 2,
    maxConcurrency: 4,
    ...over,
  };
}

/** The error a chat call failed with. */
async function failure(p: Promise<unknown>): Promise<HarnessError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HarnessError);
  return err as HarnessError;
}

describe('anthropicChat', () => {
  it('sends one user message with the decoding, and reads the text, the tokens and the model that served it', async () => {
    api = await anthropicLoopback((prompt) => `echo: ${prompt}`);
    const chat = await anthropicChat(endpoint(api.server.url), { [KEY_ENV]: KEY }, 'study.yaml');
    expect(chat.inFlight).toBe(4);
    const reply = await chat('Is the sky blue?', { temperature: 0.3, maxTokens: 64 });
    expect(reply).toEqual({
      content: 'echo: Is the sky blue?',
      promptTokens: MESSAGE_TOKENS.input,
      completionTokens: MESSAGE_TOKENS.output,
      model: 'claude-loopback-20250101',
    });
    expect(api.bodies()).toEqual([{ model: 'claude-x', max_tokens: 64, temperature: 0.3, messages: [{ role: 'user', content: 'Is the sky blue?' }] }]);
    // The SDK sends the key in its own header (x-api-key or a bearer token, by version); the test asks only that it arrives.
    const sent = api.server.requests[0]?.headers;
    expect(`${sent?.['x-api-key'] ?? ''} ${sent?.authorization ?? ''}`).toContain(KEY);
  });

  it('joins the text blocks of a reply and skips the others', async () => {
    const content = [
      { type: 'thinking', thinking: 'hmm', signature: 's' },
      { type: 'text', text: 'Yes, ' },
      { type: 'text', text: 'it is.' },
    ];
    api = await anthropicLoopback(() => ({
      body: { type: 'message', role: 'assistant', model: 'claude-x-1', content, usage: { input_tokens: 5, output_tokens: 9 } },
    }));
    const chat = await anthropicChat(endpoint(api.server.url), { [KEY_ENV]: KEY }, 'study.yaml');
    expect(await chat('q', { temperature: 0, maxTokens: 8 })).toEqual({ content: 'Yes, it is.', promptTokens: 5, completionTokens: 9, model: 'claude-x-1' });
  });

  it('a missing key is a config error naming the variable and the block that asks', async () => {
    const err = await failure(anthropicChat(endpoint('http://127.0.0.1:9'), {}, 'study.yaml', { who: 'answer.reader' }));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toContain(`study.yaml: 1 problem\n  answer.reader: ${KEY_ENV} is not set`);
  });

  it('a 401 is not retried and names the key variable, never the key', async () => {
    api = await anthropicLoopback(() => anthropicError(401, 'authentication_error', `invalid x-api-key ${KEY}`));
    const chat = await anthropicChat(endpoint(api.server.url, { maxRetries: 3 }), { [KEY_ENV]: KEY }, 'study.yaml');
    const err = await failure(chat('q', { temperature: 0, maxTokens: 8 }));
    expect(err.message).toBe(
      `${api.server.url}: chat completion with model claude-x failed after 1 attempt (HTTP 401 is not retried): HTTP 401 (invalid x-api-key [redacted])`,
    );
    expect(err.hint).toBe(`check ${KEY_ENV}`);
    expect(`${err.message} ${err.hint}`).not.toContain(KEY);
    expect(api.server.requests).toHaveLength(1);
  });

  it('retries 529 overloaded with a backoff and 429 after its Retry-After, each said once on the log', async () => {
    api = await anthropicLoopback((prompt, n) =>
      n === 0
        ? anthropicError(529, 'overloaded_error', 'Overloaded')
        : n === 1
          ? anthropicError(429, 'rate_limit_error', 'slow down', { 'retry-after': '3' })
          : `ok ${prompt}`,
    );
    const log = memoryLogger();
    const clock = fastClock(100);
    const chat = await anthropicChat(endpoint(api.server.url, { maxRetries: 2 }), { [KEY_ENV]: KEY }, 'study.yaml', { log, label: 'reader', clock });
    const t0 = clock.now();
    expect((await chat('q', { temperature: 0, maxTokens: 8 })).content).toBe('ok q');
    expect(clock.now() - t0).toBeGreaterThanOrEqual(3000 + 375);
    expect(api.server.requests.map((r) => r.headers['x-stainless-retry-count'])).toEqual(['0', '1', '2']);
    expect(log.lines[0]).toMatch(/^reader: server overloaded \(HTTP 529\), waiting 0\.\d s \(backoff\); concurrency 2 -> 1$/);
    expect(log.lines[1]).toBe('reader: server throttled (HTTP 429), waiting 3.0 s (Retry-After); concurrency stays 1');
  });

  it('a run of 529s names every attempt when retries run out', async () => {
    api = await anthropicLoopback(() => anthropicError(529, 'overloaded_error', 'Overloaded'));
    const chat = await anthropicChat(endpoint(api.server.url, { maxRetries: 2 }), { [KEY_ENV]: KEY }, 'study.yaml', { clock: fastClock(100) });
    const err = await failure(chat('q', { temperature: 0, maxTokens: 8 }));
    expect(err.message).toContain('failed after 3 attempts (maxRetries 2 used up): 3 x HTTP 529 (Overloaded)');
  });
});

describe('anthropicChat deadline', () => {
  const open = new Set<ServerResponse>();
  afterEach(() => {
    for (const res of open) res.destroy();
    open.clear();
  });

  it('a body that stalls after the headers is cut at timeoutMs for the whole reply', async () => {
    const server = createServer((req, res) => {
      req.resume();
      open.add(res);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"type":"message","content":[');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const chat = await anthropicChat(endpoint(url, { timeoutMs: 300 }), { [KEY_ENV]: KEY }, 'study.yaml');
      const t0 = performance.now();
      const err = await failure(chat('q', { temperature: 0, maxTokens: 8 }));
      // One attempt of 300 ms: well under the 10 s the SDK alone would wait, whatever the machine's load.
      expect(performance.now() - t0).toBeLessThan(5000);
      expect(err.message).toContain('failed after 1 attempt (maxRetries 0 used up): no complete reply within 300 ms (timeoutMs)');
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
