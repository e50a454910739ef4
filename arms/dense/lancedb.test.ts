import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../harness/log.js';
import { createRng } from '../../harness/stats/rng.js';
import { lancedbParams } from './vector-index.js';
import type { EmbedderIdentity } from './embedder.js';
import { exactTopK, normalizeRows } from './exact.js';
import { lancedbIndex } from './lancedb.js';
import { tempDir } from '../../harness/testing/temp.js';

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

  it('ivf-flat probing every partition is exact: recall 1 against exact search, same rows and cosines', async () => {
    const log = memoryLogger();
    const index = lancedbIndex(
      tempDir('harness-lance'),
      lancedbParams.parse({ indexType: 'ivf-flat', numPartitions: 4, nprobes: 4, recallSample: 50 }),
      log,
      identity,
    );
    const stats = await index.build(matrix);
    expect(stats['annRecallExact@10']).toBe(50 * 10);
    expect(stats['annRecallFound@10']).toBe(50 * 10);
    expect(stats['annRecallFound@100']).toBe(stats['annRecallExact@100']);
    expect(log.lines.some((l) => l.includes('recall@10 1.000'))).toBe(true);
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

  it('ivf-pq with one probe loses some of the exact top-k, and says how much', async () => {
    const index = lancedbIndex(
      tempDir('harness-lance'),
      lancedbParams.parse({ numPartitions: 8, numSubVectors: 2, nprobes: 1, recallSample: 50 }),
      memoryLogger(),
      identity,
    );
    const stats = await index.build(matrix);
    const found = stats['annRecallFound@10'] as number;
    expect(found).toBeGreaterThan(0);
    expect(found).toBeLessThan(500);
  }, 120_000);

  it('hnsw-sq finds the exact top 10 (l2 on unit rows; dot found 1 % of it) and scores them as cosines', async () => {
    const index = lancedbIndex(
      tempDir('harness-lance'),
      lancedbParams.parse({ indexType: 'hnsw-sq', numPartitions: 1, recallSample: 50 }),
      memoryLogger(),
      identity,
    );
    const stats = await index.build(matrix);
    expect((stats['annRecallFound@10'] as number) / (stats['annRecallExact@10'] as number)).toBeGreaterThanOrEqual(0.9);
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
    const index = lancedbIndex(
      tempDir('harness-lance'),
      lancedbParams.parse({ indexType: 'hnsw-sq', numPartitions: 1, recallSample: 10 }),
      memoryLogger(),
      identity,
    );
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
