import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ContentStore } from '../../../harness/cache/index.js';
import { memoryLogger } from '../../../harness/log.js';
import { type Loopback, startLoopback } from '../../../harness/testing/loopback.js';
import { armRequirements } from '../../../harness/config/load.js';
import { EmbeddingStore } from '../store.js';
import { fakeTokens, voyageApi, wordHashVector } from './testing.js';
import { voyageEmbedArm, voyageEmbedder, voyageParams } from './voyage.js';
import { tempDir } from '../../../harness/testing/temp.js';

const KEY = 'pa-loopback-voyage-key-4f1c9a';
let server: Loopback;
let dir: string;

beforeEach(async () => {
  server = await startLoopback(voyageApi());
  dir = tempDir('harness-voyage');
});
afterEach(async () => {
  await server.close();
});

const embedder = (params: Record<string, unknown> = {}) =>
  voyageEmbedder(voyageParams.parse({ dimensions: 16, baseUrl: `${server.url}/v1`, maxRetries: 2, ...params }), { VOYAGE_API_KEY: KEY });

const texts = ['the dog Biscuit', 'a cat named Tom', 'dog food', 'Biscuit in the park', 'Tom sleeps', 'cat food brand', 'rent is due'];

/** Files under the cache root: the cache holds nothing when this is empty. */
function cachedFiles(root: string): string[] {
  const walk = (p: string): string[] => readdirSync(p, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(p, e.name)) : [join(p, e.name)]));
  try {
    return walk(root);
  } catch {
    return [];
  }
}

