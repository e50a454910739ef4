import { describe, expect, it } from 'vitest';
import { chatFailure, DeadlineError, failureOf, publicBaseURL, raceDeadline, reasonsLine } from './attempt.js';
import type { ChatEndpoint } from './types.js';

/** The provider-neutral attempt machinery: failures of either SDK's shape, the error they end in, the deadline. */

const NOW = Date.parse('2026-03-01T12:00:00Z');
const SECRET = 'sk-attempt-planted-77aa';

/** An SDK status error as the class names it (the SDKs are told apart by class name, not instanceof). */
function statusError(name: string, fields: Record<string, unknown>): unknown {
  const Named = { [name]: class extends Error {} }[name] as new (m: string) => Error;
  return Object.assign(new Named(String(fields['message'] ?? '')), fields);
}

describe('failureOf', () => {
  it('reads an Anthropic 529 whose body is the whole error envelope and whose headers are a plain record', () => {
    const err = statusError('InternalServerError', {
      status: 529,
      headers: { 'Retry-After': '2' },
      error: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      message: '529 {"type":"error"}',
    });
    expect(failureOf(err, 1000, [], NOW)).toEqual({
      status: 529,
      reason: 'HTTP 529 (Overloaded)',
      retryable: true,
      waitMs: 2000,
      throttled: true,
      headers: { 'Retry-After': '2' },
    });
  });

  it('reads an OpenAI 429 with fetch Headers, and redacts a secret the server echoes', () => {
    const headers = new Headers({ 'retry-after-ms': '150' });
    const err = statusError('RateLimitError', { status: 429, headers, error: { message: `slow down ${SECRET}` }, message: '429 slow down' });
    expect(failureOf(err, 1000, [SECRET], NOW)).toMatchObject({ status: 429, reason: 'HTTP 429 (slow down [redacted])', waitMs: 150, throttled: true });
  });

  it('counts a 503 as congestion only when it says overloaded; x-should-retry overrides the status', () => {
    const plain = statusError('InternalServerError', { status: 503, headers: {}, error: { message: 'maintenance' } });
    expect(failureOf(plain, 1000, [], NOW).throttled).toBeUndefined();
    const busy = statusError('InternalServerError', { status: 503, headers: {}, error: { message: 'Service overloaded' } });
    expect(failureOf(busy, 1000, [], NOW).throttled).toBe(true);
    const no = statusError('InternalServerError', { status: 500, headers: { 'x-should-retry': 'false' }, error: { message: 'x' } });
    expect(failureOf(no, 1000, [], NOW).retryable).toBe(false);
  });

  it('names a connection failure by its code and a deadline by the timeout', () => {
    const conn = statusError('APIConnectionError', { message: 'Connection error.', cause: { cause: { code: 'ECONNREFUSED' } } });
    expect(failureOf(conn, 1000, [], NOW)).toEqual({ reason: 'connection failed (ECONNREFUSED)', retryable: true });
    expect(failureOf(new DeadlineError('deadline'), 250, [], NOW)).toEqual({ reason: 'no complete reply within 250 ms (timeoutMs)', retryable: true });
  });
});

describe('chatFailure', () => {
  const ep: ChatEndpoint = {
    provider: 'anthropic',
    model: 'claude-x',
    apiKeyEnv: 'ANTHROPIC_API_KEY',
    local: false,
    maxRetries: 2,
    timeoutMs: 1000,
    concurrency: 1,
    maxConcurrency: 1,
  };

  it("names the provider's own API when no base URL is set, each attempt, and why it stopped", () => {
    const err = chatFailure(ep, [
      { status: 529, reason: 'HTTP 529 (Overloaded)', retryable: true },
      { status: 529, reason: 'HTTP 529 (Overloaded)', retryable: true },
      { status: 400, reason: 'HTTP 400 (bad)', retryable: false },
    ]);
    expect(err.message).toBe(
      'https://api.anthropic.com: chat completion with model claude-x failed after 3 attempts (HTTP 400 is not retried): 2 x HTTP 529 (Overloaded), then HTTP 400 (bad)',
    );
    expect(err.hint).toBe('check that the server is up and the model name is right');
    expect(chatFailure(ep, [{ status: 403, reason: 'HTTP 403', retryable: false }]).hint).toBe('check ANTHROPIC_API_KEY');
  });

  it('keeps the OpenAI default, and drops credentials from a base URL', () => {
    expect(publicBaseURL(undefined)).toBe('https://api.openai.com/v1');
    expect(publicBaseURL(undefined, 'anthropic')).toBe('https://api.anthropic.com');
    expect(publicBaseURL('https://u:p@host.example/v1/?key=x')).toBe('https://host.example/v1');
    expect(reasonsLine([])).toBe('');
  });
});

describe('raceDeadline', () => {
  it('aborts the signal and throws DeadlineError when the call outlives the deadline, even if it ignores the abort', async () => {
    let aborted = false;
    const never = (signal: AbortSignal) => {
      signal.addEventListener('abort', () => (aborted = true));
      return new Promise<string>(() => {});
    };
    await expect(raceDeadline(never, 20)).rejects.toBeInstanceOf(DeadlineError);
    expect(aborted).toBe(true);
    expect(await raceDeadline(async () => 'done', 1000)).toBe('done');
  });
});
