import { z } from 'zod';
import { HarnessError } from '../errors.js';
import { redactUrl } from '../../evalset/datasets/download.js';
import type { Document } from '../../evalset/types.js';
import { type ChunkRules, chunkSpans, memoriesHeader, V1_CHUNK_RULES } from '../recipes/chunk.js';
import { chunkSources } from '../recipes/extract.js';
import { type Extracted, extractIdentity, extractSchema, extractScope } from './extract.js';
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
    /**
     * v1's LLM extraction stage: the model that turns each session into dated facts, which are chunked instead of
     * the messages. Absent (no model configured): the messages themselves are chunked, a deviation to label.
     */
    extract: extractSchema.optional(),
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
    const own = {
      node: 'chunk',
      v: CHUNK_VERSION,
      size: p.size,
      overlap: p.overlap,
      minBoundary: p.minBoundary,
      separators: [...rules.separators],
      // Chunks of the messages themselves keep the identity they had before the extraction stage.
      ...(p.extract === undefined ? {} : { extract: extractIdentity(p.extract) }),
    };
    const shownExtract = p.extract?.baseURL === undefined ? {} : { extract: { ...p.extract, baseURL: redactUrl(p.extract.baseURL) } };
    return {
      node: {
        kind: p.extract === undefined ? `chunk(${inner.node.kind})` : `chunk(extract, ${inner.node.kind})`,
        params: shownParams({ ...p, arm: { kind: p.arm.kind, params: inner.node.params }, ...shownExtract }),
        fingerprint: { ...own, fetch: p.fetch ?? null, arm: inner.node.fingerprint },
        theoreticalMinScore: inner.node.theoreticalMinScore,
        sendsTextOffMachine: inner.node.sendsTextOffMachine || (p.extract !== undefined && !p.extract.local),
        create(ctx): SystemInstance {
          const wrapped = inner.node.create(ctx);
          return {
            async runScope(scope, _inputs, k) {
              const extracted = p.extract === undefined ? undefined : await extractScope(scope, p.extract, ctx);
              const { chunks, sourceOf } = chunked(extracted?.docs ?? scope.documents.map((doc) => ({ doc })), rules);
              const run = await wrapped.runScope(derivedScope(scope, chunks, own), [], p.fetch ?? 4 * k);
              return { ...backToSources(run, sourceOf, k), indexStats: { ...run.indexStats, ...extracted?.stats, chunks: chunks.length } };
            },
            close: async () => wrapped.close?.(),
          };
        },
      },
    };
  },
};

/**
 * The chunks of every document, headed by their date, and the source ids each stands for: its document, or for
 * a block of extracted facts, the messages of every fact the chunk overlaps.
 */
function chunked(docs: readonly Extracted[], rules: ChunkRules): { chunks: Document[]; sourceOf: Map<string, string | readonly string[]> } {
  const chunks: Document[] = [];
  const sourceOf = new Map<string, string | readonly string[]>();
  for (const { doc, spans } of docs) {
    const header = memoriesHeader(doc.timestamp);
    chunkSpans(doc.text, rules).forEach((s, n) => {
      const id = `${doc.id}#${n}`;
      if (sourceOf.has(id)) throw new HarnessError(`chunk: two chunks would share the id "${id}"; a document id of this eval set ends in #<n>`);
      const body = doc.text.slice(s.start, s.end);
      chunks.push({ ...doc, id, text: header === undefined ? body : `${header}\n${body}` });
      sourceOf.set(id, spans === undefined ? doc.id : chunkSources(spans, s.start, s.end));
    });
  }
  return { chunks, sourceOf };
}
