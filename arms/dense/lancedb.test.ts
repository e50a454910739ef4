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
});
