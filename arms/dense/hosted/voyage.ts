import { z } from 'zod';
import { HarnessError } from '../../../harness/errors.js';
import { urlCredentialProblem } from '../../../harness/util/redact.js';
import type { ArmFactory } from '../../types.js';
import { COSINE_MIN, denseRequires, denseSearchParams, searchFingerprint } from '../arm.js';
import type { EmbedRole } from '../embedder.js';
import { embedInBatches, type HostedEmbedder, type HostedUsage, hostedArm, type RawBatch, sanitizedError, timeoutSecondsSchema, usageMeter } from './batch.js';

/**
 * voyage-embed: Voyage AI's embeddings API through the official `voyageai` SDK, loaded lazily.
 *
 * Limits (docs.voyageai.com/reference/embeddings-api): at most 1,000 texts per request, and a total-token cap
 * per request that depends on the model. Voyage prepends an input-type prompt ("Represent the query for
 * retrieving supporting documents: ") to each text when `input_type` is set, which the token cap counts, hence
 * the per-text overhead below.
 */

/** Native (default) dimensions, per-request token cap and list price in USD per 1M tokens, per model. */
export const VOYAGE_MODELS: Readonly<Record<string, { dims: number; maxTokens: number; pricePerMTokens: number }>> = {
  'voyage-3.5': { dims: 1024, maxTokens: 320_000, pricePerMTokens: 0.06 },
  'voyage-3.5-lite': { dims: 1024, maxTokens: 1_000_000, pricePerMTokens: 0.02 },
  'voyage-3-large': { dims: 1024, maxTokens: 120_000, pricePerMTokens: 0.18 },
  'voyage-code-3': { dims: 1024, maxTokens: 120_000, pricePerMTokens: 0.18 },
};
/** The token cap of models not in the table: Voyage's smallest. */
const UNKNOWN_MODEL_MAX_TOKENS = 120_000;
/** Special tokens plus the input-type prompt, rounded up. */
const VOYAGE_OVERHEAD_TOKENS = 16;
export const VOYAGE_KEY_ENV = 'VOYAGE_API_KEY';
/** Voyage's TypeScript SDK reads no base-URL variable; this one is ours, named after OPENAI_BASE_URL. */
export const VOYAGE_BASE_URL_ENV = 'VOYAGE_BASE_URL';
const VOYAGE_DEFAULT_BASE_URL = 'https://api.voyageai.com/v1';

export const voyageParams = z
  .object({
    model: z.string().min(1).default('voyage-3.5'),
    /** `output_dimension` (256, 512, 1024, 2048 for voyage-3.5); absent: the model's default, which must be known. */
    dimensions: z.number().int().positive().optional(),
    /** Send `input_type` (query / document), as Voyage recommends for retrieval; false sends none. */
    inputType: z.boolean().default(true),
    /** Voyage truncates over-long texts unless false, in which case it refuses them. */
    truncation: z.boolean().default(true),
    /** API base URL (a proxy, a regional endpoint); default $VOYAGE_BASE_URL, else Voyage's. Not part of the identity. */
    baseUrl: z.string().url().optional(),
    /** Texts per request, at most the API's 1,000. */
    batchSize: z.number().int().min(1).max(1000).default(1000),
    /** Tokens per request; default the model's documented cap. */
    maxTokensPerRequest: z.number().int().positive().optional(),
    /** Requests in flight at once. */
    concurrency: z.number().int().min(1).max(64).default(4),
    /** Retries of a 408, 429 or 5xx answer by the SDK, which waits as Retry-After says (else exponential backoff). */
    maxRetries: z.number().int().min(0).max(20).default(4),
    timeoutSeconds: timeoutSecondsSchema().default(60),
    /** USD per 1M tokens for the cost column; default the model's list price (see VOYAGE_MODELS), else none. */
    pricePerMTokens: z.number().nonnegative().optional(),
    ...denseSearchParams,
  })
  .strict()
  .superRefine((p, ctx) => {
    const credential =
      p.baseUrl === undefined ? undefined : urlCredentialProblem(p.baseUrl, 'the key is read from VOYAGE_API_KEY, so remove the credentials from the URL');
    if (credential !== undefined) ctx.addIssue({ code: 'custom', path: ['baseUrl'], message: credential });
    if (p.dimensions === undefined && !Object.hasOwn(VOYAGE_MODELS, p.model))
      ctx.addIssue({
        code: 'custom',
        path: ['dimensions'],
        message: `model "${p.model}" is not one whose default dimensions are known (${Object.keys(VOYAGE_MODELS).join(', ')}); set dimensions`,
      });
  });
export type VoyageParams = z.output<typeof voyageParams>;

