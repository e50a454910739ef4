import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../log.js';
import { AdaptiveLimiter, backoffMs, type LimiterClock, type LimiterTicket } from './limiter.js';

/**
 * The adaptive limiter on a fake clock: AIMD (one step up after a window of successes, halving once per
 * congestion event), pauses for the server's wait or a backoff, pauses until a used-up rate limit resets, and
 * one log line per wait with repeats folded.
 */

const T0 = Date.parse('2026-03-01T12:00:00Z');

/** A clock that moves only when the test advances it; sleepers wake in time order. */
function fakeClock(): LimiterClock & { advance(ms: number): Promise<void> } {
  let t = T0;
  const sleepers: { at: number; wake: () => void }[] = [];
  const settle = () => new Promise<void>((r) => setImmediate(r));
  return {
    now: () => t,
    sleep: (ms) => new Promise<void>((wake) => sleepers.push({ at: t + ms, wake })),
    async advance(ms) {
      const end = t + ms;
      for (;;) {
        sleepers.sort((a, b) => a.at - b.at);
        const next = sleepers[0];
        if (next === undefined || next.at > end) break;
        sleepers.shift();
        t = next.at;
        next.wake();
        await settle();
      }
      t = end;
      await settle();
    },
  };
}

/** Starts `n` acquires and says which have a slot so far. */
function acquireMany(limiter: AdaptiveLimiter, n: number): { tickets: (LimiterTicket | undefined)[]; started(): number } {
  const tickets: (LimiterTicket | undefined)[] = Array.from({ length: n }, () => undefined);
  for (let i = 0; i < n; i++) void limiter.acquire().then((t) => (tickets[i] = t));
  return { tickets, started: () => tickets.filter((t) => t !== undefined).length };
}

const settle = () => new Promise<void>((r) => setImmediate(r));

function setup(start: number, max: number) {
  const clock = fakeClock();
  const log = memoryLogger();
  const limiter = new AdaptiveLimiter({ start, max, label: 'judge', log, clock, backoff: (n) => 100 * 2 ** n });
  return { clock, log, limiter };
}

