import { z } from 'zod';
import { COSINE_MIN, denseArm, denseSearchParams, searchFingerprint } from '../dense/arm.js';
import type { Embedder } from '../dense/embedder.js';
import type { ArmFactory } from '../types.js';

/** Bump when a change to tokens, hashing or scoring changes any vector for the same params. */
const ALGORITHM_VERSION = 1;

const TOKEN = /[\p{L}\p{N}]+/gu;
const encoder = new TextEncoder();

/**
 * 32-bit FNV-1a over the UTF-8 bytes of `token` (offset basis 2166136261, prime 16777619; Fowler, Noll and
 * Vo, IETF draft-eastlake-fnv), as an unsigned integer.
 */
export function fnv1a32(token: string): number {
  let h = 0x811c9dc5;
  for (const byte of encoder.encode(token)) {
    h ^= byte;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * The deterministic hashing embedding of the garbanzo recipe (the "hashing trick", Weinberger et al., ICML
 * 2009, doi:10.1145/1553374.1553516): tokens are the maximal runs of letters and digits of the lower-cased text;
 * each token `t` with h = FNV-1a-32(t) adds sign(h) to component `h mod dims`, where sign is -1 when bit 31 of h
 * is set and +1 otherwise (a signed hash keeps collisions unbiased); the vector is then L2-normalised. A text
 * without tokens is the zero vector, whose cosine with anything is 0. `dims` must be a power of two so that
 * `h mod dims` reads the low bits, independent of the sign bit.
 */
export function hashEmbed(text: string, dims = 256): Float32Array {
  const v = new Float32Array(dims);
  const mask = dims - 1;
  for (const m of text.toLowerCase().matchAll(TOKEN)) {
    const h = fnv1a32(m[0]);
    v[h & mask]! += h >>> 31 === 1 ? -1 : 1;
  }
  let norm = 0;
  for (let i = 0; i < dims; i++) norm += v[i]! * v[i]!;
  if (norm > 0) {
    const inv = 1 / Math.sqrt(norm);
    for (let i = 0; i < dims; i++) v[i]! *= inv;
  }
  return v;
}

const params = z
  .object({
    /** Vector length, a power of two (256 in the garbanzo recipe). */
    dims: z
      .number()
      .int()
      .min(2)
      .max(65536)
      .refine((d) => (d & (d - 1)) === 0, { message: 'dims must be a power of two (64, 128, 256, ...)' })
      .default(256),
    ...denseSearchParams,
  })
  .strict();

export type HashEmbedParams = z.output<typeof params>;

/**
 * {@link hashEmbed} as an Embedder (arms/dense/embedder.ts): no model, no prefixes, the same vector for a text
 * in either role. Vectors are computed in microseconds, so batches are large.
 */
export function hashEmbedder(dims: number): Embedder {
  return {
    identity: {
      provider: 'hash-embed',
      model: 'fnv1a-signed',
      revision: `v${ALGORITHM_VERSION}`,
      dims,
      pooling: 'sum',
      normalize: true,
      prefixes: { query: '', document: '' },
    },
    dims,
    batchSize: 4096,
    async embed(texts) {
      const out = new Float32Array(texts.length * dims);
      texts.forEach((t, i) => out.set(hashEmbed(t, dims), i * dims));
      return out;
    },
  };
}

/**
 * `hash-embed`: cosine search over {@link hashEmbed} vectors through the dense arm helper (exact by default,
 * vectors in the shared embedding store). Entirely local and deterministic; a stand-in for a learned embedding
 * that still rewards shared words, not meaning.
 */
export const hashEmbedArm: ArmFactory<typeof params> = {
  kind: 'hash-embed',
  summary: 'deterministic signed FNV-1a hashing embedding (256-d), cosine; no model',
  params,
  fingerprint: (p) => ({ kind: 'hash-embed', v: ALGORITHM_VERSION, dims: p.dims, search: searchFingerprint(p) }),
  theoreticalMinScore: () => COSINE_MIN,
  sendsTextOffMachine: () => false,
  create: (id, p, ctx) => denseArm({ id, ctx, search: p, load: async () => hashEmbedder(p.dims) }),
};
