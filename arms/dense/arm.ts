import { z } from 'zod';
import type { Corpus, Document, JsonValue, Query } from '../../evalset/types.js';
import type { Arm, ArmContext, ArmRequirements, IndexStats, ScoredDoc } from '../types.js';
import type { Embedder } from './embedder.js';
import { QueryRecall } from './ann-recall.js';
import { dot, exactTopK, normalizeRows, type TopK } from './exact.js';
import { EmbeddingStore, type VectorMatrix } from './store.js';
import { type LancedbParams, lancedbParams, type VectorIndex } from './vector-index.js';

/**
 * Search params every dense arm kind adds to its own schema (spread `...denseSearchParams` into its
 * `z.object({...})`): `index: exact` (default; cosine over one Float32Array) or `index: lancedb`.
 */
export const denseSearchParams = {
  index: z.enum(['exact', 'lancedb']).default('exact'),
  lancedb: lancedbParams.default(lancedbParams.parse({})),
};
export type DenseSearchParams = { index: 'exact' | 'lancedb'; lancedb: LancedbParams };

/** What a dense arm kind needs: its own packages, and LanceDB's when `index: lancedb` is chosen. */
export function denseRequires(packages: readonly string[], env: readonly string[] = []): (p: DenseSearchParams) => ArmRequirements {
  return (p) => ({ env, packages: p.index === 'lancedb' ? [...packages, '@lancedb/lancedb'] : packages });
}

/** The part of the search params that changes results, for an arm kind's fingerprint. */
export function searchFingerprint(p: DenseSearchParams): JsonValue {
  if (p.index === 'exact') return { index: 'exact' };
  const { recallSample: _measuredOnly, ...rest } = p.lancedb;
  return { index: 'lancedb', lancedb: JSON.parse(JSON.stringify(rest)) as JsonValue };
}

/** The cosine's lower bound, every dense arm kind's `theoreticalMinScore` (for TM2C2). */
export const COSINE_MIN = -1;

/** Exact search: {@link exactTopK} over the matrix held in memory. */
export function exactIndex(): VectorIndex {
  let matrix: VectorMatrix | undefined;
  return {
    async build(m) {
      matrix = m;
      return {};
    },
    async search(queries, topK) {
      if (matrix === undefined) throw new Error('exactIndex.search before build');
      return exactTopK(matrix.vectors, queries, matrix.dims, topK);
    },
  };
}

/** The text a Document is embedded as: BEIR's `title + ' ' + text` when it has a title, else its text. */
export function documentText(d: Document): string {
  return d.title === undefined || d.title === '' ? d.text : `${d.title} ${d.text}`;
}

export interface DenseArmOptions {
  readonly id: string;
  readonly ctx: ArmContext;
  /** Loads the model; called once, on the first index (so creating an arm loads nothing heavy). */
  readonly load: () => Promise<Embedder>;
  readonly search: DenseSearchParams;
  /**
   * Offer `searchMany`, so the runner hands over queries in batches (one embedding call and one pass over the
   * matrix per batch). Off by default: each query is then embedded and searched alone, and its latency is
   * what one production query costs; a hosted arm may turn it on to save requests (latency then is the
   * batch's time shared equally, as the runner records batched searches).
   */
  readonly batchQueries?: boolean;
}

/**
 * Turns any Embedder into an Arm:
 * - `index(corpus)` embeds the documents through the shared {@link EmbeddingStore} (cached matrix, or batches
 *   with resume), L2-normalises the rows and builds the vector index (exact or LanceDB);
 * - `search` (and `searchMany` with {@link DenseArmOptions.batchQueries}) embed the query texts (role
 *   `query`, cached per text) and return top-k by cosine, so the query latency the runner records includes
 *   the query's embedding time (unless its vector was already stored by an earlier run or arm).
 *
 * IndexStats: `documents`, `dims`, `embedded` (texts the model embedded during this index), `embedCached`
 * (read back from the store), `embedResumedBatches`, `embedMs`, the index's own stats, and the embedder's
 * `usage()` counters. Scores are cosines in [-1, 1] ({@link COSINE_MIN}).
 */
