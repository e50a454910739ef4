import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ContentStore } from '../../../harness/cache/index.js';
import { memoryLogger } from '../../../harness/log.js';
import { runCaptured } from '../../../harness/testing/cli.js';
import { filesContaining } from '../../../harness/testing/secret.js';
import { type Loopback, startLoopback } from '../../../harness/testing/loopback.js';
import { armRequirements } from '../../../harness/config/load.js';
import { EmbeddingStore } from '../store.js';
import { openaiEmbedArm, openaiEmbedder, openaiParams } from './openai.js';
import { base64Floats, fakeTokens, openaiApi, wordHashVector } from './testing.js';
import { tempDir } from '../../../harness/testing/temp.js';

const KEY = 'sk-loopback-openai-key-7d2e0b';
let server: Loopback;
let dir: string;

beforeEach(async () => {
  server = await startLoopback(openaiApi());
  dir = tempDir('harness-openai');
});
afterEach(async () => {
  await server.close();
});

const embedder = (params: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}) =>
  openaiEmbedder(openaiParams.parse({ dimensions: 16, baseUrl: `${server.url}/v1`, maxRetries: 2, ...params }), { OPENAI_API_KEY: KEY, ...env });

const texts = ['the dog Biscuit', 'a cat named Tom', 'dog food', 'Biscuit in the park', 'Tom sleeps'];
const expected = (ts: readonly string[]) => Float32Array.from(ts.flatMap((t) => wordHashVector(t, 16)));

