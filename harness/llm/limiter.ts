import type { Logger } from '../log.js';
import { type HeaderBag, rateLimitsOf } from './rate-headers.js';

/**
 * The adaptive concurrency limiter of one chat client: every call of the client takes a slot before each attempt
 * and gives it back with what the server said. Additive increase, multiplicative decrease (AIMD): the number of
 * calls in flight starts at the endpoint's `concurrency`, grows by one after a window of successes while the
 * server keeps up, up to `maxConcurrency`, and halves when the server throttles (429) or says it is overloaded
 * (529, 503 overloaded). A throttle also pauses new starts for the wait the server asked for, and a rate limit
 * used up (its remaining count 0 in the reply's headers) pauses them until it resets. Time is injected, so tests
 * run a storm on a fake clock.
 */

/** The server's sign of congestion on one attempt: its status and the wait it asked for, if any. */
export interface Throttle {
  readonly status: number;
  readonly waitMs?: number;
}

/** What one attempt told the limiter: whether it succeeded, the reply's headers, and a throttle. */
export interface CallOutcome {
  readonly ok: boolean;
  readonly headers?: HeaderBag;
  readonly throttle?: Throttle;
}

/** A slot taken by one attempt; `epoch` counts the decreases before it started, so a storm decreases once. */
export interface LimiterTicket {
  readonly epoch: number;
}

/** Time as the limiter reads and spends it: the wall clock in ms, and a wait. */
export interface LimiterClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const realClock: LimiterClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** Exponential backoff before retry `n` (0-based), as the SDKs wait: 0.5 s doubling to 8 s, up to 25% less. */
export function backoffMs(n: number, random: () => number = Math.random): number {
  return Math.min(500 * 2 ** n, 8000) * (1 - random() * 0.25);
}

export interface LimiterOptions {
  /** Calls in flight at the start (the endpoint's `concurrency`), and the ceiling (`maxConcurrency`). */
  readonly start: number;
  readonly max: number;
  /** Names the stage in log lines (`judge`, `reader`). */
  readonly label: string;
  /** Where each wait is said, as one info line; raises go to its detail lines. */
  readonly log?: Logger;
  readonly clock?: LimiterClock;
  /** The wait after the `n`th congestion event in a row (0-based) when the server asked for none. */
  readonly backoff?: (n: number) => number;
  /** The longest wait for a used-up rate limit to reset (a reset further away is waited for in steps). */
  readonly maxResetWaitMs?: number;
}

const DEFAULT_MAX_RESET_WAIT_MS = 60_000;