export function denseArm(opts: DenseArmOptions): Arm {
  let embedder: Embedder | undefined;
  let store: EmbeddingStore | undefined;
  let vindex: VectorIndex | undefined;
  let ids: readonly string[] = [];
  const recall = opts.search.index === 'lancedb' ? indexRecall(opts) : undefined;
  const ready = async () => {
    if (embedder === undefined) {
      embedder = await opts.load();
      store = new EmbeddingStore(opts.ctx.cache, embedder, opts.ctx.log);
    }
    return { embedder, store: store as EmbeddingStore };
  };
  const queryVectors = async (texts: readonly string[]) => {
    const { embedder: e, store: s } = await ready();
    return normalizeRows(await s.texts(texts, 'query'), e.dims);
  };
  const toScored = (t: TopK): ScoredDoc[] => Array.from(t.rows, (r, i) => ({ docId: ids[r] as string, score: t.scores[i] as number }));
  return {
    id: opts.id,
    async index(corpus: Corpus, queries?: readonly Query[]): Promise<IndexStats> {
      const { embedder: e, store: s } = await ready();
      const before = { ...s.stats };
      const t0 = performance.now();
      const m = await s.corpus(
        corpus.map((d) => ({ id: d.id, text: documentText(d) })),
        'document',
        `${opts.id}: embedding ${corpus.length} documents with ${e.identity.model}`,
      );
      const embedMs = performance.now() - t0;
      normalizeRows(m.vectors, m.dims);
      await vindex?.close?.();
      // LanceDB's native module loads only for arms that ask for it.
      vindex =
        opts.search.index === 'lancedb'
          ? (await import('./lancedb.js')).lancedbIndex(opts.ctx.workDir, opts.search.lancedb, opts.ctx.log, e.identity)
          : exactIndex();
      const built = await vindex.build(m);
      ids = m.ids;
      recall?.reset(m, queries);
      return {
        documents: corpus.length,
        dims: e.dims,
        embedded: s.stats.computed - before.computed,
        embedCached: s.stats.cached - before.cached,
        embedResumedBatches: s.stats.resumedBatches - before.resumedBatches,
        embedMs: Math.round(embedMs),
        ...built,
        ...(e.usage?.() ?? {}),
      };
    },
    async search(query: Query, topK: number) {
      const q = await queryVectors([query.text]);
      const [t] = await (vindex as VectorIndex).search(q, topK);
      recall?.observe(query.id, q, topK, t);
      return t === undefined ? [] : toScored(t);
    },
    ...(opts.batchQueries === true
      ? {
          async searchMany(queries: readonly Query[], topK: number) {
            const q = await queryVectors(queries.map((x) => x.text));
            const got = await (vindex as VectorIndex).search(q, topK);
            const dims = q.length / Math.max(1, queries.length);
            queries.forEach((x, i) => recall?.observe(x.id, q.subarray(i * dims, (i + 1) * dims), topK, got[i]));
            return new Map(queries.map((x, i) => [x.id, toScored(got[i] as TopK)]));
          },
        }
      : {}),
    searchStats: () => recall?.stats() ?? {},
    async close() {
      await vindex?.close?.();
      await embedder?.close?.();
    },
  };
}

/**
 * An ANN index's recall on the eval queries (arms/dense/ann-recall.ts): the measured queries' vectors and the rows
 * the index returned are kept as they are searched; `stats` searches them exactly, once the scope's timed searches
 * are done, rescoring the returned rows as exact search does, so a row tied with the exact k-th counts as found.
 */
function indexRecall(opts: DenseArmOptions) {
  const recall = new QueryRecall(opts.search.lancedb.recallSample);
  let matrix: VectorMatrix | undefined;
  let pending: { q: Float32Array; topK: number; rows: Int32Array }[] = [];
  return {
    reset(m: VectorMatrix, queries: readonly Query[] | undefined) {
      matrix = m;
      pending = [];
      recall.reset(queries);
    },
    observe(queryId: string, q: Float32Array, topK: number, t: TopK | undefined) {
      if (recall.wants(queryId)) pending.push({ q: q.slice(), topK, rows: t?.rows ?? new Int32Array(0) });
    },
    stats(): Record<string, number> {
      const m = matrix;
      if (pending.length === 0 || m === undefined) return {};
      for (const x of pending) {
        const exact = exactTopK(m.vectors, x.q, m.dims, x.topK)[0]?.scores ?? [];
        recall.add(
          x.topK,
          exact,
          Array.from(x.rows, (r) => dot(m.vectors, r * m.dims, x.q, 0, m.dims)),
        );
      }
      opts.ctx.log.info(`${opts.id}: lancedb ${opts.search.lancedb.indexType} on ${pending.length} eval queries: ${recall.summary()} against exact search`);
      pending = [];
      return recall.stats();
    },
  };
}