describe('openai-embed through the openai SDK', () => {
  for (const encoding of ['base64', 'float'] as const) {
    it(`sends batches of at most batchSize inputs with dimensions, and decodes the ${encoding} encoding`, async () => {
      const e = embedder({ batchSize: 2, concurrency: 1, encoding });
      expect(await e.embed(texts, 'document')).toEqual(expected(texts));
      expect(server.requests.map((r) => (r.json as { input: string[] }).input)).toEqual([texts.slice(0, 2), texts.slice(2, 4), texts.slice(4)]);
      for (const r of server.requests) {
        expect(r.path).toBe('/v1/embeddings');
        expect(r.json).toMatchObject({ model: 'text-embedding-3-small', dimensions: 16, encoding_format: encoding });
        expect(r.headers.authorization).toBe(`Bearer ${KEY}`);
      }
      // text-embedding-3-small lists at $0.02 per 1M tokens: 0.02 micro-USD per token.
      expect(e.usage?.()).toEqual({ apiRequests: 3, apiTexts: 5, apiTokens: fakeTokens(texts), costMicroUsd: fakeTokens(texts) * 0.02 });
    });
  }

  it('splits by UTF-8 bytes as a token upper bound', async () => {
    // 'é' is 2 bytes: 'ééé' counts 6, so a cap of 13 tokens holds two per request.
    await embedder({ maxTokensPerRequest: 13, concurrency: 1 }).embed(['ééé', 'ééé', 'ééé'], 'document');
    expect(server.requests.map((r) => (r.json as { input: string[] }).input.length)).toEqual([2, 1]);
  });

  it('sends no blank text (the API refuses one) and gives it the zero vector', async () => {
    const got = await embedder().embed(['dog', '', 'cat', '  '], 'document');
    expect(server.requests.map((r) => (r.json as { input: string[] }).input)).toEqual([['dog', 'cat']]);
    const zero = new Array<number>(16).fill(0);
    expect(got).toEqual(Float32Array.from([...wordHashVector('dog', 16), ...zero, ...wordHashVector('cat', 16), ...zero]));
    expect(await embedder().embed(['', ' '], 'query')).toEqual(new Float32Array(32));
    expect(server.requests).toHaveLength(1);
  });

  it('takes its base URL from OPENAI_BASE_URL in the environment it is given when no param says', async () => {
    const e = openaiEmbedder(openaiParams.parse({ dimensions: 16 }), { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${server.url}/v1` });
    expect(await e.embed(['dog'], 'query')).toEqual(expected(['dog']));
    expect(server.requests).toHaveLength(1);
  });

  it('retries a 429 after the Retry-After it was given', async () => {
    server.enqueue('/v1/embeddings', { status: 429, headers: { 'retry-after': '2' }, body: { error: { message: 'rate limited' } } });
    const t0 = performance.now();
    expect(await embedder().embed(['dog food'], 'document')).toEqual(expected(['dog food']));
    // The SDK's own first backoff is at most 0.5 s: 2 s can only come from the header.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(1900);
    expect(server.requests).toHaveLength(2);
  });

  it('retries a 500, then succeeds', async () => {
    server.enqueue('/v1/embeddings', { status: 500, body: { error: { message: 'boom' } } });
    expect(await embedder().embed(['cat'], 'document')).toEqual(expected(['cat']));
    expect(server.requests).toHaveLength(2);
  });

  it('fails with a clear error and no key in it, even when the API echoes the key', async () => {
    server.enqueue('/v1/embeddings', { status: 401, body: { error: { message: `Incorrect API key provided: ${KEY}`, code: 'invalid_api_key' } } });
    const err = await embedder()
      .embed(['cat'], 'document')
      .then(() => new Error('no error'))
      .catch((x: unknown) => x as Error);
    expect(err.message).toMatch(/^openai-embed: embeddings API HTTP 401/);
    expect(err.message).toContain('[redacted]');
    expect(err.message).not.toContain(KEY);
    expect(JSON.stringify(err)).not.toContain(KEY);
    expect((err as Error & { cause?: unknown }).cause).toBeUndefined();
  });

  it('refuses a base URL with credentials in the config, and names one from the environment redacted', async () => {
    for (const baseUrl of ['http://proxyuser:proxy-pass-91ab@127.0.0.1:9/v1', 'http://127.0.0.1:9/v1?api-key=proxy-pass-91ab']) {
      const r = openaiParams.safeParse({ baseUrl });
      expect(r.success).toBe(false);
      const said = JSON.stringify(r.error?.issues);
      expect(said).toMatch(/holds a (user:password|credential in its query)/);
      expect(said).not.toContain('proxy-pass-91ab');
    }
    const closed = await startLoopback(() => ({}));
    const url = closed.url.replace('http://', 'http://proxyuser:proxy-pass-91ab@');
    await closed.close();
    const err = await openaiEmbedder(openaiParams.parse({ dimensions: 16, maxRetries: 0 }), { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${url}/v1` })
      .embed(['cat'], 'document')
      .then(() => new Error('no error'))
      .catch((x: unknown) => x as Error);
    expect(err.message).toMatch(/^openai-embed: embeddings API request to http:\/\/\*\*\*@127\.0\.0\.1:\d+\/v1 failed/);
    expect(err.message).not.toContain('proxy-pass-91ab');
  });

  const nan = [Number.NaN, ...wordHashVector('x', 16).slice(1)];
  const malformed: [string, unknown, RegExp][] = [
    [
      'a NaN in base64',
      {
        data: [
          { index: 0, embedding: base64Floats(wordHashVector('x', 16)) },
          { index: 1, embedding: base64Floats(nan) },
        ],
      },
      /embedding 1 has a non-finite value at dimension 0/,
    ],
    [
      'base64 of the wrong length',
      {
        data: [
          { index: 0, embedding: base64Floats([1, 2]) },
          { index: 1, embedding: base64Floats([1, 2]) },
        ],
      },
      /has 2 dimensions, expected 16/,
    ],
    [
      'base64 that is not base64',
      {
        data: [
          { index: 0, embedding: '%%%%' },
          { index: 1, embedding: '%%%%' },
        ],
      },
      /neither a list of numbers nor base64 float32/,
    ],
    ['one embedding too many', { data: [0, 1, 2].map((index) => ({ index, embedding: base64Floats(wordHashVector('x', 16)) })) }, /3 embeddings for 2 texts/],
  ];
  for (const [what, body, message] of malformed) {
    it(`refuses a response with ${what}, and the store caches nothing`, async () => {
      server.enqueue('/v1/embeddings', { body });
      const store = new EmbeddingStore(new ContentStore(join(dir, 'cache'), { log: memoryLogger() }), embedder(), memoryLogger());
      const items = [
        { id: 'a', text: 'dog' },
        { id: 'b', text: 'cat' },
      ];
      await expect(store.corpus(items)).rejects.toThrow(message);
      const m = await store.corpus(items);
      expect(m.vectors).toEqual(expected(['dog', 'cat']));
      expect(server.requests).toHaveLength(2);
    });
  }

  it('declares its key and cosine minimum, refuses impossible dimensions, and keeps transport out of its fingerprint', () => {
    expect(armRequirements(openaiEmbedArm, {}).env).toEqual(['OPENAI_API_KEY']);
    expect(armRequirements(openaiEmbedArm, { index: 'lancedb' }).packages).toContain('@lancedb/lancedb');
    const p = openaiParams.parse({});
    expect(openaiEmbedArm.theoreticalMinScore(p)).toBe(-1);
    expect(openaiEmbedArm.sendsTextOffMachine(p)).toBe(true);
    const q = openaiParams.parse({ baseUrl: 'https://proxy.example/v1', encoding: 'float', batchSize: 10, concurrency: 1, pricePerMTokens: 3 });
    expect(openaiEmbedArm.fingerprint(q)).toEqual(openaiEmbedArm.fingerprint(p));
    expect(openaiEmbedArm.fingerprint(openaiParams.parse({ dimensions: 512 }))).not.toEqual(openaiEmbedArm.fingerprint(p));
    expect(openaiParams.safeParse({ dimensions: 4096 }).error?.issues[0]?.message).toBe('text-embedding-3-small returns at most 1536 dimensions');
    expect(openaiParams.safeParse({ model: 'text-embedding-ada-002', dimensions: 256 }).success).toBe(false);
  });
});

