import { z } from 'zod';
import type { TopK } from './exact.js';
import type { VectorMatrix } from './store.js';

/**
 * What arm.ts and lancedb.ts share, so neither imports the other: arm.ts loads lancedb.ts (and LanceDB's native
 * module) only for `index: lancedb`.
 */

/**
 * Params of LanceDB's ANN index (`index: lancedb`), passed to `@lancedb/lancedb` 0.31 as named there. The
 * table lives under the arm's workDir; recall against exact search is measured on up to `recallSample` eval
 * queries per scope and lands in IndexStats.
 */
export const lancedbParams = z
  .object({
    /** `ivf-pq` (the LanceDB default; lossy product quantization), `ivf-flat` (exact distances within probed partitions), `hnsw-sq`. */
    indexType: z.enum(['ivf-pq', 'ivf-flat', 'hnsw-sq']).default('ivf-pq'),
    /** IVF partitions; LanceDB picks ~sqrt(rows) when absent. */
    numPartitions: z.number().int().min(1).optional(),
    /** PQ sub-vectors (ivf-pq only); LanceDB picks dims / 16 (or / 8) when absent. */
    numSubVectors: z.number().int().min(1).optional(),
    /** Partitions probed per query (IVF partitions of every kind, `hnsw-sq` included: LanceDB builds IVF_HNSW_SQ). */
    nprobes: z.number().int().min(1).default(20),
    /** HNSW candidate list size at query time (`hnsw-sq`; raised to k when below it); recall rises with it (0.885 at 20, 0.95 at 40+ on NFCorpus GloVe). */
    ef: z.number().int().min(1).default(100),
    /** HNSW neighbours per node at build time (`hnsw-sq`); LanceDB's default (20) when absent. */
    m: z.number().int().min(1).optional(),
    /** HNSW candidate list size at build time (`hnsw-sq`); LanceDB's default (300) when absent. */
    efConstruction: z.number().int().min(1).optional(),
    /** Re-rank `refineFactor * topK` candidates by full vectors (ivf-pq); absent: no refinement. */
    refineFactor: z.number().int().min(1).optional(),
    /** Eval queries per scope also searched exactly, for the index's recall (evenly spaced when more; not fingerprinted). */
    recallSample: z.number().int().min(1).default(1000),
  })
  .strict();
export type LancedbParams = z.output<typeof lancedbParams>;

/**
 * A vector index over one corpus matrix whose rows are L2-normalised: `search` returns, per query row, the
 * best rows by cosine, best first.
 */
export interface VectorIndex {
  /** Builds over `m` (rows normalised); returns stats for IndexStats (summable across scopes: counts, ms). */
  build(m: VectorMatrix): Promise<Record<string, number>>;
  search(queries: Float32Array, topK: number): Promise<TopK[]>;
  close?(): Promise<void>;
}
