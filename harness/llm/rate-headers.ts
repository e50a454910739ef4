/**
 * What a server's response headers say about pacing: the wait it asks for before the next attempt
 * (Retry-After, retry-after-ms) and how much of its rate limits is left (OpenAI's `x-ratelimit-*`, Anthropic's
 * `anthropic-ratelimit-*`). Pure functions over either shape of headers the SDKs hand out.
 */

/** Response headers as an SDK hands them out: a fetch `Headers`, or a plain record (lower- or mixed-case names). */
export type HeaderBag = Headers | Readonly<Record<string, string | readonly string[] | null | undefined>>;

/** One header's value, whatever the bag's shape; a repeated header gives its first value. */
export function headerValue(headers: HeaderBag | undefined, name: string): string | undefined {
  if (headers === undefined || headers === null) return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const wanted = name.toLowerCase();
  for (const [k, v] of Object.entries(headers as Record<string, unknown>)) {
    if (k.toLowerCase() !== wanted) continue;
    const first = Array.isArray(v) ? v[0] : v;
    return typeof first === 'string' ? first : undefined;
  }
  return undefined;
}

/** The longest wait a server may ask for that is honoured; a longer one (or none) falls back to backoff. */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * The wait the server asked for before the next attempt, from `retry-after-ms` (the OpenAI SDKs' header) or
 * `Retry-After` (seconds or an HTTP date), in ms; undefined when it asked for none, or for more than
 * MAX_RETRY_AFTER_MS (a wait that long is more likely a broken header than a plan).
 */
export function retryAfterMs(headers: HeaderBag | undefined, nowMs: number): number | undefined {
  const ms = Number.parseFloat(headerValue(headers, 'retry-after-ms') ?? '');
  const raw = headerValue(headers, 'retry-after') ?? '';
  const secs = Number.parseFloat(raw);
  const wait = !Number.isNaN(ms) ? ms : !Number.isNaN(secs) ? secs * 1000 : raw === '' ? Number.NaN : Date.parse(raw) - nowMs;
  return wait >= 0 && wait <= MAX_RETRY_AFTER_MS ? wait : undefined;
}

const DURATION_UNIT_MS: Readonly<Record<string, number>> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, µs: 0.001, ns: 0.000001 };

/**
 * A duration as OpenAI's reset headers write it (Go's notation: `1s`, `6m0s`, `120ms`, `1.5s`, `1h2m3s`), in ms;
 * undefined when the text is not one.
 */
export function parseDuration(text: string): number | undefined {
  const t = text.trim();
  if (!/^(\d+(\.\d+)?(h|ms|m|s|us|µs|ns))+$/.test(t)) return undefined;
  let total = 0;
  for (const [, n = '', unit = ''] of t.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)) total += Number.parseFloat(n) * (DURATION_UNIT_MS[unit] ?? 0);
  return total;
}

/** One rate limit a server reports: how much is left and when it resets. */
interface LimitHeaders {
  readonly remaining: string;
  readonly reset: string;
  /** OpenAI writes the time to the reset as a duration; Anthropic writes the reset's moment in RFC 3339. */
  readonly resetAs: 'duration' | 'time';
}

/** The rate limits each provider reports on its replies (successes and errors alike). */
const LIMIT_HEADERS: readonly LimitHeaders[] = [
  { remaining: 'x-ratelimit-remaining-requests', reset: 'x-ratelimit-reset-requests', resetAs: 'duration' },
  { remaining: 'x-ratelimit-remaining-tokens', reset: 'x-ratelimit-reset-tokens', resetAs: 'duration' },
  ...['requests', 'tokens', 'input-tokens', 'output-tokens'].map(
    (kind): LimitHeaders => ({ remaining: `anthropic-ratelimit-${kind}-remaining`, reset: `anthropic-ratelimit-${kind}-reset`, resetAs: 'time' }),
  ),
];

/** A rate limit used up: the header that says so and the wait until it resets (undefined when the reset is unknown). */
export interface ExhaustedLimit {
  readonly header: string;
  readonly waitMs: number | undefined;
}

/** What one reply's headers say about the rate limits. */
export interface RateLimits {
  /** Requests left in the current window, when the server says (OpenAI or Anthropic). */
  readonly remainingRequests?: number;
  /** Every limit whose remaining count is 0, with the wait until its reset. */
  readonly exhausted: readonly ExhaustedLimit[];
}

/** The wait until a limit resets, per the provider's notation; never negative. */
function resetWaitMs(raw: string | undefined, resetAs: LimitHeaders['resetAs'], nowMs: number): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const wait = resetAs === 'duration' ? parseDuration(raw) : Date.parse(raw) - nowMs;
  return wait === undefined || Number.isNaN(wait) ? undefined : Math.max(0, wait);
}

/** The rate limits a reply's headers report; a header that is absent or not a number is left out. */
export function rateLimitsOf(headers: HeaderBag | undefined, nowMs: number): RateLimits {
  const exhausted: ExhaustedLimit[] = [];
  let remainingRequests: number | undefined;
  for (const h of LIMIT_HEADERS) {
    const raw = headerValue(headers, h.remaining);
    const left = raw === undefined || raw.trim() === '' ? Number.NaN : Number(raw);
    if (Number.isNaN(left)) continue;
    if (h.remaining.includes('requests')) remainingRequests = Math.min(remainingRequests ?? left, left);
    if (left <= 0) exhausted.push({ header: h.remaining, waitMs: resetWaitMs(headerValue(headers, h.reset), h.resetAs, nowMs) });
  }
  return { ...(remainingRequests === undefined ? {} : { remainingRequests }), exhausted };
}
