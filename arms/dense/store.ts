import { cacheKey, type CacheKey, type ContentStore, canonicalJson, sha256Hex } from '../../harness/cache/index.js';
import { HarnessError } from '../../harness/errors.js';
import type { Logger } from '../../harness/log.js';
import { type EmbedRole, type Embedder, identityJson } from './embedder.js';

/** Bump to invalidate every stored vector (a change of layout or of what a key means). */
const STORE_VERSION = 1;
const MATRIX_MAGIC = 'harness-vectors 1';

/** Row `i` of `vectors` (`dims` values from `i * dims`) is the vector of `ids[i]`. */
export interface VectorMatrix {
  readonly ids: readonly string[];
  readonly dims: number;
  readonly vectors: Float32Array;
}

/** What one store did since it was made: texts embedded by the model versus read back from the cache. */
export interface EmbedStoreStats {
  computed: number;
  cached: number;
  /** Corpus batches found finished by an earlier (killed) build and reused. */
  resumedBatches: number;
}

/** A Document as the store sees it: an id and the exact text the embedder receives (before its prefix). */
export interface EmbedItem {
  readonly id: string;
  readonly text: string;
}

/**
 * The content-addressed embedding store shared by every dense arm, on top of the harness cache (namespace
 * `embed`). Every address hashes the embedder's {@link identityJson} (model, revision, dims, pooling,
 * normalization, prefixes, extra) with the role and the text, so two arms on the same model share vectors
 * and nothing stale is ever served. Layout (all entries sealed and checksummed by {@link ContentStore}):
 *
 * - **corpus matrix**, one entry per (identity, role, ordered list of (id, text)): the header line
 *   `harness-vectors 1`, a JSON line `{"dims","count","ids"}`, zero padding to a multiple of 4 bytes, then
 *   `count * dims` float32 little-endian values. One file per corpus, not one per document.
 * - **batch checkpoints**, one entry per (identity, role, texts of one batch of `embedder.batchSize`): written
 *   as each batch finishes, so a killed build resumes from the last finished batch; deleted once the matrix
 *   is written. Batch boundaries depend only on the corpus order and the batch size, so a rerun finds them.
 * - **single texts** (queries), one entry per (identity, role, text): `dims` float32 values.
 *
 * Nothing is stored unless the embedder returned exactly `n * dims` finite values.
 */
export class EmbeddingStore {
  readonly stats: EmbedStoreStats = { computed: 0, cached: 0, resumedBatches: 0 };
  private readonly identity;

  constructor(
    private readonly cache: ContentStore,
    private readonly embedder: Embedder,
    private readonly log: Logger,
  ) {
    this.identity = identityJson(embedder.identity);
  }

  /**
   * The vectors of `items` in `role` (documents by default), from the stored matrix when there is one, else
   * embedded batch by batch (resuming from stored checkpoints) with progress on the logger as `label`.
   */
  async corpus(items: readonly EmbedItem[], role: EmbedRole = 'document', label = 'embedding'): Promise<VectorMatrix> {
    const dims = this.embedder.dims;
    const ids = items.map((d) => d.id);
    const key = this.key('matrix', sha256Hex(canonicalJson(items.map((d) => [d.id, d.text]))), role);
    const hit = await this.cache.get('embed', key);
    if (hit !== undefined) {
      const m = decodeMatrix(hit);
      if (typeof m !== 'string' && m.dims === dims && sameIds(m.ids, ids)) {
        this.stats.cached += items.length;
        return m;
      }
      this.log.warn(`cache embed/${key}: ${typeof m === 'string' ? m : 'matrix of another shape or ids'}; evicted, re-embedding`);
      await this.cache.delete('embed', key);
    }
    const vectors = new Float32Array(items.length * dims);
    const size = Math.max(1, this.embedder.batchSize);
    const batchKeys: CacheKey[] = [];
    const progress = this.log.progress(label, items.length);
    for (let start = 0; start < items.length; start += size) {
      const texts = items.slice(start, start + size).map((d) => d.text);
      const bkey = this.key('batch', sha256Hex(canonicalJson(texts)), role);
      batchKeys.push(bkey);
      const stored = await this.cache.get('embed', bkey);
      if (stored !== undefined && stored.byteLength === texts.length * dims * 4) {
        vectors.set(floatsOf(stored), start * dims);
        this.stats.cached += texts.length;
        this.stats.resumedBatches++;
      } else {
        const got = await this.compute(texts, role);
        await this.cache.put('embed', bkey, bytesOf(got));
        vectors.set(got, start * dims);
      }
      progress.tick(texts.length);
    }
    progress.done();
    await this.cache.put('embed', key, encodeMatrix({ ids, dims, vectors }));
    for (const k of batchKeys) await this.cache.delete('embed', k);
    return { ids, dims, vectors };
  }

