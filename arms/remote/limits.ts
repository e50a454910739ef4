import type { LimitFunction } from 'p-limit';
import { z } from 'zod';
import type { Corpus } from '../../evalset/types.js';
import { HarnessError } from '../../harness/errors.js';
import type { Logger } from '../../harness/log.js';

/**
 * A token bucket: at most `ratePerSecond` calls per second on average, bursts of up to `burst`. Callers
 * `await take()` before each call; waiting callers are served in arrival order.
 */
export class TokenBucket {
  private tokens: number;
  private last = performance.now();
  private queue: Promise<void> = Promise.resolve();
  constructor(
    private readonly ratePerSecond: number,
    private readonly burst = Math.max(1, Math.ceil(ratePerSecond)),
  ) {
    this.tokens = this.burst;
  }

  take(): Promise<void> {
    const next = this.queue.then(async () => {
      const now = performance.now();
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.ratePerSecond);
      this.last = now;
      if (this.tokens < 1) {
        await sleep(((1 - this.tokens) / this.ratePerSecond) * 1000);
        this.tokens = 1;
        this.last = performance.now();
      }
      this.tokens -= 1;
    });
    this.queue = next;
    return next;
  }
}

/**
 * The longest delay a Node.js timer keeps (2^31 - 1 ms, about 24.8 days): a longer one fires after 1 ms, so a
 * larger timeout would fail every call at once. User timeouts above it are refused when the config loads.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** Milliseconds of a timeout the config sets: a positive integer no longer than a Node.js timer can wait. */
export const timeoutMsSchema = () =>
  z
    .number()
    .int()
    .positive()
    .max(MAX_TIMER_MS, { error: `must be at most ${MAX_TIMER_MS} (about 24.8 days), the longest timer Node.js can set` });

/** Waits `ms`; a wait longer than one timer can hold is made of several, so it never fires early. */
export async function sleep(ms: number): Promise<void> {
  for (let left = ms; left > 0; left -= MAX_TIMER_MS) await new Promise((r) => setTimeout(r, Math.min(left, MAX_TIMER_MS)));
}

/** A failed call to a remote system. `retryable`: a later attempt may succeed (timeouts, 429, 5xx, resets). */
export class RemoteCallError extends HarnessError {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
    opts: { hint?: string; exitCode?: 1 | 2 } = {},
  ) {
    super(message, opts);
  }
}

/** Milliseconds a Retry-After header asks for (seconds or an HTTP date), or undefined. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const s = Number(header);
  if (Number.isFinite(s)) return Math.max(0, s * 1000);
  const t = Date.parse(header);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

/**
 * `attempt` until it succeeds or fails for good: a retryable RemoteCallError is retried up to `retries` times,
 * after its Retry-After when it carries one (capped at `maxWaitMs`), else after an exponential backoff
 * (`baseDelayMs` * 2^n). The last error is rethrown with the number of attempts made.
 */
export async function withRetries<T>(
  what: string,
  attempt: () => Promise<T>,
  opts: { readonly retries: number; readonly baseDelayMs: number; readonly maxWaitMs: number; readonly log: Logger },
): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof RemoteCallError)) throw err;
      if (!err.retryable || n >= opts.retries) {
        const tries = err.retryable ? ` (gave up after ${n + 1} attempt(s))` : '';
        throw new RemoteCallError(`${what}: ${err.message}${tries}`, false, undefined, { ...(err.hint === undefined ? {} : { hint: err.hint }) });
      }
      const wait = Math.min(opts.maxWaitMs, err.retryAfterMs ?? opts.baseDelayMs * 2 ** n);
      opts.log.warn(`${what}: ${err.message}; retry ${n + 1}/${opts.retries} in ${Math.round(wait)} ms`);
      await sleep(wait);
    }
  }
}

/**
 * Refuses (exit 2) to send Sensitive documents to a server not declared local: an indexing call that would
 * carry them off the machine names how many there are and the first ids, never their text.
 */
export function refuseSensitive(arm: string, where: string, corpus: Corpus, local: boolean): void {
  if (local) return;
  const ids = corpus.filter((d) => d.sensitive === true).map((d) => d.id);
  if (ids.length === 0) return;
  throw new HarnessError(
    `arm ${arm} would send ${ids.length} sensitive document(s) (${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ', ...' : ''}) to ${where}, which the config does not declare local`,
    {
      exitCode: 2,
      hint: 'set the arm param local: true only if the server runs on this machine; otherwise drop the store/index call and load the server yourself',
    },
  );
}

/**
 * Sends every document of `corpus` through `store`, at most `limit`'s concurrency at once, ticking `progress`;
 * the first failure stops the queued calls (none is started after it) and is thrown.
 */
export async function storeAll(
  corpus: Corpus,
  limit: LimitFunction,
  progress: { tick(n?: number): void; done(): void },
  store: (doc: Corpus[number]) => Promise<unknown>,
): Promise<void> {
  try {
    await Promise.all(
      corpus.map((d) =>
        limit(async () => {
          await store(d);
          progress.tick();
        }),
      ),
    );
  } catch (err) {
    limit.clearQueue();
    throw err;
  } finally {
    progress.done();
  }
}
