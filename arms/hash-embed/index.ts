import { z } from 'zod';
import type { Corpus, Query } from '../../evalset/types.js';
import { HarnessError } from '../../harness/errors.js';
import { compareRanked } from '../../harness/metrics/ranking.js';
import type { Arm, ArmFactory, ScoredDoc } from '../types.js';

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
  })
  .strict();

export type HashEmbedParams = z.output<typeof params>;

/**
 * `hash-embed`: exact cosine search over {@link hashEmbed} vectors of each document's text (title first when
 * present) against the query's. Entirely local and deterministic; a stand-in for a learned embedding that
 * still rewards shared words, not meaning.
 */
export const hashEmbedArm: ArmFactory<typeof params> = {
  kind: 'hash-embed',
  summary: 'deterministic signed FNV-1a hashing embedding (256-d), exact cosine; no model',
  params,
  fingerprint: (p) => ({ kind: 'hash-embed', v: ALGORITHM_VERSION, dims: p.dims }),
  theoreticalMinScore: () => -1,
  sendsTextOffMachine: () => false,
  create(id, p): Arm {
    let ids: string[] = [];
    let matrix = new Float32Array(0);
    let indexed = false;
    return {
      id,
      async index(corpus: Corpus) {
        ids = corpus.map((d) => d.id);
        matrix = new Float32Array(ids.length * p.dims);
        corpus.forEach((d, i) => matrix.set(hashEmbed(d.title ? `${d.title}\n${d.text}` : d.text, p.dims), i * p.dims));
        indexed = true;
        return { documents: ids.length, dims: p.dims };
      },
      async search(query: Query, topK: number): Promise<readonly ScoredDoc[]> {
        if (!indexed) throw new HarnessError(`arm '${id}': search called before index`);
        const q = hashEmbed(query.text, p.dims);
        const hits: ScoredDoc[] = ids.map((docId, i) => {
          let dot = 0;
          const off = i * p.dims;
          for (let j = 0; j < p.dims; j++) dot += q[j]! * matrix[off + j]!;
          return { docId, score: dot };
        });
        hits.sort((a, b) => compareRanked(a.score, a.docId, b.score, b.docId));
        return hits.slice(0, topK);
      },
    };
  },
};