  /** The vectors of `texts` in `role` (queries by default), one stored entry per text; misses embedded together. */
  async texts(texts: readonly string[], role: EmbedRole = 'query'): Promise<Float32Array> {
    const dims = this.embedder.dims;
    const out = new Float32Array(texts.length * dims);
    const keys = texts.map((t) => this.key('text', sha256Hex(t), role));
    const missing: number[] = [];
    for (let i = 0; i < texts.length; i++) {
      const stored = await this.cache.get('embed', keys[i] as CacheKey);
      if (stored !== undefined && stored.byteLength === dims * 4) {
        out.set(floatsOf(stored), i * dims);
        this.stats.cached++;
      } else missing.push(i);
    }
    const size = Math.max(1, this.embedder.batchSize);
    for (let s = 0; s < missing.length; s += size) {
      const idx = missing.slice(s, s + size);
      const got = await this.compute(
        idx.map((i) => texts[i] as string),
        role,
      );
      for (let j = 0; j < idx.length; j++) {
        const row = got.subarray(j * dims, (j + 1) * dims);
        const i = idx[j] as number;
        out.set(row, i * dims);
        await this.cache.put('embed', keys[i] as CacheKey, bytesOf(row));
      }
    }
    return out;
  }

  private key(entry: 'matrix' | 'batch' | 'text', content: string, role: EmbedRole): CacheKey {
    return cacheKey('embed', STORE_VERSION, { entry, embedder: this.identity, role, content });
  }

  /** One call to the embedder, checked: a short, long or non-finite answer is an error and is never stored. */
  private async compute(texts: readonly string[], role: EmbedRole): Promise<Float32Array> {
    const dims = this.embedder.dims;
    const got = await this.embedder.embed(texts, role);
    const who = `${this.embedder.identity.provider} model ${this.embedder.identity.model}`;
    if (!(got instanceof Float32Array) || got.length !== texts.length * dims) {
      const n = got instanceof Float32Array ? got.length : 'a non-Float32Array value';
      throw new HarnessError(`${who} returned ${n} values for ${texts.length} texts of ${dims} dimensions; nothing was cached`);
    }
    for (let i = 0; i < got.length; i++) {
      if (!Number.isFinite(got[i] as number))
        throw new HarnessError(`${who} returned a non-finite value in row ${Math.floor(i / dims)} of a batch of ${texts.length}; nothing was cached`);
    }
    this.stats.computed += texts.length;
    return got;
  }
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** A copy of `buf` as float32 (a cache payload sits at an arbitrary byte offset, so no view is possible). */
function floatsOf(buf: Uint8Array): Float32Array {
  const out = new Float32Array(buf.byteLength >>> 2);
  new Uint8Array(out.buffer).set(buf.subarray(0, out.length * 4));
  return out;
}

function bytesOf(v: Float32Array): Uint8Array {
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
}

/** The corpus-matrix payload (see {@link EmbeddingStore}); float32 in the platform's (little-endian) order. */
export function encodeMatrix(m: VectorMatrix): Buffer {
  const head = Buffer.from(`${MATRIX_MAGIC}\n${JSON.stringify({ dims: m.dims, count: m.ids.length, ids: m.ids })}\n`, 'utf8');
  const pad = (4 - (head.byteLength % 4)) % 4;
  return Buffer.concat([head, Buffer.alloc(pad), bytesOf(m.vectors)]);
}

/** The matrix in a payload, or what is wrong with it. */
export function decodeMatrix(buf: Buffer): VectorMatrix | string {
  const nl1 = buf.indexOf(0x0a);
  if (nl1 < 0 || buf.subarray(0, nl1).toString('latin1') !== MATRIX_MAGIC) return 'not a vector matrix';
  const nl2 = buf.indexOf(0x0a, nl1 + 1);
  if (nl2 < 0) return 'vector matrix header cut off';
  let head: { dims?: unknown; count?: unknown; ids?: unknown };
  try {
    head = JSON.parse(buf.subarray(nl1 + 1, nl2).toString('utf8')) as typeof head;
  } catch {
    return 'vector matrix header is not JSON';
  }
  const { dims, count, ids } = head;
  if (typeof dims !== 'number' || typeof count !== 'number' || !Array.isArray(ids) || ids.length !== count) return 'vector matrix header malformed';
  const start = nl2 + 1 + ((4 - ((nl2 + 1) % 4)) % 4);
  if (buf.byteLength - start !== count * dims * 4) return `vector matrix holds ${buf.byteLength - start} bytes, expected ${count * dims * 4}`;
  return { ids: ids as string[], dims, vectors: floatsOf(buf.subarray(start)) };
}