/** Seconds with one decimal, as wait lines show them. */
function secs(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

export class AdaptiveLimiter {
  #limit: number;
  #inFlight = 0;
  #pausedUntil = 0;
  #epoch = 0;
  /** Successes of calls started since the last change of the limit. */
  #successes = 0;
  /** Congestion events in a row, without a success between them: how far the backoff has grown. */
  #strikes = 0;
  /** Throttles folded into a wait already said, reported with the next wait line. */
  #folded = 0;
  #timerArmed = false;
  readonly #waiters: { readonly resolve: (ticket: LimiterTicket) => void; readonly retry: boolean }[] = [];
  readonly #opts: LimiterOptions;
  readonly #clock: LimiterClock;
  readonly #backoff: (n: number) => number;

  constructor(opts: LimiterOptions) {
    this.#opts = opts;
    this.#clock = opts.clock ?? realClock;
    this.#backoff = opts.backoff ?? ((n) => backoffMs(n));
    this.#limit = Math.max(1, Math.min(opts.start, opts.max));
  }

  /** Calls allowed in flight now. */
  get limit(): number {
    return this.#limit;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** Until when (clock ms) new starts wait; in the past when they do not. */
  get pausedUntil(): number {
    return this.#pausedUntil;
  }

  /**
   * A slot for one attempt, once no pause holds and fewer than `limit` are in flight: first come first served,
   * except that a retry goes ahead of calls not yet started, so a throttled call is not starved by newer ones.
   */
  acquire(retry = false): Promise<LimiterTicket> {
    return new Promise((resolve) => {
      // Retries keep their own order among themselves, ahead of every first attempt.
      const at = retry ? this.#waiters.findIndex((w) => !w.retry) : -1;
      this.#waiters.splice(at === -1 ? this.#waiters.length : at, 0, { resolve, retry });
      this.#pump();
    });
  }

  /** Gives the slot back with what the attempt told about the server. */
  release(ticket: LimiterTicket, outcome: CallOutcome): void {
    this.#inFlight = Math.max(0, this.#inFlight - 1);
    if (outcome.throttle !== undefined) this.#onThrottle(ticket, outcome.throttle);
    this.#onRateLimits(outcome.headers);
    if (outcome.ok) this.#onSuccess(ticket, outcome.headers);
    this.#pump();
  }

  /** Starts waiting calls while slots are free; during a pause, one timer wakes the queue when it ends. */
  #pump(): void {
    const wait = this.#pausedUntil - this.#clock.now();
    if (wait > 0) {
      if (this.#waiters.length > 0 && !this.#timerArmed) {
        this.#timerArmed = true;
        void this.#clock.sleep(wait).then(() => {
          this.#timerArmed = false;
          this.#pump();
        });
      }
      return;
    }
    while (this.#waiters.length > 0 && this.#inFlight < this.#limit) {
      this.#inFlight++;
      this.#waiters.shift()?.resolve({ epoch: this.#epoch });
    }
  }

  /**
   * A congestion event halves the limit once: a call started before the last decrease saw the old load, so its
   * throttle only extends the pause to the wait it was asked for.
   */
  #onThrottle(ticket: LimiterTicket, t: Throttle): void {
    const what = `${t.status === 429 ? 'server throttled' : 'server overloaded'} (HTTP ${t.status})`;
    if (ticket.epoch !== this.#epoch) {
      if (t.waitMs !== undefined) this.#pause(t.waitMs, `${what}, waiting ${secs(t.waitMs)} (Retry-After)`, undefined);
      else this.#folded++;
      return;
    }
    const from = this.#limit;
    this.#limit = Math.max(1, Math.floor(from / 2));
    this.#epoch++;
    this.#successes = 0;
    const waitMs = t.waitMs ?? this.#backoff(this.#strikes);
    this.#strikes++;
    this.#pause(waitMs, `${what}, waiting ${secs(waitMs)} (${t.waitMs === undefined ? 'backoff' : 'Retry-After'})`, from);
  }

  /** A rate limit used up: new starts wait until it resets (capped), or a backoff when the reset is not given. */
  #onRateLimits(headers: HeaderBag | undefined): void {
    if (headers === undefined) return;
    const used = rateLimitsOf(headers, this.#clock.now()).exhausted;
    if (used.length === 0) return;
    const cap = this.#opts.maxResetWaitMs ?? DEFAULT_MAX_RESET_WAIT_MS;
    const waits = used.map((u) => ({ header: u.header, waitMs: Math.min(u.waitMs ?? this.#backoff(this.#strikes), cap) }));
    const longest = waits.reduce((a, b) => (b.waitMs > a.waitMs ? b : a));
    this.#pause(longest.waitMs, `rate limit used up (${longest.header} 0), waiting ${secs(longest.waitMs)} until it resets`, undefined);
  }

  /** A window of successes (as many as the limit) while the server keeps up raises the limit by one. */
  #onSuccess(ticket: LimiterTicket, headers: HeaderBag | undefined): void {
    this.#strikes = 0;
    if (ticket.epoch !== this.#epoch) return;
    this.#successes++;
    if (this.#successes < this.#limit || this.#limit >= this.#opts.max) return;
    if (this.#pausedUntil > this.#clock.now()) return;
    // A server that reports fewer requests left than one more call in flight needs is not keeping up.
    const left = headers === undefined ? undefined : rateLimitsOf(headers, this.#clock.now()).remainingRequests;
    if (left !== undefined && left <= this.#limit) return;
    this.#successes = 0;
    this.#limit++;
    this.#opts.log?.detail?.(`${this.#opts.label}: server keeps up; concurrency ${this.#limit - 1} -> ${this.#limit}`);
  }

  /**
   * Holds new starts for `waitMs` from now (a pause only grows) and says so in one line, unless a pause already
   * holds and the limit did not change: then the throttle is folded into the line already said.
   */
  #pause(waitMs: number, why: string, from: number | undefined): void {
    const now = this.#clock.now();
    const paused = this.#pausedUntil > now;
    this.#pausedUntil = Math.max(this.#pausedUntil, now + waitMs);
    if (paused && from === undefined) {
      this.#folded++;
      return;
    }
    const limit =
      from === undefined ? `concurrency ${this.#limit}` : from === this.#limit ? `concurrency stays ${from}` : `concurrency ${from} -> ${this.#limit}`;
    const folded = this.#folded === 0 ? '' : ` (${this.#folded} more throttled or limited replies folded)`;
    this.#folded = 0;
    this.#opts.log?.info(`${this.#opts.label}: ${why}; ${limit}${folded}`);
  }
}
