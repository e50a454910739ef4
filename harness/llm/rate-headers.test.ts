import { describe, expect, it } from 'vitest';
import { headerValue, MAX_RETRY_AFTER_MS, parseDuration, rateLimitsOf, retryAfterMs } from './rate-headers.js';

/** What servers' headers say about pacing, read from a fetch Headers object or a plain record alike. */

const NOW = Date.parse('2026-03-01T12:00:00Z');

describe('headerValue', () => {
  it('reads a fetch Headers object and a plain record, whatever the case of the name', () => {
    expect(headerValue(new Headers({ 'Retry-After': '3' }), 'retry-after')).toBe('3');
    expect(headerValue({ 'Retry-After': '3' }, 'retry-after')).toBe('3');
    expect(headerValue({ 'retry-after': ['4', '5'] }, 'Retry-After')).toBe('4');
    expect(headerValue({ 'retry-after': undefined }, 'retry-after')).toBeUndefined();
    expect(headerValue(new Headers(), 'retry-after')).toBeUndefined();
    expect(headerValue(undefined, 'retry-after')).toBeUndefined();
  });
});

describe('retryAfterMs', () => {
  it('prefers retry-after-ms, then Retry-After in seconds or as an HTTP date', () => {
    expect(retryAfterMs({ 'retry-after-ms': '250', 'retry-after': '9' }, NOW)).toBe(250);
    expect(retryAfterMs({ 'retry-after': '2' }, NOW)).toBe(2000);
    expect(retryAfterMs({ 'retry-after': '0.5' }, NOW)).toBe(500);
    expect(retryAfterMs({ 'retry-after': new Date(NOW + 7000).toUTCString() }, NOW)).toBe(7000);
  });

  it('ignores a wait it cannot read, a date in the past, and one past the cap', () => {
    expect(retryAfterMs({}, NOW)).toBeUndefined();
    expect(retryAfterMs({ 'retry-after': 'soon' }, NOW)).toBeUndefined();
    expect(retryAfterMs({ 'retry-after': new Date(NOW - 7000).toUTCString() }, NOW)).toBeUndefined();
    expect(retryAfterMs({ 'retry-after': String(MAX_RETRY_AFTER_MS / 1000 + 1) }, NOW)).toBeUndefined();
    expect(retryAfterMs({ 'retry-after': String(MAX_RETRY_AFTER_MS / 1000) }, NOW)).toBe(MAX_RETRY_AFTER_MS);
  });
});

describe('parseDuration', () => {
  it('reads the durations of OpenAI reset headers', () => {
    expect(parseDuration('1s')).toBe(1000);
    expect(parseDuration('6m0s')).toBe(360_000);
    expect(parseDuration('120ms')).toBe(120);
    expect(parseDuration('1.5s')).toBe(1500);
    expect(parseDuration('1h2m3s')).toBe(3_723_000);
    expect(parseDuration('17ms')).toBe(17);
  });

  it('refuses what is not one', () => {
    for (const bad of ['', '1', 's', '1x', '1s junk', '-1s', 'soon']) expect(parseDuration(bad), bad).toBeUndefined();
  });
});

describe('rateLimitsOf', () => {
  it('names each OpenAI limit used up, with the wait until its reset', () => {
    const h = new Headers({
      'x-ratelimit-remaining-requests': '0',
      'x-ratelimit-reset-requests': '6m0s',
      'x-ratelimit-remaining-tokens': '0',
      'x-ratelimit-reset-tokens': '120ms',
    });
    expect(rateLimitsOf(h, NOW)).toEqual({
      remainingRequests: 0,
      exhausted: [
        { header: 'x-ratelimit-remaining-requests', waitMs: 360_000 },
        { header: 'x-ratelimit-remaining-tokens', waitMs: 120 },
      ],
    });
  });

  it('reads Anthropic limits with RFC 3339 resets, the input and output token limits included', () => {
    const h = {
      'anthropic-ratelimit-requests-remaining': '12',
      'anthropic-ratelimit-requests-reset': '2026-03-01T12:00:05Z',
      'anthropic-ratelimit-output-tokens-remaining': '0',
      'anthropic-ratelimit-output-tokens-reset': '2026-03-01T12:00:30Z',
      'anthropic-ratelimit-input-tokens-remaining': '0',
      'anthropic-ratelimit-input-tokens-reset': '2026-03-01T11:59:00Z',
    };
    expect(rateLimitsOf(h, NOW)).toEqual({
      remainingRequests: 12,
      exhausted: [
        { header: 'anthropic-ratelimit-input-tokens-remaining', waitMs: 0 },
        { header: 'anthropic-ratelimit-output-tokens-remaining', waitMs: 30_000 },
      ],
    });
  });

  it('leaves out what is absent or unreadable, and a limit used up without a reset has no wait', () => {
    expect(rateLimitsOf(undefined, NOW)).toEqual({ exhausted: [] });
    expect(rateLimitsOf({ 'x-ratelimit-remaining-requests': 'many' }, NOW)).toEqual({ exhausted: [] });
    expect(rateLimitsOf({ 'x-ratelimit-remaining-requests': '5' }, NOW)).toEqual({ remainingRequests: 5, exhausted: [] });
    expect(rateLimitsOf({ 'anthropic-ratelimit-tokens-remaining': '0', 'anthropic-ratelimit-tokens-reset': 'later' }, NOW)).toEqual({
      exhausted: [{ header: 'anthropic-ratelimit-tokens-remaining', waitMs: undefined }],
    });
  });
});