describe('voyage-embed through the voyageai SDK', () => {
  it('sends batches of at most batchSize texts with input_type by role and output_dimension, the key only as a bearer header', async () => {
    const e = embedder({ batchSize: 3, concurrency: 1 });
    const got = await e.embed(texts, 'document');
    expect(server.requests.map((r) => (r.json as { input: string[] }).input.length)).toEqual([3, 3, 1]);
    for (const r of server.requests) {
      expect(r.method).toBe('POST');
      expect(r.path).toBe('/v1/embeddings');
      expect(r.json).toMatchObject({ model: 'voyage-3.5', input_type: 'document', output_dimension: 16, truncation: true });
      expect(r.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(r.body).not.toContain(KEY);
    }
    expect(got).toEqual(Float32Array.from(texts.flatMap((t) => wordHashVector(t, 16))));
    await e.embed(['dog'], 'query');
    expect(server.requests.at(-1)?.json).toMatchObject({ input: ['dog'], input_type: 'query' });
    // voyage-3.5 lists at $0.06 per 1M tokens: 0.06 micro-USD per token.
    const tokens = fakeTokens(texts) + fakeTokens(['dog']);
    expect(e.usage?.()).toEqual({ apiRequests: 4, apiTexts: 8, apiTokens: tokens, costMicroUsd: tokens * 0.06 });
    // Counts since the previous read, so index stats summed over scopes count each request once.
    expect(e.usage?.()).toEqual({ apiRequests: 0, apiTexts: 0, apiTokens: 0, costMicroUsd: 0 });
  });

  it('splits by the conservative token estimate: UTF-8 bytes plus 16 per text', async () => {
    // Each 'abcd' is estimated at 4 + 16 = 20 tokens: a cap of 45 holds two per request.
    const e = embedder({ maxTokensPerRequest: 45, concurrency: 2 });
    await e.embed(['abcd', 'abcd', 'abcd', 'abcd', 'abcd'], 'document');
    expect(server.requests.map((r) => (r.json as { input: string[] }).input.length).sort()).toEqual([1, 2, 2]);
  });

  it('omits input_type when inputType is false, and sends no output_dimension by default', async () => {
    const e = voyageEmbedder(voyageParams.parse({ inputType: false, baseUrl: `${server.url}/v1` }), { VOYAGE_API_KEY: KEY });
    const v = await e.embed(['dog'], 'query');
    expect(v).toHaveLength(1024);
    expect(server.requests[0]?.json).toEqual({ input: ['dog'], model: 'voyage-3.5', truncation: true });
  });

  it('retries a 429 after the Retry-After it was given', async () => {
    server.enqueue('/v1/embeddings', { status: 429, headers: { 'retry-after': '2' }, body: { detail: 'rate limited' } });
    const t0 = performance.now();
    const got = await embedder().embed(['dog food'], 'document');
    const waited = performance.now() - t0;
    expect(server.requests).toHaveLength(2);
    // Without Retry-After the SDK's first backoff is 1 s +- 10%: 2 s can only come from the header.
    expect(waited).toBeGreaterThanOrEqual(1900);
    expect(got).toEqual(Float32Array.from(wordHashVector('dog food', 16)));
  });

  it('retries a 500, then succeeds', async () => {
    server.enqueue('/v1/embeddings', { status: 500, body: { detail: 'internal error' } });
    const got = await embedder().embed(['cat'], 'document');
    expect(server.requests).toHaveLength(2);
    expect(got).toEqual(Float32Array.from(wordHashVector('cat', 16)));
  });

  it('fails with a clear error after its retries, with no key in the message even when the API echoes it', async () => {
    const echo = (status: number) => ({ status, body: { detail: `bad key ${KEY} in header` } });
    server.enqueue('/v1/embeddings', echo(401));
    const err = await embedder()
      .embed(['cat'], 'document')
      .then(() => new Error('no error'))
      .catch((x: unknown) => x as Error);
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toMatch(/^voyage-embed: embeddings API HTTP 401/);
    expect(err.message).not.toContain(KEY);
    expect(JSON.stringify(err)).not.toContain(KEY);
    expect((err as Error & { cause?: unknown }).cause).toBeUndefined();
    server.enqueue('/v1/embeddings', echo(503), echo(503), echo(503));
    const again = await embedder()
      .embed(['cat'], 'document')
      .then(() => new Error('no error'))
      .catch((x: unknown) => x as Error);
    expect(again.message).toMatch(/HTTP 503 after 2 retries/);
    expect(again.message).not.toContain(KEY);
  });

  it('gives up on a request that outlives timeoutSeconds, saying so', async () => {
    server.enqueue('/v1/embeddings', { delayMs: 3000, body: {} });
    const t0 = performance.now();
    const err = await embedder({ timeoutSeconds: 0.3, maxRetries: 0 })
      .embed(['cat'], 'document')
      .then(() => new Error('no error'))
      .catch((x: unknown) => x as Error);
    expect(performance.now() - t0).toBeLessThan(2500);
    expect(err.message).toMatch(/^voyage-embed: embeddings API request to http:\/\/127\.0\.0\.1:\d+\/v1 failed \(VoyageAIError\): "timeout"/);
    expect((err as Error & { hint?: string }).hint).toContain('did not answer within timeoutSeconds');
    expect(err.message).not.toContain(KEY);
  });

  it('stops at the first failed request: batches still queued are never sent', async () => {
    server.enqueue('/v1/embeddings', { status: 400, body: { detail: 'bad request' } });
    const e = embedder({ batchSize: 1, concurrency: 1 });
    await expect(e.embed(['a', 'b', 'c', 'd'], 'document')).rejects.toThrow(/HTTP 400/);
    // Long enough for a queued request, had one been let go, to reach the server.
    await new Promise((r) => setTimeout(r, 300));
    expect(server.requests).toHaveLength(1);
  });

  const malformed: [string, unknown, RegExp][] = [
    ['one embedding short', { data: [{ embedding: wordHashVector('x', 16), index: 0 }], usage: { total_tokens: 2 } }, /1 embeddings for 2 texts/],
    [
      'the wrong dimensions',
      {
        data: [
          { embedding: [1, 2, 3], index: 0 },
          { embedding: [1, 2, 3], index: 1 },
        ],
      },
      /embedding 0 has 3 dimensions, expected 16/,
    ],
    [
      'an index twice',
      {
        data: [
          { embedding: wordHashVector('x', 16), index: 1 },
          { embedding: wordHashVector('x', 16), index: 1 },
        ],
      },
      /index 1 appears twice/,
    ],
    ['no data', { detail: 'ok' }, /no data array/],
  ];
  for (const [what, body, message] of malformed) {
    it(`refuses a response with ${what}, and the store caches nothing`, async () => {
      server.enqueue('/v1/embeddings', { body });
      const cache = new ContentStore(join(dir, 'cache'), { log: memoryLogger() });
      const store = new EmbeddingStore(cache, embedder(), memoryLogger());
      const items = [
        { id: 'a', text: 'dog' },
        { id: 'b', text: 'cat' },
      ];
      await expect(store.corpus(items)).rejects.toThrow(message);
      await expect(store.corpus(items)).resolves.toMatchObject({ ids: ['a', 'b'] });
      expect(server.requests).toHaveLength(2);
    });
  }

  it('refuses a non-finite value (JSON 1e999 parses as Infinity) and caches nothing', async () => {
    const row = wordHashVector('x', 16).join(',');
    server.enqueue('/v1/embeddings', {
      headers: { 'content-type': 'application/json' },
      body: `{"data":[{"embedding":[${row}],"index":0},{"embedding":[1e999${row.slice(row.indexOf(','))}],"index":1}],"usage":{"total_tokens":2}}`,
    });
    const root = join(dir, 'cache');
    const store = new EmbeddingStore(new ContentStore(root, { log: memoryLogger() }), embedder(), memoryLogger());
    await expect(store.texts(['dog', 'cat'])).rejects.toThrow(/embedding 1 has a non-finite value at dimension 0; nothing was cached/);
    expect(cachedFiles(root)).toEqual([]);
  });

  it('declares its key, its cosine minimum, that it sends text off the machine, and keeps transport out of its fingerprint', () => {
    expect(armRequirements(voyageEmbedArm, {}).env).toEqual(['VOYAGE_API_KEY']);
    expect(armRequirements(voyageEmbedArm, { index: 'lancedb' }).packages).toContain('@lancedb/lancedb');
    const p = voyageParams.parse({});
    expect(voyageEmbedArm.theoreticalMinScore(p)).toBe(-1);
    expect(voyageEmbedArm.sendsTextOffMachine(p)).toBe(true);
    const q = voyageParams.parse({ baseUrl: 'https://proxy.example/v1', batchSize: 10, concurrency: 1, maxRetries: 9, pricePerMTokens: 1 });
    expect(voyageEmbedArm.fingerprint(q)).toEqual(voyageEmbedArm.fingerprint(p));
    expect(voyageEmbedArm.fingerprint(voyageParams.parse({ dimensions: 1024 }))).toEqual(voyageEmbedArm.fingerprint(p));
    expect(voyageEmbedArm.fingerprint(voyageParams.parse({ dimensions: 512 }))).not.toEqual(voyageEmbedArm.fingerprint(p));
    expect(voyageParams.safeParse({ model: 'voyage-9' }).success).toBe(false);
  });

  it('needs VOYAGE_API_KEY in the environment it is given', () => {
    expect(() => voyageEmbedder(voyageParams.parse({}), {})).toThrow(/needs the environment variable VOYAGE_API_KEY/);
  });
});
