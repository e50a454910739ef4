import type { ScopeData, ScopeResults, ScopeRun } from '../systems/types.js';

/**
 * A {@link ScopeRun} as it crosses the worker boundary (docs/adr/0022-parallel-ablation.md): documents as
 * indices into the scope's corpus (ids an arm invents, outside the corpus, go to `extraDocs`), scores as
 * float64, one offset per query. Four typed arrays and two short id lists instead of a JSON tree of
 * `[docId, score]` pairs: the buffers are transferred, not copied, and no string is cloned per result.
 * Float64 keeps every score bit for bit, so the unpacked run equals the one the instance returned.
 */
export interface WireScopeRun {
  readonly indexStats: Readonly<Record<string, number>>;
  readonly indexMs: number;
  readonly searchMs: number;
  /** Query ids of `results`, in the instance's key order (the cache entry is written in that order). */
  readonly queryIds: readonly string[];
  /** Results of queryIds[q] are positions offsets[q] .. offsets[q + 1]. */
  readonly offsets: Uint32Array;
  /** Position in the scope's documents, or documents.length + k for extraDocs[k]. */
  readonly docs: Uint32Array;
  readonly scores: Float64Array;
  readonly extraDocs: readonly string[];
  /** Query ids of `queryMs`, in the instance's key order, with their latencies. */
  readonly latencyIds: readonly string[];
  readonly latencies: Float64Array;
  readonly returned?: ScopeRun['returned'];
}

/** docId -> position in the scope's documents, built once per scope and side of the boundary. */
export class DocPositions {
  readonly #index = new WeakMap<ScopeData, Map<string, number>>();
  of(scope: ScopeData): Map<string, number> {
    let m = this.#index.get(scope);
    if (m === undefined) {
      m = new Map(scope.documents.map((d, i) => [d.id, i] as const));
      this.#index.set(scope, m);
    }
    return m;
  }
}

export function wireRun(run: ScopeRun, scope: ScopeData, table: DocPositions): WireScopeRun {
  const index = table.of(scope);
  const queryIds = Object.keys(run.results);
  let total = 0;
  for (const q of queryIds) total += (run.results[q] as [string, number][]).length;
  const offsets = new Uint32Array(queryIds.length + 1);
  const docs = new Uint32Array(total);
  const scores = new Float64Array(total);
  const extra = new Map<string, number>();
  let at = 0;
  queryIds.forEach((q, i) => {
    for (const [docId, score] of run.results[q] as [string, number][]) {
      let d = index.get(docId);
      if (d === undefined) {
        d = extra.get(docId);
        if (d === undefined) {
          d = scope.documents.length + extra.size;
          extra.set(docId, d);
        }
      }
      docs[at] = d;
      scores[at] = score;
      at++;
    }
    offsets[i + 1] = at;
  });
  const latencyIds = Object.keys(run.queryMs);
  return {
    indexStats: run.indexStats,
    indexMs: run.indexMs,
    searchMs: run.searchMs,
    queryIds,
    offsets,
    docs,
    scores,
    extraDocs: [...extra.keys()],
    latencyIds,
    latencies: Float64Array.from(latencyIds, (q) => run.queryMs[q] as number),
    ...(run.returned === undefined ? {} : { returned: run.returned }),
  };
}

export function unwireRun(p: WireScopeRun, scope: ScopeData): ScopeRun {
  const n = scope.documents.length;
  const idOf = (d: number): string => (d < n ? (scope.documents[d] as { id: string }).id : (p.extraDocs[d - n] as string));
  const results: ScopeResults = {};
  p.queryIds.forEach((q, i) => {
    const end = p.offsets[i + 1] as number;
    const docs: [string, number][] = [];
    for (let k = p.offsets[i] as number; k < end; k++) docs.push([idOf(p.docs[k] as number), p.scores[k] as number]);
    results[q] = docs;
  });
  const queryMs: Record<string, number> = {};
  p.latencyIds.forEach((q, i) => {
    queryMs[q] = p.latencies[i] as number;
  });
  const run = { indexStats: p.indexStats, indexMs: p.indexMs, searchMs: p.searchMs, queryMs, results };
  return p.returned === undefined ? run : { ...run, returned: p.returned };
}

/** The buffers of a packed run, to hand to postMessage's transfer list. */
export function transferables(p: WireScopeRun): ArrayBuffer[] {
  return [p.offsets.buffer, p.docs.buffer, p.scores.buffer, p.latencies.buffer] as ArrayBuffer[];
}
