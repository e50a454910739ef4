import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../harness/log.js';
import { createRng } from '../../harness/stats/rng.js';
import { lancedbParams } from './vector-index.js';
import type { EmbedderIdentity } from './embedder.js';
import { exactTopK, normalizeRows } from './exact.js';
import { lancedbIndex } from './lancedb.js';
import { tempDir } from '../../harness/testing/temp.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Document, Query } from '../../evalset/types.js';
import { ContentStore } from '../../harness/cache/index.js';
import { PROJECT_ROOT } from '../../harness/testing/shared.js';
import { hashEmbedArm } from '../hash-embed/index.js';

const DIMS = 16;
const N = 600;
const identity: EmbedderIdentity = {
  provider: 'test',
  model: 'random',
  revision: '1',
  dims: DIMS,
  pooling: 'mean',
  normalize: true,
  prefixes: { query: '', document: '' },
};
const rng = createRng(11);
const vectors = normalizeRows(
  Float32Array.from({ length: N * DIMS }, () => rng.nextFloat() * 2 - 1),
  DIMS,
);
const matrix = { ids: Array.from({ length: N }, (_, i) => `d${i}`), dims: DIMS, vectors };

describe('lancedbIndex', () => {
  // LanceDB 0.31 leaves each index build's scratch folder (.tmpXXXXXX) in the temp dir; the arm removes it, and
  // the suite's leftover check fails if it does not.

  it('ivf-flat probing every partition is exact: same rows and cosines as exact search; the build measures no recall', async () => {
    const index = lancedbIndex(
      tempDir('harness-lance'),
      lancedbParams.parse({ indexType: 'ivf-flat', numPartitions: 4, nprobes: 4 }),
      memoryLogger(),
      identity,
    );
    // Recall is the dense arm's, on the eval queries (below): document vectors as queries overstate it.
    expect(Object.keys(await index.build(matrix))).toEqual(['annBuildMs']);
    const q = normalizeRows(
      Float32Array.from({ length: 2 * DIMS }, () => rng.nextFloat() * 2 - 1),
      DIMS,
    );
    const got = await index.search(q, 5);
    const want = exactTopK(vectors, q, DIMS, 5);
    for (let i = 0; i < 2; i++) {
      expect(Array.from(got[i]!.rows)).toEqual(Array.from(want[i]!.rows));
      got[i]!.scores.forEach((s, j) => expect(s).toBeCloseTo(want[i]!.scores[j] as number, 5));
    }
  }, 120_000);

  it('hnsw-sq scores what it returns as cosines (l2 on unit rows; dot found 1 % of the exact top 10)', async () => {
    const index = lancedbIndex(tempDir('harness-lance'), lancedbParams.parse({ indexType: 'hnsw-sq', numPartitions: 1 }), memoryLogger(), identity);
    await index.build(matrix);
    const q = normalizeRows(
      Float32Array.from({ length: DIMS }, () => rng.nextFloat() * 2 - 1),
      DIMS,
    );
    const [got] = await index.search(q, 10);
    const want = exactTopK(vectors, q, DIMS, N)[0]!;
    const cosine = new Map(Array.from(want.rows, (r, i) => [r, want.scores[i] as number]));
    // Scalar quantization (8 bits) bounds how far the index's distance is from the exact one.
    got!.rows.forEach((r, i) => expect(Math.abs((got!.scores[i] as number) - (cosine.get(r) as number))).toBeLessThan(0.02));
  }, 120_000);

  it('hnsw-sq keeps zero rows out of the l2 table and returns them at cosine 0, below every positive cosine', async () => {
    const withZeros = new Float32Array(vectors);
    withZeros.fill(0, 0, 2 * DIMS);
    const index = lancedbIndex(tempDir('harness-lance'), lancedbParams.parse({ indexType: 'hnsw-sq', numPartitions: 1 }), memoryLogger(), identity);
    await index.build({ ...matrix, vectors: withZeros });
    const [got] = await index.search(withZeros.slice(5 * DIMS, 6 * DIMS), N);
    const rows = Array.from(got!.rows);
    const scores = Array.from(got!.scores);
    expect(rows).toContain(0);
    expect(rows).toContain(1);
    expect(scores[rows.indexOf(0)]).toBe(0);
    for (let i = 1; i < scores.length; i++) expect(scores[i]).toBeLessThanOrEqual(scores[i - 1] as number);
    expect(scores.filter((s) => s > 0).length).toBeLessThan(rows.indexOf(0) + 1);
  }, 120_000);
});

/** The bundled example's memories and queries (351 and 106). */
function alexMemory(): { corpus: Document[]; queries: Query[] } {
  const read = (file: string) =>
    readFileSync(join(PROJECT_ROOT, 'evalset/examples/alex-memory', file), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; text: string; stratum: string });
  return { corpus: read('corpus.jsonl').map((d) => ({ id: d.id, text: d.text })), queries: read('queries.jsonl') };
}

describe('the dense arm over LanceDB: recall on the eval queries', () => {
  const { corpus, queries } = alexMemory();
  const dir = tempDir('harness-lance-arm');
  const ctx = { cache: new ContentStore(join(dir, 'cache')), log: memoryLogger(), workDir: join(dir, 'work'), env: {} };
  /** Index with the scope's queries, search every one to topK 100, read the search stats. */
  async function searched(lancedb: Record<string, unknown>, recallSample?: number): Promise<Record<string, number>> {
    const params = hashEmbedArm.params.parse({ dims: 64, index: 'lancedb', lancedb: { ...lancedb, ...(recallSample ? { recallSample } : {}) } });
    const arm = hashEmbedArm.create('h', params, ctx);
    try {
      await arm.index(corpus, queries);
      for (const q of queries) await arm.search(q, 100);
      return { ...(await arm.searchStats?.()) };
    } finally {
      await arm.close?.();
    }
  }

  it('ivf-flat probing every partition: recall 1 at every depth up to topK; ivf-pq with one probe loses some', async () => {
    const flat = await searched({ indexType: 'ivf-flat', numPartitions: 4, nprobes: 4 });
    expect(flat).toMatchObject({ annQueries: 106, 'annQueryExact@10': 1060, 'annQueryExact@100': 10600 });
    for (const k of [5, 10, 20, 30, 50, 100]) expect(flat[`annQueryFound@${k}`], String(k)).toBe(flat[`annQueryExact@${k}`]);
    const pq = await searched({ numPartitions: 8, numSubVectors: 2, nprobes: 1 }, 20);
    expect(pq['annQueries']).toBe(20);
    expect(pq['annQueryFound@10']).toBeGreaterThan(0);
    expect(pq['annQueryFound@10']).toBeLessThan(200);
    expect(ctx.log.lines.some((l) => /^h: lancedb ivf-pq on 20 eval queries: recall@5 /.test(l))).toBe(true);
  }, 120_000);
});