describe('openai-embed end to end through ablate', () => {
  it('runs on a small eval set with the key in no output or file, and a rerun sends no request', async () => {
    mkdirSync(join(dir, 'es'));
    const docs = ['dog named Biscuit', 'cat named Tom', 'dog food brand', 'brand of cat food'];
    writeFileSync(join(dir, 'es', 'corpus.jsonl'), docs.map((text, i) => `${JSON.stringify({ id: `m${i + 1}`, text })}\n`).join(''));
    writeFileSync(
      join(dir, 'es', 'queries.jsonl'),
      [
        { id: 'q1', text: 'dog Biscuit', stratum: 'exact', qrels: { m1: 2 } },
        { id: 'q2', text: 'cat food', stratum: 'paraphrase', qrels: { m4: 2 } },
      ]
        .map((q) => `${JSON.stringify(q)}\n`)
        .join(''),
    );
    writeFileSync(
      join(dir, 'study.yaml'),
      `name: openai
evalset: { format: memory, path: es }
measures: [nDCG@10]
topK: 10
output: out
cache: cache
arms:
  - { id: bm25, kind: bm25 }
  - { id: oai, kind: openai-embed, params: { dimensions: 16 } }
compare: { permutations: 1000, resamples: 1000 }
`,
    );
    const env = { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: `${server.url}/v1` };
    const r = await runCaptured(['ablate', '--config', join(dir, 'study.yaml')], dir, env);
    expect(r.code).toBe(0);
    expect(server.requests.flatMap((x) => (x.json as { input: string[] }).input).sort()).toEqual([...docs, 'dog Biscuit', 'cat food'].sort());
    const [folder] = readdirSync(join(dir, 'out'));
    const manifest = JSON.parse(readFileSync(join(dir, 'out', folder!, 'manifest.json'), 'utf8')) as {
      systems: { id: string; indexStats: Record<string, number> }[];
    };
    const docTokens = fakeTokens(docs);
    expect(manifest.systems.find((x) => x.id === 'oai')?.indexStats).toMatchObject({
      documents: 4,
      dims: 16,
      apiRequests: 1,
      apiTokens: docTokens,
      costMicroUsd: docTokens * 0.02,
      // The two queries' embeddings, one request, counted apart from the corpus's.
      queryApiRequests: 1,
      queryApiTexts: 2,
      queryApiTokens: fakeTokens(['dog Biscuit', 'cat food']),
      queryCostMicroUsd: fakeTokens(['dog Biscuit', 'cat food']) * 0.02,
    });
    expect(filesContaining([join(dir, 'out'), join(dir, 'cache')], KEY)).toEqual([]);
    expect(`${r.out}${r.stderr}${r.log.join('\n')}`).not.toContain(KEY);
    const before = server.requests.length;
    const again = await runCaptured(['ablate', '--config', join(dir, 'study.yaml')], dir, env);
    expect(again.code).toBe(0);
    expect(server.requests).toHaveLength(before);
  });

  it('is refused at config load without OPENAI_API_KEY, naming the variable and not calling the API', async () => {
    writeFileSync(
      join(dir, 'study.yaml'),
      `name: openai
evalset: { format: memory, path: es }
measures: [nDCG@10]
arms:
  - { id: oai, kind: openai-embed }
`,
    );
    mkdirSync(join(dir, 'es'));
    writeFileSync(join(dir, 'es', 'corpus.jsonl'), `${JSON.stringify({ id: 'm1', text: 'x' })}\n`);
    writeFileSync(join(dir, 'es', 'queries.jsonl'), `${JSON.stringify({ id: 'q1', text: 'x', stratum: 'exact', qrels: { m1: 1 } })}\n`);
    const r = await runCaptured(['ablate', '--config', join(dir, 'study.yaml')], dir, {});
    expect(r.code).toBe(2);
    expect(r.stderr + r.log.join('\n')).toContain('arms[0]: openai-embed needs the environment variable OPENAI_API_KEY');
    expect(server.requests).toHaveLength(0);
  });
});
