import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ContentStore, sha256Hex } from '../../harness/cache/index.js';
import { memoryLogger } from '../../harness/log.js';
import type { EmbedRole, Embedder, EmbedderIdentity } from './embedder.js';
import { decodeMatrix, EmbeddingStore, encodeMatrix } from './store.js';
import { tempDir } from '../../harness/testing/temp.js';

const DIMS = 3;

/** A deterministic embedder: each value a byte of sha256(role + prefix + text); records every call. */
function hashEmbedder(opts: { batchSize?: number; failOnCall?: number; shortOnCall?: number; identity?: Partial<EmbedderIdentity> } = {}) {
  const calls: { texts: readonly string[]; role: EmbedRole }[] = [];
  const identity: EmbedderIdentity = {
    provider: 'test',
    model: 'hash',
    revision: '1',
    dims: DIMS,
    pooling: 'mean',
    normalize: false,
    prefixes: { query: 'q: ', document: '' },
    ...opts.identity,
  };
  const vectorOf = (text: string, role: EmbedRole) => {
    const h = sha256Hex(`${role}|${identity.prefixes[role]}${text}|${identity.model}`);
    return Array.from({ length: DIMS }, (_, j) => parseInt(h.slice(2 * j, 2 * j + 2), 16) - 128);
  };
  const e: Embedder & { calls: typeof calls } = {
    identity,
    dims: DIMS,
    batchSize: opts.batchSize ?? 2,
    calls,
    async embed(texts, role) {
      calls.push({ texts, role });
      if (calls.length === opts.failOnCall) throw new Error('killed');
      const out = new Float32Array(texts.length * DIMS);
      texts.forEach((t, i) => out.set(vectorOf(t, role), i * DIMS));
      return calls.length === opts.shortOnCall ? out.subarray(DIMS) : out;
    },
  };
  return { e, vectorOf };
}

const items = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'].map((t, i) => ({ id: `d${i}`, text: t }));
const freshCache = () => new ContentStore(tempDir('harness-embed'), { log: memoryLogger() });
const embedFiles = (cache: ContentStore) =>
  existsSync(join(cache.root, 'embed')) ? readdirSync(join(cache.root, 'embed'), { recursive: true, withFileTypes: true }).filter((d) => d.isFile()) : [];

