import { z } from 'zod';
import type { Document } from '../../evalset/types.js';
import { canonicalJson, sha256Hex } from '../cache/index.js';
import { HarnessError } from '../errors.js';
import { retrieveNode } from './retrieve.js';
import type { BoundNode, ScopeData, ScopeResults, ScopeRun } from './types.js';

/**
 * The arm a corpus transform feeds, as its config names it: `arm: { kind: bm25, params: { ... } }`. A transform
 * node owns its retrieve node (docs/adr/0024-reference-recipes.md), so the runner sees one node without inputs.
 */
export const wrappedArmSchema = z
  .object({
    kind: z.string(),
    params: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();

export type WrappedArmSpec = z.output<typeof wrappedArmSchema>;

/** Binds the wrapped arm as a retrieve node; problems come back under `params.arm`. */
export function bindWrappedArm(spec: WrappedArmSpec, topK: number): { readonly node: BoundNode } | { readonly problems: readonly string[] } {
  const r = retrieveNode.bind({ kind: spec.kind, params: spec.params, inputs: [], topK });
  if ('problems' in r) return { problems: r.problems.map((m) => `params.arm.${m}`) };
  return r;
}

/**
 * The scope a wrapped arm sees: same scope id and queries, the transformed documents, and a corpus
 * fingerprint derived from the source's and the transform's (nothing caches under it, but it stays honest).
 */
export function derivedScope(scope: ScopeData, documents: readonly Document[], transform: unknown, queries = scope.queries): ScopeData {
  return {
    scope: scope.scope,
    documents,
    queries,
    corpusFingerprint: sha256Hex(canonicalJson({ source: scope.corpusFingerprint, transform: transform as never })),
    queriesFingerprint: queries === scope.queries ? scope.queriesFingerprint : sha256Hex(canonicalJson(queries.map((q) => [q.id, q.text]) as never)),
  };
}

/**
 * Maps a run over derived documents back to the source documents: a source scores the max over its derived
 * documents (a chunk's best hit stands for its document, so source-level qrels stay valid; a chunk of extracted
 * facts stands for every message they came from), best first, cut to `topK`. A derived id without a source is
 * an internal error.
 */
export function backToSources(run: ScopeRun, sourceOf: ReadonlyMap<string, string | readonly string[]>, topK: number): ScopeRun {
  const results: ScopeResults = {};
  for (const [qid, docs] of Object.entries(run.results)) {
    const best = new Map<string, number>();
    for (const [id, score] of docs) {
      // A Returned item stands for itself: no derived document made it.
      const src = sourceOf.get(id) ?? (run.returned?.[id] === undefined ? undefined : id);
      if (src === undefined) throw new HarnessError(`internal: derived document "${id}" has no source document`);
      for (const one of typeof src === 'string' ? [src] : src) {
        const prev = best.get(one);
        if (prev === undefined || score > prev) best.set(one, score);
      }
    }
    results[qid] = [...best].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0)).slice(0, topK);
  }
  return { ...run, results };
}
