import type { JsonValue } from '../../evalset/types.js';

/**
 * Which side of retrieval a text is embedded for. Asymmetric models embed the two differently (bge's query
 * instruction, Voyage's `input_type`), so the role is part of every vector's content address.
 */
export type EmbedRole = 'query' | 'document';

/**
 * Everything that decides the vector a model returns for a text in a role, and nothing secret (no API key,
 * no header, no base URL that carries a token). It is hashed into every content address of the embedding
 * store (`store.ts`), so two arms with equal identities share their vectors, and any change here (a new
 * revision, another prefix, another pooling) gives new addresses instead of stale vectors.
 */
export interface EmbedderIdentity {
  /** Who computes the vectors: `onnx` (transformers.js), `use-lite`, `voyage`, `openai`, ... */
  readonly provider: string;
  /** Hub id, folder name or API model name: `Xenova/bge-large-en-v1.5`, `voyage-3.5`. */
  readonly model: string;
  /**
   * The model's version: a hub revision or commit, a sha256 of the weights for a local folder, an API
   * snapshot name or `unpinned` when the provider gives none (reports show it).
   */
  readonly revision: string;
  readonly dims: number;
  /** `cls`, `mean`, or `provider` when a hosted API pools on its side. */
  readonly pooling: string;
  /** Whether the embedder L2-normalises its output (the store's cosine search normalises anyway). */
  readonly normalize: boolean;
  /** The text prepended to each input of a role, before the model sees it (`''` for none). */
  readonly prefixes: { readonly query: string; readonly document: string };
  /** Anything else that changes the vectors: dtype, max length / truncation, an API `input_type` mapping. */
  readonly extra?: { readonly [key: string]: JsonValue };
}

/**
 * One embedding model, local or hosted: the one small interface every dense arm is built on (see `arm.ts`'s
 * {@link denseArm}, which turns any Embedder into an Arm with a shared, resumable vector store).
 *
 * Contract:
 * - `embed(texts, role)` returns ONE Float32Array of `texts.length * dims` values, row `i` being the vector
 *   of `texts[i]`, in input order. The embedder applies its own role prefix (it is in `identity.prefixes`);
 *   callers pass raw texts.
 * - It may split `texts` further (API limits) but must return all rows or throw: never a partial or
 *   zero-filled result, since the store caches whatever it returns. Throw a HarnessError on a malformed
 *   response (the store then caches nothing).
 * - `batchSize` is how many texts the store hands `embed` per call: also the checkpoint granularity of a
 *   corpus build, so a killed run resumes from the last finished batch.
 * - An empty text is legal and gets a vector (GloVe and USE give a zero or constant vector).
 */
export interface Embedder {
  readonly identity: EmbedderIdentity;
  readonly dims: number;
  readonly batchSize: number;
  embed(texts: readonly string[], role: EmbedRole): Promise<Float32Array>;
  /**
   * Counters the embedder wants in the manifest (tokens billed, requests, retries, cost in USD micro-units):
   * read by the dense arm after each index and merged into its IndexStats. Cumulative since creation.
   */
  usage?(): Readonly<Record<string, number>>;
  close?(): Promise<void>;
}

/** The identity as JSON, for cache keys and manifests. */
export function identityJson(id: EmbedderIdentity): JsonValue {
  return {
    provider: id.provider,
    model: id.model,
    revision: id.revision,
    dims: id.dims,
    pooling: id.pooling,
    normalize: id.normalize,
    prefixes: { query: id.prefixes.query, document: id.prefixes.document },
    extra: id.extra ?? {},
  };
}