describe('AdaptiveLimiter', () => {
  it('starts at concurrency and holds further calls until a slot is given back, first come first served', async () => {
    const { limiter } = setup(2, 4);
    const got = acquireMany(limiter, 4);
    await settle();
    expect(got.started()).toBe(2);
    limiter.release(got.tickets[0]!, { ok: false });
    await settle();
    expect(got.tickets[2]).toBeDefined();
    expect(got.tickets[3]).toBeUndefined();
    expect(limiter.inFlight).toBe(2);
  });

  it('lets retries go ahead of first attempts, in their own order', async () => {
    const { limiter } = setup(1, 1);
    const first = await limiter.acquire();
    const order: string[] = [];
    const take = (name: string, retry: boolean) =>
      void limiter.acquire(retry).then((t) => {
        order.push(name);
        limiter.release(t, { ok: false });
      });
    take('new 1', false);
    take('retry 1', true);
    take('new 2', false);
    take('retry 2', true);
    limiter.release(first, { ok: false });
    await settle();
    expect(order).toEqual(['retry 1', 'retry 2', 'new 1', 'new 2']);
  });

  it('raises by one after a window of successes as large as the limit, up to maxConcurrency', async () => {
    const { limiter, log } = setup(2, 4);
    const history: number[] = [];
    for (let i = 0; i < 12; i++) {
      const t = await limiter.acquire();
      limiter.release(t, { ok: true });
      history.push(limiter.limit);
    }
    // 2 successes raise to 3, 3 more to 4, then the ceiling holds.
    expect(history).toEqual([2, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4]);
    expect(log.lines).toEqual(['detail: judge: server keeps up; concurrency 2 -> 3', 'detail: judge: server keeps up; concurrency 3 -> 4']);
  });

  it('does not raise while the server reports fewer requests left than one more call needs', async () => {
    const { limiter } = setup(2, 4);
    for (let i = 0; i < 6; i++) limiter.release(await limiter.acquire(), { ok: true, headers: { 'x-ratelimit-remaining-requests': '2' } });
    expect(limiter.limit).toBe(2);
    limiter.release(await limiter.acquire(), { ok: true, headers: { 'x-ratelimit-remaining-requests': '900' } });
    expect(limiter.limit).toBe(3);
  });

  it('halves once per congestion event, pauses new starts for the Retry-After, and folds the storm into one line', async () => {
    const { limiter, log, clock } = setup(8, 8);
    const first = acquireMany(limiter, 8);
    await settle();
    const queued = acquireMany(limiter, 1);
    // All 8 in flight come back 429: the first halves and pauses, the other 7 saw the old load.
    for (const t of first.tickets) limiter.release(t!, { ok: false, throttle: { status: 429, waitMs: 2000 } });
    expect(limiter.limit).toBe(4);
    await clock.advance(1999);
    expect(queued.started()).toBe(0);
    await clock.advance(1);
    expect(queued.started()).toBe(1);
    expect(log.lines).toEqual(['judge: server throttled (HTTP 429), waiting 2.0 s (Retry-After); concurrency 8 -> 4']);
    // A call started after the decrease is a new event: halves again, and the folded repeats are said with it.
    limiter.release(queued.tickets[0]!, { ok: false, throttle: { status: 429, waitMs: 1000 } });
    expect(limiter.limit).toBe(2);
    expect(log.lines[1]).toBe(
      'judge: server throttled (HTTP 429), waiting 1.0 s (Retry-After); concurrency 4 -> 2 (7 more throttled or limited replies folded)',
    );
  });

  it('backs off when the server asks for no wait, growing with each event in a row, never below 1', async () => {
    const { limiter, log, clock } = setup(2, 4);
    const overloaded = { ok: false, throttle: { status: 529 } } as const;
    limiter.release(await limiter.acquire(), overloaded);
    expect(limiter.pausedUntil - clock.now()).toBe(100);
    const next = limiter.acquire();
    await clock.advance(100);
    limiter.release(await next, overloaded);
    expect(limiter.pausedUntil - clock.now()).toBe(200);
    expect(limiter.limit).toBe(1);
    const third = limiter.acquire();
    await clock.advance(200);
    limiter.release(await third, { ok: false, throttle: { status: 503 } });
    expect(log.lines).toEqual([
      'judge: server overloaded (HTTP 529), waiting 0.1 s (backoff); concurrency 2 -> 1',
      'judge: server overloaded (HTTP 529), waiting 0.2 s (backoff); concurrency stays 1',
      'judge: server overloaded (HTTP 503), waiting 0.4 s (backoff); concurrency stays 1',
    ]);
    // A success ends the run of events: the next backoff starts small again.
    const fourth = limiter.acquire();
    await clock.advance(400);
    limiter.release(await fourth, { ok: true });
    limiter.release(await limiter.acquire(), overloaded);
    expect(limiter.pausedUntil - clock.now()).toBe(100);
  });

  it('waits until a used-up OpenAI limit resets before starting anything new', async () => {
    const { limiter, log, clock } = setup(2, 4);
    const headers = new Headers({ 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '1.5s', 'x-ratelimit-remaining-tokens': '40000' });
    limiter.release(await limiter.acquire(), { ok: true, headers });
    const next = acquireMany(limiter, 1);
    await clock.advance(1499);
    expect(next.started()).toBe(0);
    await clock.advance(1);
    expect(next.started()).toBe(1);
    expect(log.lines).toEqual(['judge: rate limit used up (x-ratelimit-remaining-requests 0), waiting 1.5 s until it resets; concurrency 2']);
    expect(limiter.limit).toBe(2);
  });

  it('waits for an Anthropic reset given as a time, capped', async () => {
    const { limiter, log, clock } = setup(1, 1);
    const at = (s: number) => new Date(T0 + s * 1000).toISOString();
    limiter.release(await limiter.acquire(), {
      ok: true,
      headers: { 'anthropic-ratelimit-tokens-remaining': '0', 'anthropic-ratelimit-tokens-reset': at(30) },
    });
    expect(limiter.pausedUntil - clock.now()).toBe(30_000);
    await clock.advance(30_000);
    limiter.release(await limiter.acquire(), {
      ok: false,
      headers: { 'anthropic-ratelimit-requests-remaining': '0', 'anthropic-ratelimit-requests-reset': at(30 + 600) },
    });
    expect(limiter.pausedUntil - clock.now()).toBe(60_000);
    expect(log.lines[1]).toBe('judge: rate limit used up (anthropic-ratelimit-requests-remaining 0), waiting 60.0 s until it resets; concurrency 1');
  });

  it('never starts above maxConcurrency, even when concurrency is set higher', () => {
    expect(new AdaptiveLimiter({ start: 16, max: 4, label: 'x' }).limit).toBe(4);
    expect(new AdaptiveLimiter({ start: 0, max: 4, label: 'x' }).limit).toBe(1);
  });
});

describe('backoffMs', () => {
  it('doubles from 0.5 s to 8 s, with up to 25% taken off', () => {
    expect([0, 1, 2, 3, 4, 5].map((n) => backoffMs(n, () => 0))).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
    expect(backoffMs(0, () => 1)).toBe(375);
  });
});
