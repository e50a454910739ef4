import { createHash } from 'node:crypto';
import type { LoopbackHandler, LoopbackRequest } from '../../../harness/testing/loopback.js';

/**
 * Loopback handlers speaking the Voyage and OpenAI embeddings APIs, for tests of the hosted arms through their
 * real SDKs. Vectors are word hashes (each word adds ±1 on one dimension), so texts sharing words are near and
 * retrieval over them is meaningful; both sides of a test can recompute them with {@link wordHashVector}.
 */

/** The vector the fake APIs return for `text`: Σ over its lower-cased words w of sign(w) · e_{h(w) mod dims}. */
export function wordHashVector(text: string, dims: number): number[] {
  const v: number[] = new Array<number>(dims).fill(0);
  for (const w of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    const h = createHash('sha256').update(w).digest();
    const j = h.readUInt32LE(0) % dims;
    v[j] = (v[j] as number) + ((h[4] as number) & 1 ? 1 : -1);
  }
  if (!v.some((x) => x !== 0)) v[0] = 1;
  return v;
}

/** Tokens the fake APIs bill per text: its word count, as a stand-in for a tokenizer. */
export function fakeTokens(texts: readonly string[]): number {
  return texts.reduce((n, t) => n + (t.match(/\S+/g)?.length ?? 0), 0);
}

/** POST /v1/embeddings as Voyage answers it: `{ data: [{ embedding, index }], usage: { total_tokens } }`. */
export const voyageApi =
  (defaultDims = 1024): LoopbackHandler =>
  (req: LoopbackRequest) => {
    const body = req.json as { input: string[]; output_dimension?: number };
    const dims = body.output_dimension ?? defaultDims;
    return {
      body: {
        object: 'list',
        data: body.input.map((t, index) => ({ object: 'embedding', embedding: wordHashVector(t, dims), index })),
        model: 'voyage-3.5',
        usage: { total_tokens: fakeTokens(body.input) },
      },
    };
  };

/** Little-endian float32 bytes in base64, the APIs' `encoding_format: base64`. */
export function base64Floats(v: readonly number[]): string {
  return Buffer.from(new Float32Array(v).buffer).toString('base64');
}

/** POST /v1/embeddings as OpenAI answers it, in the encoding asked for (base64 or float). */
export const openaiApi =
  (defaultDims = 1536): LoopbackHandler =>
  (req: LoopbackRequest) => {
    const body = req.json as { input: string[]; dimensions?: number; encoding_format?: string };
    const dims = body.dimensions ?? defaultDims;
    const encode = (v: number[]) => (body.encoding_format === 'base64' ? base64Floats(v) : v);
    const tokens = fakeTokens(body.input);
    return {
      body: {
        object: 'list',
        data: body.input.map((t, index) => ({ object: 'embedding', embedding: encode(wordHashVector(t, dims)), index })),
        model: 'text-embedding-3-small',
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      },
    };
  };