describe('EmbeddingStore', () => {
  it('embeds a corpus in batches, row i the vector of item i, and stores one matrix file', async () => {
    const cache = freshCache();
    const { e, vectorOf } = hashEmbedder();
    const store = new EmbeddingStore(cache, e, memoryLogger());
    const m = await store.corpus(items);
    expect(e.calls.map((c) => c.texts.length)).toEqual([2, 2, 1]);
    expect(m.ids).toEqual(['d0', 'd1', 'd2', 'd3', 'd4']);
    for (let i = 0; i < items.length; i++) expect(Array.from(m.vectors.subarray(i * DIMS, (i + 1) * DIMS))).toEqual(vectorOf(items[i]!.text, 'document'));
    expect(store.stats).toEqual({ computed: 5, cached: 0, resumedBatches: 0 });
    // Batch checkpoints are gone once the matrix exists: one file for the corpus.
    expect(embedFiles(cache)).toHaveLength(1);
  });

  it('serves a second build of the same corpus from the matrix, with no embedding, also to a second arm on the same model', async () => {
    const cache = freshCache();
    await new EmbeddingStore(cache, hashEmbedder().e, memoryLogger()).corpus(items);
    const { e } = hashEmbedder();
    const again = new EmbeddingStore(cache, e, memoryLogger());
    const m = await again.corpus(items);
    expect(e.calls).toEqual([]);
    expect(again.stats).toEqual({ computed: 0, cached: 5, resumedBatches: 0 });
    expect(m.vectors.length).toBe(5 * DIMS);
    expect(cache.stats.embed.hits).toBe(1);
  });

  it('resumes a killed build from the last finished batch', async () => {
    const cache = freshCache();
    const killed = hashEmbedder({ failOnCall: 3 });
    await expect(new EmbeddingStore(cache, killed.e, memoryLogger()).corpus(items)).rejects.toThrow('killed');
    const { e, vectorOf } = hashEmbedder();
    const resumed = new EmbeddingStore(cache, e, memoryLogger());
    const m = await resumed.corpus(items);
    // Batches [alpha, beta] and [gamma, delta] were finished; only [epsilon] is embedded again.
    expect(e.calls.map((c) => c.texts)).toEqual([['epsilon']]);
    expect(resumed.stats).toEqual({ computed: 1, cached: 4, resumedBatches: 2 });
    expect(Array.from(m.vectors.subarray(2 * DIMS, 3 * DIMS))).toEqual(vectorOf('gamma', 'document'));
  });

  it('addresses vectors by identity, role and text: another prefix or model re-embeds', async () => {
    const cache = freshCache();
    await new EmbeddingStore(cache, hashEmbedder().e, memoryLogger()).corpus(items);
    for (const identity of [{ model: 'other' }, { prefixes: { query: 'q: ', document: 'passage: ' } }, { revision: '2' }, { pooling: 'cls' }]) {
      const { e } = hashEmbedder({ identity });
      await new EmbeddingStore(cache, e, memoryLogger()).corpus(items);
      expect(e.calls.length, JSON.stringify(identity)).toBe(3);
    }
    const { e } = hashEmbedder();
    await new EmbeddingStore(cache, e, memoryLogger()).corpus(items, 'query');
    expect(e.calls.length).toBe(3);
  });

  it('caches query texts one by one and embeds only the misses, together', async () => {
    const cache = freshCache();
    const { e, vectorOf } = hashEmbedder({ batchSize: 8 });
    const store = new EmbeddingStore(cache, e, memoryLogger());
    await store.texts(['what is alpha']);
    const v = await store.texts(['who is beta', 'what is alpha', 'when is gamma']);
    expect(e.calls.map((c) => c.texts)).toEqual([['what is alpha'], ['who is beta', 'when is gamma']]);
    expect(e.calls.every((c) => c.role === 'query')).toBe(true);
    expect(Array.from(v.subarray(DIMS, 2 * DIMS))).toEqual(vectorOf('what is alpha', 'query'));
    expect(Array.from(v.subarray(2 * DIMS))).toEqual(vectorOf('when is gamma', 'query'));
    expect(store.stats.cached).toBe(1);
  });

  it('refuses a short answer from the embedder and caches nothing', async () => {
    const cache = freshCache();
    const { e } = hashEmbedder({ shortOnCall: 1 });
    await expect(new EmbeddingStore(cache, e, memoryLogger()).corpus(items)).rejects.toThrow(
      /returned 3 values for 2 texts of 3 dimensions; nothing was cached/,
    );
    expect(embedFiles(cache)).toHaveLength(0);
    const nan = hashEmbedder();
    const bad: Embedder = { ...nan.e, embed: async (t) => new Float32Array(t.length * DIMS).fill(Number.NaN) };
    await expect(new EmbeddingStore(cache, bad, memoryLogger()).texts(['x'])).rejects.toThrow(/non-finite value in row 0/);
    expect(embedFiles(cache)).toHaveLength(0);
  });

  it('evicts a damaged matrix and re-embeds', async () => {
    const cache = freshCache();
    await new EmbeddingStore(cache, hashEmbedder().e, memoryLogger()).corpus(items);
    const [file] = embedFiles(cache);
    const path = join(file!.parentPath, file!.name);
    const data = readFileSync(path);
    data[data.length - 1] = (data[data.length - 1] as number) ^ 0xff;
    writeFileSync(path, data);
    const { e } = hashEmbedder();
    await new EmbeddingStore(cache, e, memoryLogger()).corpus(items);
    expect(e.calls.length).toBe(3);
    expect(cache.stats.embed.evicted).toBe(1);
  });
});

describe('matrix payload', () => {
  it('round-trips ids and float32 values through binary, and names what is wrong with a bad one', () => {
    const m = { ids: ['a', 'b'], dims: 2, vectors: Float32Array.of(0.5, -1, 3.25, 1e-7) };
    const buf = encodeMatrix(m);
    expect(buf.subarray(0, 16).toString('latin1')).toBe('harness-vectors ');
    const back = decodeMatrix(buf);
    expect(back).toEqual(m);
    expect(decodeMatrix(buf.subarray(0, buf.length - 4))).toBe('vector matrix holds 12 bytes, expected 16');
    expect(decodeMatrix(Buffer.from('{"ids":[]}'))).toBe('not a vector matrix');
  });
});
