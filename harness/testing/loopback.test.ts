import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { type Loopback, startLoopback } from './loopback.js';

let server: Loopback | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('startLoopback', () => {
  it('serves queued replies first, then the handler, and records every request', async () => {
    server = await startLoopback(() => ({ body: { ok: true } }));
    server.enqueue('/a', { status: 429, headers: { 'retry-after': '0' }, body: 'slow down' });
    const first = await fetch(`${server.url}/a?x=1`, { method: 'POST', body: '{"q":1}' });
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('0');
    expect(await first.text()).toBe('slow down');
    const second = await fetch(`${server.url}/a`);
    expect(await second.json()).toEqual({ ok: true });
    expect(server.requests.map((r) => [r.method, r.path, r.json])).toEqual([
      ['POST', '/a', { q: 1 }],
      ['GET', '/a', undefined],
    ]);
    expect(server.requests[0]!.query.get('x')).toBe('1');
  });

  it('speaks well enough for the real openai SDK to retry a 429 that carries Retry-After', async () => {
    server = await startLoopback((req) => {
      // The SDK asks for base64 unless told otherwise, as the real API allows: little-endian float32.
      const { input, encoding_format } = req.json as { input: string[]; encoding_format?: string };
      const encode = (v: number[]) => (encoding_format === 'base64' ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v);
      return {
        body: {
          object: 'list',
          model: 'm',
          data: input.map((_, index) => ({ object: 'embedding', index, embedding: encode([index, 1]) })),
          usage: { prompt_tokens: 3, total_tokens: 3 },
        },
      };
    });
    server.enqueue('/v1/embeddings', { status: 429, headers: { 'retry-after': '0' }, body: { error: { message: 'rate' } } });
    const client = new OpenAI({ apiKey: 'sk-loopback-test-key', baseURL: `${server.url}/v1`, maxRetries: 2 });
    const res = await client.embeddings.create({ model: 'm', input: ['a', 'b'] });
    expect(res.data.map((d) => d.embedding)).toEqual([
      [0, 1],
      [1, 1],
    ]);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.headers.authorization).toBe('Bearer sk-loopback-test-key');
  });
});
