import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { memoryLogger } from '../../harness/log.js';
import { RemoteCallError, TokenBucket, retryAfterMs, withRetries } from './limits.js';
import { MappingError, mapResults, mappingSchema } from './mapping.js';
import { QUERY_VARIABLES, render, templateProblems } from './template.js';

describe('request templates', () => {
  it('keeps a lone placeholder typed, splices one inside text, and drops a key whose value is absent', () => {
    const values = { 'query.text': 'dog "Biscuit"', topK: 10, scope: 's1', 'document.title': undefined };
    expect(
      render(
        { q: '{{query.text}}', k: '{{ topK }}', tag: 'top-{{topK}} in {{scope}}', title: '{{document.title}}', list: ['{{topK}}', '{{document.title}}'], n: 3 },
        values,
      ),
    ).toEqual({ q: 'dog "Biscuit"', k: 10, tag: 'top-10 in s1', list: [10, null], n: 3 });
  });

  it('names every unknown placeholder with its path and the known ones', () => {
    expect(templateProblems({ q: '{{query.txt}}', a: ['x {{topk}}'] }, QUERY_VARIABLES, 'body')).toEqual([
      'body.q: unknown placeholder {{query.txt}} (known: {{query.id}}, {{query.text}}, {{query.stratum}}, {{topK}}, {{scope}})',
      'body.a[0]: unknown placeholder {{topk}} (known: {{query.id}}, {{query.text}}, {{query.stratum}}, {{topK}}, {{scope}})',
    ]);
  });
});

describe('response mapping', () => {
  const m = (x: object) => mappingSchema.parse(x);
  it('reads hits by JSONPath, whether the path selects the items or the array', () => {
    const answer = {
      data: {
        hits: [
          { doc: { id: 'm2' }, s: '2.5' },
          { doc: { id: 7 }, s: 1 },
        ],
      },
    };
    const want = [
      { docId: 'm2', score: 2.5 },
      { docId: '7', score: 1 },
    ];
    expect(mapResults(answer, m({ results: '$.data.hits[*]', docId: '$.doc.id', score: '$.s' }))).toEqual(want);
    expect(mapResults(answer, m({ results: '$.data.hits', docId: '$.doc.id', score: '$.s' }))).toEqual(want);
  });

  it('scores by rank, 1 / (1 + rank), when no score path is given', () => {
    expect(mapResults([{ id: 'a' }, { id: 'b' }, { id: 'c' }], m({}))).toEqual([
      { docId: 'a', score: 1 / (1 + 0) },
      { docId: 'b', score: 1 / (1 + 1) },
      { docId: 'c', score: 1 / (1 + 2) },
    ]);
  });

  it('a hit without a docId or a finite score is a MappingError naming the hit and the path', () => {
    expect(() => mapResults([{ id: 'a', score: 1 }, { score: 2 }], m({ score: '$.score' }))).toThrow(
      new MappingError('hit 2 has no string docId at $.id (found nothing)'),
    );
    expect(() => mapResults([{ id: 'a', score: 'high' }], m({ score: '$.score' }))).toThrow(
      new MappingError('hit 1 has no finite number at $.score (found string)'),
    );
  });
});

describe('limits', () => {
  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterMs('2')).toBe(2000);
    expect(retryAfterMs('Thu, 01 Jan 1970 00:00:05 GMT', 1000)).toBe(4000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });

  it('a token bucket of 20 per second with a burst of 1 spaces 5 calls over 4 intervals of 50 ms', async () => {
    // On a fake clock (the bucket reads performance.now and waits with setTimeout): the spacing is exact, and
    // the test waits for no real timer.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    onTestFinished(() => void vi.useRealTimers());
    const bucket = new TokenBucket(20, 1);
    const t0 = performance.now();
    const taken: number[] = [];
    const calls = (async () => {
      for (let i = 0; i < 5; i++) {
        await bucket.take();
        taken.push(performance.now() - t0);
      }
    })();
    await vi.runAllTimersAsync();
    await calls;
    expect(taken.map((ms) => Math.round(ms))).toEqual([0, 50, 100, 150, 200]);
  });

  it('retries retryable failures, then gives up naming the attempts; a failure that is not retryable is not retried', async () => {
    const log = memoryLogger();
    let n = 0;
    const flaky = () => {
      n++;
      return n < 3 ? Promise.reject(new RemoteCallError('HTTP 503', true, 0)) : Promise.resolve('ok');
    };
    expect(await withRetries('call', flaky, { retries: 2, baseDelayMs: 1, maxWaitMs: 10, log })).toBe('ok');
    expect(n).toBe(3);
    n = 0;
    await expect(withRetries('call', flaky, { retries: 1, baseDelayMs: 1, maxWaitMs: 10, log })).rejects.toThrow('call: HTTP 503 (gave up after 2 attempt(s))');
    let m = 0;
    const bad = () => {
      m++;
      return Promise.reject(new RemoteCallError('HTTP 404', false));
    };
    await expect(withRetries('call', bad, { retries: 5, baseDelayMs: 1, maxWaitMs: 10, log })).rejects.toThrow(/^call: HTTP 404$/);
    expect(m).toBe(1);
  });
});
