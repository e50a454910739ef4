import { HarnessError } from '../errors.js';
import { redactSecrets } from '../util/redact.js';
import type { Logger } from '../log.js';
import { AdaptiveLimiter, backoffMs, type CallOutcome, type LimiterClock, realClock, type Throttle } from './limiter.js';
import { type HeaderBag, headerValue, retryAfterMs } from './rate-headers.js';
import { sdkTimeoutMs } from './sdk.js';
import type { ChatEndpoint, ChatReply, ProviderName } from './types.js';

/**
 * The provider-neutral side of one chat call sent on its own: the deadline to the last byte, failure reasons that
 * name no secret, the retry loop (with the client's limiter), and the error once every attempt failed. The
 * providers (openai.ts, anthropic.ts) add only their request body and how they read a reply.
 */

/** Each provider's own API, where a config names no base URL. */
const DEFAULT_BASE_URL: Readonly<Record<ProviderName, string>> = { openai: 'https://api.openai.com/v1', anthropic: 'https://api.anthropic.com' };

/** The base URL as provenance may show it: without credentials, query or fragment; the provider's API when none. */
export function publicBaseURL(baseURL: string | undefined, provider: ProviderName = 'openai'): string {
  if (baseURL === undefined) return DEFAULT_BASE_URL[provider];
  try {
    const u = new URL(baseURL);
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/$/, '')}`;
  } catch {
    return '(unparsable base URL)';
  }
}

/** Why one attempt failed: the HTTP status when one came back, the reason, whether another attempt may help. */
export interface AttemptFailure {
  readonly status?: number;
  readonly reason: string;
  readonly retryable: boolean;
  /** What the server asked to wait before the next attempt (Retry-After / retry-after-ms), when it did. */
  readonly waitMs?: number;
  /** The server throttled (429) or said it is overloaded (529, 503 overloaded): the limiter slows down. */
  readonly throttled?: boolean;
  /** The reply's headers, when one came back (its rate-limit headers reach the limiter). */
  readonly headers?: HeaderBag;
}

/** One attempt: a usable reply with its headers, or why not. */
export type AttemptResult = { readonly reply: ChatReply; readonly headers?: HeaderBag } | { readonly failure: AttemptFailure };

/** A status the SDKs would retry: the server's `x-should-retry` when it says, else 408, 409, 429 and 5xx (529 too). */
function retryableStatus(status: number, headers: HeaderBag | undefined): boolean {
  const said = headerValue(headers, 'x-should-retry');
  if (said === 'true' || said === 'false') return said === 'true';
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** A status that means congestion: 429, 529 (Anthropic's overloaded), or a 503 whose body says overloaded. */
function congestion(status: number, type: string, said: string): boolean {
  return status === 429 || status === 529 || (status === 503 && /overload/i.test(`${type} ${said}`));
}

/** The error code at the bottom of a connection error's cause chain (ECONNREFUSED, ECONNRESET, ...). */
export function causeCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e !== null && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The SDKs' status errors, as either SDK shapes them (OpenAI keeps the body's `error`; Anthropic the whole body). */
interface StatusError {
  readonly status: number;
  readonly headers?: HeaderBag;
  readonly apiMessage?: unknown;
  readonly type?: unknown;
  readonly error?: { readonly message?: unknown; readonly type?: unknown; readonly error?: { readonly message?: unknown; readonly type?: unknown } };
  readonly message?: unknown;
}

/** The first string among `values`, else ''. */
function firstString(...values: unknown[]): string {
  return (values.find((v) => typeof v === 'string' && v !== '') as string | undefined) ?? '';
}

/** A failed attempt with a status: the server's short message (its key redacted), congestion, the wait asked for. */
function statusFailure(e: StatusError, nowMs: number, clean: (text: string) => string): AttemptFailure {
  const fromMessage = typeof e.message === 'string' ? e.message.replace(/^\d{3}\s*/, '') : '';
  const said = firstString(e.apiMessage, e.error?.message, e.error?.error?.message, fromMessage);
  const type = firstString(e.type, e.error?.type, e.error?.error?.type);
  const waitMs = retryAfterMs(e.headers, nowMs);
  return {
    status: e.status,
    reason: `HTTP ${e.status}${said === '' ? '' : ` (${clean(said)})`}`,
    retryable: retryableStatus(e.status, e.headers),
    ...(waitMs === undefined ? {} : { waitMs }),
    ...(congestion(e.status, type, said) ? { throttled: true } : {}),
    ...(e.headers === undefined ? {} : { headers: e.headers }),
  };
}

/** Thrown by `raceDeadline` when the attempt's time ran out. */
export class DeadlineError extends Error {}

/** The reason of an attempt cut at the deadline. */
function deadlineReason(timeoutMs: number): string {
  return `no complete reply within ${timeoutMs} ms (timeoutMs)`;
}

/** One failed attempt as a reason that names no secret: status, the server's short message, or the transport's code. */
export function failureOf(err: unknown, timeoutMs: number, secrets: readonly string[], nowMs = Date.now()): AttemptFailure {
  if (err instanceof DeadlineError) return { reason: deadlineReason(timeoutMs), retryable: true };
  const clean = (text: string) => redactSecrets(text, secrets).replace(/\s+/g, ' ').slice(0, 200);
  const e = err as { status?: unknown; message?: unknown; name?: unknown };
  if (typeof e.status === 'number') return statusFailure(err as StatusError, nowMs, clean);
  // The SDKs' errors are told apart by their class (loaded lazily, so no instanceof).
  const kind = (err as { constructor?: { name?: string } } | null)?.constructor?.name;
  if (kind === 'APIConnectionTimeoutError') return { reason: deadlineReason(timeoutMs), retryable: true };
  if (kind === 'APIConnectionError') {
    return { reason: `connection failed (${causeCode(err) ?? clean(String(e.message))})`, retryable: true };
  }
  if (err instanceof SyntaxError) return { reason: 'the reply is not valid JSON', retryable: false };
  return { reason: clean(`${String(e.name ?? 'Error')}: ${String(e.message ?? err)}`), retryable: false };
}

/** The attempts of one failed chat call as one line: each reason, repeats folded (`2 x HTTP 503`). */
export function reasonsLine(failures: readonly AttemptFailure[]): string {
  const runs: [string, number][] = [];
  for (const f of failures) {
    const last = runs[runs.length - 1];
    if (last && last[0] === f.reason) last[1]++;
    else runs.push([f.reason, 1]);
  }
  return runs.map(([r, n]) => (n === 1 ? r : `${n} x ${r}`)).join(', then ');
}

/**
 * The error of a chat completion (the project's word for one chat call, whichever provider serves it) whose
 * attempts all failed: the server, the model, the real number of attempts, each reason, and why it stopped
 * (retries used up, or a failure no retry can fix).
 */
export function chatFailure(ep: ChatEndpoint, failures: readonly AttemptFailure[]): HarnessError {
  const last = failures[failures.length - 1] as AttemptFailure;
  const n = failures.length;
  const why = last.retryable ? `maxRetries ${ep.maxRetries} used up` : `${last.status === undefined ? 'this failure' : `HTTP ${last.status}`} is not retried`;
  const status = last.status;
  return new HarnessError(
    `${publicBaseURL(ep.baseURL, ep.provider)}: chat completion with model ${ep.model} failed after ${n} attempt${n === 1 ? '' : 's'} (${why}): ${reasonsLine(failures)}`,
    {
      hint:
        status === 401 || status === 403
          ? `check ${ep.apiKeyEnv}`
          : /within \d+ ms/.test(last.reason)
            ? 'the server did not finish a reply in time: raise timeoutMs, lower concurrency, or check the server'
            : 'check that the server is up and the model name is right',
    },
  );
}

/**
 * Runs `send` cut at `timeoutMs` from the request to the last byte: the SDKs' own timeouts stop at the headers,
 * so a body that stalls after them would hang; here the signal is aborted at the deadline, and the race ends
 * the attempt even if a transport ignores the abort. Throws DeadlineError when the time ran out.
 */
export async function raceDeadline<T>(send: (signal: AbortSignal) => PromiseLike<T>, timeoutMs: number): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new DeadlineError('deadline'));
    }, timeoutMs);
  });
  const call = Promise.resolve(send(controller.signal));
  // The losing side of the race must not surface as an unhandled rejection.
  call.catch(() => {});
  try {
    return await Promise.race([call, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** The request options of attempt `n` in either SDK: no SDK retries, its own timer past the deadline, the attempt's number. */
export function requestOptions(ep: ChatEndpoint, signal: AbortSignal, n: number) {
  return { signal, maxRetries: 0, timeout: sdkTimeoutMs(ep), headers: { 'X-Stainless-Retry-Count': String(n) } };
}

/** A reply as the SDKs' `.withResponse()` hands it: the parsed body and the HTTP response (for its headers). */
export interface SentReply {
  readonly data: unknown;
  readonly response: { readonly headers: HeaderBag };
}

/** One attempt: sent within the deadline, read by the provider's `read`, or turned into a failure naming no secret. */
export async function attemptOnce(
  send: (signal: AbortSignal) => PromiseLike<SentReply>,
  read: (data: unknown) => ChatReply | AttemptFailure,
  timeoutMs: number,
  secrets: readonly string[],
  clock: LimiterClock,
): Promise<AttemptResult> {
  try {
    const { data, response } = await raceDeadline(send, timeoutMs);
    const r = read(data);
    return 'reason' in r ? { failure: { ...r, headers: response.headers } } : { reply: r, headers: response.headers };
  } catch (err) {
    return { failure: failureOf(err, timeoutMs, secrets, clock.now()) };
  }
}

/** What the limiter learns from one attempt. */
function outcomeOf(r: AttemptResult): CallOutcome {
  if ('reply' in r) return { ok: true, ...(r.headers === undefined ? {} : { headers: r.headers }) };
  const f = r.failure;
  const throttle: Throttle | undefined =
    f.throttled === true && f.status !== undefined ? { status: f.status, ...(f.waitMs === undefined ? {} : { waitMs: f.waitMs }) } : undefined;
  return { ok: false, ...(f.headers === undefined ? {} : { headers: f.headers }), ...(throttle === undefined ? {} : { throttle }) };
}

/**
 * One chat call with its retries: each attempt takes a slot of the client's limiter. A throttled attempt is
 * retried once the limiter's pause (the server's Retry-After, or its backoff) is over; any other retryable failure
 * waits Retry-After or an exponential backoff on its own, without holding a slot.
 */
export async function withRetries(
  ep: ChatEndpoint,
  attempt: (n: number) => Promise<AttemptResult>,
  limiter: AdaptiveLimiter,
  clock: LimiterClock,
): Promise<ChatReply> {
  const failures: AttemptFailure[] = [];
  for (let n = 0; n <= ep.maxRetries; n++) {
    const ticket = await limiter.acquire(n > 0);
    let r: AttemptResult = { failure: { reason: 'the attempt did not finish', retryable: false } };
    try {
      r = await attempt(n);
    } finally {
      limiter.release(ticket, outcomeOf(r));
    }
    if ('reply' in r) return r.reply;
    failures.push(r.failure);
    if (!r.failure.retryable || n === ep.maxRetries) break;
    if (r.failure.throttled !== true) await clock.sleep(r.failure.waitMs ?? backoffMs(n));
  }
  throw chatFailure(ep, failures);
}

/** How a synchronous chat client reports and keeps time; every field optional. */
export interface ChatClientOptions {
  /** Where the limiter's waits are said (one info line each) and its raises (detail lines). */
  readonly log?: Logger;
  /** Names the stage in those lines; default `who`. */
  readonly label?: string;
  /** The config block that asks (`judge`, `reader`), named by a missing-key error; default `judge`. */
  readonly who?: string;
  /** The limiter's and the retries' clock; tests pass a fake one. The deadline of an attempt keeps real time. */
  readonly clock?: LimiterClock;
}

/** The limiter of one client, shared by all its calls: from `concurrency` up to `maxConcurrency`. */
export function clientLimiter(ep: ChatEndpoint, opts: ChatClientOptions): AdaptiveLimiter {
  return new AdaptiveLimiter({
    start: ep.concurrency,
    max: ep.maxConcurrency,
    label: opts.label ?? opts.who ?? 'judge',
    ...(opts.log === undefined ? {} : { log: opts.log }),
    clock: opts.clock ?? realClock,
  });
}