export function voyageDims(p: VoyageParams): number {
  return p.dimensions ?? (VOYAGE_MODELS[p.model] as { dims: number }).dims;
}

export function voyagePrice(p: VoyageParams): number | undefined {
  return p.pricePerMTokens ?? VOYAGE_MODELS[p.model]?.pricePerMTokens;
}

/**
 * The Embedder of one voyage-embed arm: `embed` splits its texts into requests within the API's limits, sends
 * up to `concurrency` at once through the SDK and validates every answer before returning any vector.
 */
export function voyageEmbedder(p: VoyageParams, env: NodeJS.ProcessEnv): HostedEmbedder {
  const key = env[VOYAGE_KEY_ENV];
  if (!key) throw new HarnessError(`voyage-embed needs the environment variable ${VOYAGE_KEY_ENV}; set it (its value is never printed)`, { exitCode: 2 });
  const baseUrl = p.baseUrl ?? env[VOYAGE_BASE_URL_ENV] ?? VOYAGE_DEFAULT_BASE_URL;
  const dims = voyageDims(p);
  const usage: HostedUsage = { requests: 0, texts: 0, tokens: 0 };
  const meter = usageMeter(usage, voyagePrice(p));
  let client: Promise<{ embed(req: object, opts: object): Promise<unknown> }> | undefined;
  const limits = {
    maxTexts: p.batchSize,
    maxTokens: p.maxTokensPerRequest ?? VOYAGE_MODELS[p.model]?.maxTokens ?? UNKNOWN_MODEL_MAX_TOKENS,
    overheadTokens: VOYAGE_OVERHEAD_TOKENS,
  };
  return {
    identity: {
      provider: 'voyage',
      model: p.model,
      // The API serves one unversioned model per name.
      revision: 'unpinned',
      dims,
      pooling: 'provider',
      normalize: true,
      prefixes: { query: '', document: '' },
      extra: { inputType: p.inputType, truncation: p.truncation },
    },
    dims,
    // One store batch fans out into `concurrency` requests; it is also the checkpoint a killed run resumes from.
    batchSize: p.batchSize * p.concurrency,
    async embed(texts: readonly string[], role: EmbedRole): Promise<Float32Array> {
      client ??= import('voyageai').then(
        ({ VoyageAIClient }) => new VoyageAIClient({ apiKey: key, baseUrl, maxRetries: p.maxRetries, timeoutInSeconds: p.timeoutSeconds }),
      );
      const c = await client;
      return embedInBatches('voyage-embed', texts, { limits, concurrency: p.concurrency, dims, usage }, async (batch): Promise<RawBatch> => {
        let res: { data?: { index?: unknown; embedding?: unknown }[]; usage?: { totalTokens?: unknown } };
        try {
          res = (await c.embed(
            {
              input: [...batch],
              model: p.model,
              ...(p.inputType ? { inputType: role } : {}),
              truncation: p.truncation,
              ...(p.dimensions === undefined ? {} : { outputDimension: p.dimensions }),
            },
            {},
          )) as typeof res;
        } catch (err) {
          throw sanitizedError('voyage-embed', err, { key, keyEnv: VOYAGE_KEY_ENV, baseUrl: baseUrl, maxRetries: p.maxRetries });
        }
        const tokens = res?.usage?.totalTokens;
        return {
          data: Array.isArray(res?.data) ? res.data.map((d) => ({ index: d?.index, embedding: d?.embedding })) : undefined,
          tokens: typeof tokens === 'number' && Number.isFinite(tokens) ? tokens : undefined,
        };
      });
    },
    usage: () => meter('index'),
    searchUsage: () => meter('search'),
  };
}

/**
 * `voyage-embed`: Voyage AI embeddings (default voyage-3.5 with input_type query / document), cosine top-k over
 * the shared embedding store. The key comes from VOYAGE_API_KEY only and is in no fingerprint or cache key.
 */
export const voyageEmbedArm: ArmFactory<typeof voyageParams> = {
  kind: 'voyage-embed',
  summary: 'Voyage AI embeddings through the voyageai SDK (voyage-3.5, input_type); sends text to Voyage',
  params: voyageParams,
  requires: denseRequires(['voyageai'], [VOYAGE_KEY_ENV]),
  // Transport (base URL, batching, concurrency, retries, timeout) and price change no vector.
  fingerprint: (p) => ({
    kind: 'voyage-embed',
    v: 1,
    model: p.model,
    dims: voyageDims(p),
    inputType: p.inputType,
    truncation: p.truncation,
    search: searchFingerprint(p),
  }),
  theoreticalMinScore: () => COSINE_MIN,
  sendsTextOffMachine: () => true,
  create: (id, p, ctx) => hostedArm({ id, ctx, make: () => voyageEmbedder(p, ctx.env), search: p }),
};
