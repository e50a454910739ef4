import type { Qrels, Run } from '../../evalset/types.js';
import { rankDocIds } from '../metrics/ranking.js';

/** One (query, document) pair of a pool. */
export interface PoolPair {
  readonly queryId: string;
  readonly docId: string;
}

export interface Pool {
  readonly depth: number;
  /** The systems pooled, in the order given. */
  readonly systems: readonly string[];
  /** Every distinct pair, by query in first-seen order, documents in the order they entered the pool. */
  readonly pairs: readonly PoolPair[];
  /** Pairs per query. */
  readonly perQuery: ReadonlyMap<string, number>;
}

/**
 * TREC depth-k pooling (Spärck Jones & van Rijsbergen 1975; Voorhees & Harman, TREC, 2005): the union over
 * systems of each system's top `depth` documents per query, deduplicated. Ranks follow trec_eval's order (score
 * descending, docId descending), so the pool is the set of documents every depth-k measure reads. Only the
 * queries in `queryIds` are pooled (a run's extra queries are not judged).
 */
export function depthPool(runs: ReadonlyMap<string, Run>, depth: number, queryIds: readonly string[]): Pool {
  if (!Number.isInteger(depth) || depth < 1) throw new RangeError(`depthPool: depth must be a positive integer, got ${depth}`);
  const pairs: PoolPair[] = [];
  const perQuery = new Map<string, number>();
  for (const queryId of queryIds) {
    const seen = new Set<string>();
    for (const run of runs.values()) {
      const docs = run.get(queryId);
      if (!docs) continue;
      for (const docId of rankDocIds(docs).slice(0, depth)) {
        if (seen.has(docId)) continue;
        seen.add(docId);
        pairs.push({ queryId, docId });
      }
    }
    if (seen.size > 0) perQuery.set(queryId, seen.size);
  }
  return { depth, systems: [...runs.keys()], pairs, perQuery };
}

/** The pairs of `pool` that `qrels` does not grade: what a judge must fill. */
export function unjudgedPairs(pool: Pool, qrels: Qrels): PoolPair[] {
  return pool.pairs.filter((p) => qrels.get(p.queryId)?.has(p.docId) !== true);
}
