import { z } from 'zod';
import { HarnessError } from '../errors.js';
import { chunkCorpus, V1_CHUNK_RULES } from '../recipes/chunk.js';
import { parseNodeParams, shownParams } from './node-params.js';
import type { NodeKind, SystemInstance } from './types.js';
import { backToSources, bindWrappedArm, derivedScope, wrappedArmSchema } from './wrapped.js';

/** Bump when chunking or the mapping back to documents changes for the same params. */
const CHUNK_VERSION = 1;

const chunkParams = z
  .object({
    /** The arm that indexes and searches the chunks. */
    arm: wrappedArmSchema,
    size: z.number().int().positive().default(V1_CHUNK_RULES.size),
    overlap: z.number().int().min(0).default(V1_CHUNK_RULES.overlap),
    minBoundary: z.number().min(0).max(1).default(V1_CHUNK_RULES.minBoundary),
    /** Chunks the wrapped arm returns per query, before the max over each document's chunks; default 4 x topK. */
    fetch: z.number().int().positive().optional(),
  })
  .strict()
  .refine((p) => p.overlap < Math.ceil(p.minBoundary * p.size), {
    path: ['overlap'],
    message: 'overlap must be below minBoundary x size, or chunking would not advance (v1: 320 < 0.5 x 1600)',
  });

/**
 * `chunk`: the v1 hybrid provider's chunking as a corpus transform (docs/adr/0025-v1-chunking.md): each
 * document of the scope is cut into chunks (1,600 characters, 320 overlap, sentence boundaries with the
 * fallback chain ". ", newline, space, hard cut), each headed "# Memories from YYYY-MM-DD"; the wrapped arm
 * indexes and searches the chunks; a document scores the max over its chunks, so the run is over source
 * documents and the eval set's qrels stay valid (docs/adr/0024-reference-recipes.md).
 */
export const chunkNode: NodeKind = {
  summary: 'chunk each document (v1: 1600 chars, 320 overlap, sentence boundaries, date header) for a wrapped arm; max over chunks',
  arity: { min: 0, max: 0 },
  params: chunkParams,
  bind({ params, topK }) {
    const r = parseNodeParams(chunkParams, params);
    if ('problems' in r) return r;
    const p = r.data;
    const inner = bindWrappedArm(p.arm, topK);
    if ('problems' in inner) return inner;
    const rules = { ...V1_CHUNK_RULES, size: p.size, overlap: p.overlap, minBoundary: p.minBoundary };
    const own = { node: 'chunk', v: CHUNK_VERSION, size: p.size, overlap: p.overlap, minBoundary: p.minBoundary, separators: [...rules.separators] };
    return {
      node: {
        kind: `chunk(${inner.node.kind})`,
        params: shownParams({ ...p, arm: { kind: p.arm.kind, params: inner.node.params } }),
        fingerprint: { ...own, fetch: p.fetch ?? null, arm: inner.node.fingerprint },
        theoreticalMinScore: inner.node.theoreticalMinScore,
        sendsTextOffMachine: inner.node.sendsTextOffMachine,
        create(ctx): SystemInstance {
          const wrapped = inner.node.create(ctx);
          return {
            async runScope(scope, _inputs, k) {
              const chunks = chunkCorpus(scope.documents, rules);
              const sourceOf = new Map<string, string>();
              for (const c of chunks) {
                if (sourceOf.has(c.doc.id))
                  throw new HarnessError(`chunk: two chunks would share the id "${c.doc.id}"; a document id of this eval set ends in #<n>`);
                sourceOf.set(c.doc.id, c.source);
              }
              const run = await wrapped.runScope(
                derivedScope(
                  scope,
                  chunks.map((c) => c.doc),
                  own,
                ),
                [],
                p.fetch ?? 4 * k,
              );
              return { ...backToSources(run, sourceOf, k), indexStats: { ...run.indexStats, chunks: chunks.length } };
            },
            close: async () => wrapped.close?.(),
          };
        },
      },
    };
  },
};
