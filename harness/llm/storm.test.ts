import { afterEach, describe, expect, it } from 'vitest';
import { memoryLogger } from '../log.js';
import { type AnthropicLoopback, anthropicError, anthropicLoopback } from '../testing/anthropic-loopback.js';
import { chatCompletion } from '../testing/chat.js';
import { type Loopback, startLoopback } from '../testing/loopback.js';
import { anthropicChat } from './anthropic.js';
import type { LimiterClock } from './limiter.js';
import { openaiChat } from './openai.js';
import type { ChatEndpoint } from './types.js';

/**
 * Whole runs under throttling, through the real SDKs against loopback servers: a 429 then 529 storm that a run
 * of 40 calls rides out (every call answered, the waits said, concurrency down and then up again), and an
 * OpenAI rate limit used up that holds new calls until it resets. Time runs faster than the wall clock.
 */

/** Time `k` times faster than the wall clock, so backoffs of seconds take milliseconds. */
function fastClock(k: number): LimiterClock {
  const base = Date.now();
  return { now: () => base + (Date.now() - base) * k, sleep: (ms) => new Promise((r) => setTimeout(r, ms / k)) };
}

let anthropic: AnthropicLoopback | undefined;
let openai: Loopback | undefined;
afterEach(async () => {
  await anthropic?.server.close();
  await openai?.close();
  anthropic = openai = undefined;
});

const KEY_ENV = 'STORM_KEY';

function endpoint(provider: ChatEndpoint['provider'], baseURL: string, over: Partial<ChatEndpoint> = {}): ChatEndpoint {
  return { provider, model: 'm', baseURL, apiKeyEnv: KEY_ENV, local: false, maxRetries: 8, timeoutMs: 10_000, concurrency: 4, maxConcurrency: 8, ...over };
}

describe('a throttled run', () => {
  it('rides out 429s with Retry-After and a 529 storm: every call answered, waits said, concurrency down then up', async () => {
    // Requests 0-5 throttled (Retry-After 1 s), 6-11 overloaded (no wait asked), the rest answered.
    let inFlight = 0;
    let peakAfterStorm = 0;
    anthropic = await anthropicLoopback(async (prompt, n) => {
      if (n < 6) return anthropicError(429, 'rate_limit_error', 'rate limited', { 'retry-after': '1' });
      if (n < 12) return anthropicError(529, 'overloaded_error', 'Overloaded');
      inFlight++;
      peakAfterStorm = Math.max(peakAfterStorm, inFlight);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      return `answer to ${prompt}`;
    });
    const log = memoryLogger();
    const chat = await anthropicChat(endpoint('anthropic', anthropic.server.url), { [KEY_ENV]: 'k' }, 'storm.yaml', {
      log,
      label: 'storm',
      clock: fastClock(200),
    });
    const prompts = Array.from({ length: 40 }, (_, i) => `question ${i}`);
    const replies = await Promise.all(prompts.map((p) => chat(p, { temperature: 0, maxTokens: 8 })));
    expect(replies.map((r) => r.content)).toEqual(prompts.map((p) => `answer to ${p}`));
    expect(anthropic.server.requests).toHaveLength(52);

    const info = log.lines.filter((l) => !l.startsWith('detail: '));
    expect(info[0]).toMatch(/^storm: server throttled \(HTTP 429\), waiting 1\.0 s \(Retry-After\); concurrency 4 -> 2/);
    expect(info.some((l) => /^storm: server overloaded \(HTTP 529\), waiting \d+\.\d s \(backoff\); concurrency (stays 1|\d -> 1)/.test(l))).toBe(true);
    // Each congestion event halves once: the 4 calls throttled together make one decrease, the 2 after it one more.
    expect(info.filter((l) => / \d -> \d/.test(l)).map((l) => /concurrency (\d -> \d)/.exec(l)?.[1])).toEqual(['4 -> 2', '2 -> 1']);
    expect(info.length).toBeLessThanOrEqual(12);
    // Down to 1 in the storm, then raised one by one while the server keeps up.
    const lastDown = log.lines.findLastIndex((l) => / -> 1\b/.test(l));
    const raises = log.lines.slice(lastDown + 1).filter((l) => l.startsWith('detail: storm: server keeps up; concurrency'));
    expect(raises.slice(0, 3)).toEqual([
      'detail: storm: server keeps up; concurrency 1 -> 2',
      'detail: storm: server keeps up; concurrency 2 -> 3',
      'detail: storm: server keeps up; concurrency 3 -> 4',
    ]);
    expect(peakAfterStorm).toBeGreaterThan(1);
    expect(peakAfterStorm).toBeLessThanOrEqual(8);
  });

  it('holds new OpenAI calls until a used-up request limit resets, and says so once', async () => {
    const clock = fastClock(100);
    const arrivals: number[] = [];
    openai = await startLoopback(() => {
      arrivals.push(clock.now());
      const reply = chatCompletion('ok', { prompt: 3, completion: 1 });
      return arrivals.length === 1 ? { ...reply, headers: { 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '2s' } } : reply;
    });
    const log = memoryLogger();
    const ep = endpoint('openai', `${openai.url}/v1`, { concurrency: 1, maxConcurrency: 1 });
    const chat = await openaiChat(ep, { [KEY_ENV]: 'k' }, 'limits.yaml', { log, label: 'judge', clock });
    for (let i = 0; i < 3; i++) expect((await chat(`p${i}`, { temperature: 0, maxTokens: 4 })).content).toBe('ok');
    expect((arrivals[1] as number) - (arrivals[0] as number)).toBeGreaterThanOrEqual(1900);
    expect(log.lines).toEqual(['judge: rate limit used up (x-ratelimit-remaining-requests 0), waiting 2.0 s until it resets; concurrency 1']);
  });

  it('a 503 that says overloaded slows down; a plain 500 is retried without touching concurrency', async () => {
    let n = 0;
    openai = await startLoopback(() => {
      n++;
      if (n === 1) return { status: 503, body: { error: { message: 'The engine is currently overloaded', type: 'server_error' } } };
      if (n === 2) return { status: 500, headers: { 'retry-after-ms': '10' }, body: { error: { message: 'boom' } } };
      return chatCompletion('fine', { prompt: 3, completion: 1 });
    });
    const log = memoryLogger();
    const chat = await openaiChat(endpoint('openai', `${openai.url}/v1`), { [KEY_ENV]: 'k' }, 'limits.yaml', { log, label: 'judge', clock: fastClock(100) });
    expect((await chat('p', { temperature: 0, maxTokens: 4 })).content).toBe('fine');
    expect(log.lines).toHaveLength(1);
    expect(log.lines[0]).toMatch(/^judge: server overloaded \(HTTP 503\), waiting \d\.\d s \(backoff\); concurrency 4 -> 2$/);
  });
});
