import { join } from 'node:path';
import type { JsonValue } from '../../evalset/types.js';
import { HarnessError } from '../../harness/errors.js';
import type { Embedder } from '../dense/embedder.js';
import { normalizeRows } from '../dense/exact.js';
import { loadOnnxEmbedder, onnxEmbedArm } from '../dense/onnx.js';
import { EmbeddingStore, type VectorMatrix } from '../dense/store.js';
import { loadUseLite, useLiteArm } from '../dense/use-lite.js';
import { hashEmbedArm, hashEmbedder } from '../hash-embed/index.js';
import type { ArmContext } from '../types.js';
import type { VectorParams } from './params.js';

/**
 * The vector side's embeddings come from the same embedding arm kinds and the same content-addressed store as
 * the dense arms, so one model's vectors feed exact search, LanceDB and pgvector alike (computed once).
 */
const KINDS = { 'onnx-embed': onnxEmbedArm, 'use-lite': useLiteArm, 'hash-embed': hashEmbedArm } as const;

/** The embedding kind's params with its defaults, checked by its own schema (errors name `vector.embed.params`). */
function parsedEmbed(e: VectorParams['embed']) {
  const r = KINDS[e.kind].params.safeParse(e.params);
  if (!r.success) {
    const problems = r.error.issues.map((i) => `vector.embed.params.${i.path.join('.')}: ${i.message}`).join('; ');
    throw new HarnessError(`postgres: ${problems}`, { exitCode: 2, hint: `see \`harness arms\` for the params of ${e.kind}` });
  }
  return r.data;
}

/** Checks the embed params early, at config load (the arm's schema cannot see into another kind's). */
export function checkEmbed(e: VectorParams['embed']): void {
  parsedEmbed(e);
}

/** What identifies the vectors: the embedding kind's own fingerprint. */
export function embedFingerprint(e: VectorParams['embed']): JsonValue {
  // biome-ignore lint/suspicious/noExplicitAny: each kind's fingerprint takes its own params, parsed by its own schema above
  return (KINDS[e.kind].fingerprint as (p: any) => JsonValue)(parsedEmbed(e));
}

async function loadEmbedder(e: VectorParams['embed'], ctx: ArmContext): Promise<Embedder> {
  // biome-ignore lint/suspicious/noExplicitAny: parsed by the kind's own schema
  const p = parsedEmbed(e) as any;
  if (e.kind === 'onnx-embed') return loadOnnxEmbedder(p, { modelDir: join(ctx.cache.root, 'models'), env: ctx.env, log: ctx.log });
  if (e.kind === 'use-lite') return loadUseLite(p);
  return hashEmbedder(p.dims);
}

/** Loads the model on first use and embeds through the shared store; every row comes back L2-normalised. */
export class Vectors {
  private embedder: Embedder | undefined;
  private store: EmbeddingStore | undefined;

  constructor(
    private readonly e: VectorParams['embed'],
    private readonly ctx: ArmContext,
  ) {}

  private async ready(): Promise<{ embedder: Embedder; store: EmbeddingStore }> {
    if (this.embedder === undefined || this.store === undefined) {
      this.embedder = await loadEmbedder(this.e, this.ctx);
      this.store = new EmbeddingStore(this.ctx.cache, this.embedder, this.ctx.log);
    }
    return { embedder: this.embedder, store: this.store };
  }

  async corpus(items: readonly { id: string; text: string }[], label: string): Promise<VectorMatrix & { embedded: number; cached: number }> {
    const { store } = await this.ready();
    const before = { ...store.stats };
    const m = await store.corpus(items, 'document', label);
    normalizeRows(m.vectors, m.dims);
    return { ...m, embedded: store.stats.computed - before.computed, cached: store.stats.cached - before.cached };
  }

  async query(text: string): Promise<Float32Array> {
    const { embedder, store } = await this.ready();
    return normalizeRows(await store.texts([text], 'query'), embedder.dims);
  }

  async close(): Promise<void> {
    await this.embedder?.close?.();
  }
}
