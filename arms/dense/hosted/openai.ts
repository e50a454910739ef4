import { z } from 'zod';
import { HarnessError } from '../../../harness/errors.js';
import { urlCredentialProblem } from '../../../harness/util/redact.js';
import type { ArmFactory } from '../../types.js';
import { COSINE_MIN, denseRequires, denseSearchParams, searchFingerprint } from '../arm.js';
import { embedInBatches, type HostedEmbedder, type HostedUsage, hostedArm, type RawBatch, sanitizedError, timeoutSecondsSchema, usageMeter } from './batch.js';

/**
 * openai-embed: OpenAI's embeddings API through the official `openai` SDK, loaded lazily.
 *
 * Limits (platform.openai.com/docs/api-reference/embeddings/create): at most 2,048 inputs per request, each at
 * most 8,192 tokens, and at most 300,000 tokens summed over a request's inputs. The embeddings models take no
 * role: queries and documents are embedded alike (the role still keys the cache, as for every arm).
 */

/** Native dimensions, whether `dimensions` may shorten them, and list price in USD per 1M tokens, per model. */
export const OPENAI_MODELS: Readonly<Record<string, { dims: number; shortenable: boolean; pricePerMTokens: number }>> = {
  'text-embedding-3-small': { dims: 1536, shortenable: true, pricePerMTokens: 0.02 },
  'text-embedding-3-large': { dims: 3072, shortenable: true, pricePerMTokens: 0.13 },
  'text-embedding-ada-002': { dims: 1536, shortenable: false, pricePerMTokens: 0.1 },
};
const OPENAI_MAX_TOKENS = 300_000;
export const OPENAI_KEY_ENV = 'OPENAI_API_KEY';
/** The SDK's own base-URL variable; read from the arm's environment rather than by the SDK from process.env. */
export const OPENAI_BASE_URL_ENV = 'OPENAI_BASE_URL';
const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export const openaiParams = z
  .object({
    model: z.string().min(1).default('text-embedding-3-small'),
    /** `dimensions` (text-embedding-3 models shorten their vectors to it); absent: the model's native size. */
    dimensions: z.number().int().positive().optional(),
    /**
     * Wire format of the vectors: `base64` (little-endian float32, the SDK's own default, a third of the bytes)
     * or `float` (JSON numbers). Both carry the same float32 values, so it is not part of the identity.
     */
    encoding: z.enum(['base64', 'float']).default('base64'),
    /** API base URL (Azure, a proxy); default $OPENAI_BASE_URL, else OpenAI's. Not part of the identity. */
    baseUrl: z.string().url().optional(),
    /** Inputs per request, at most the API's 2,048. */
    batchSize: z.number().int().min(1).max(2048).default(2048),
    /** Tokens per request; default the API's 300,000. */
    maxTokensPerRequest: z.number().int().positive().max(OPENAI_MAX_TOKENS).default(OPENAI_MAX_TOKENS),
    /** Requests in flight at once. */
    concurrency: z.number().int().min(1).max(64).default(4),
    /** Retries of a 408, 409, 429 or 5xx answer by the SDK, which waits as Retry-After(-ms) says (else backoff). */
    maxRetries: z.number().int().min(0).max(20).default(4),
    timeoutSeconds: timeoutSecondsSchema().default(60),
    /** USD per 1M tokens for the cost column; default the model's list price (see OPENAI_MODELS), else none. */
    pricePerMTokens: z.number().nonnegative().optional(),
    ...denseSearchParams,
  })
  .strict()
  .superRefine((p, ctx) => {
    const credential =
      p.baseUrl === undefined ? undefined : urlCredentialProblem(p.baseUrl, 'the key is read from OPENAI_API_KEY, so remove the credentials from the URL');
    if (credential !== undefined) ctx.addIssue({ code: 'custom', path: ['baseUrl'], message: credential });
    const known = OPENAI_MODELS[p.model];
    if (p.dimensions === undefined && !known)
      ctx.addIssue({
        code: 'custom',
        path: ['dimensions'],
        message: `model "${p.model}" is not one whose dimensions are known (${Object.keys(OPENAI_MODELS).join(', ')}); set dimensions`,
      });
    if (p.dimensions !== undefined && known && (!known.shortenable ? p.dimensions !== known.dims : p.dimensions > known.dims))
      ctx.addIssue({
        code: 'custom',
        path: ['dimensions'],
        message: known.shortenable
          ? `${p.model} returns at most ${known.dims} dimensions`
          : `${p.model} does not take dimensions; remove it (it returns ${known.dims})`,
      });
  });
export type OpenaiParams = z.output<typeof openaiParams>;

export function openaiDims(p: OpenaiParams): number {
  return p.dimensions ?? (OPENAI_MODELS[p.model] as { dims: number }).dims;
}

export function openaiPrice(p: OpenaiParams): number | undefined {
  return p.pricePerMTokens ?? OPENAI_MODELS[p.model]?.pricePerMTokens;
}

/**
 * The Embedder of one openai-embed arm: `embed` splits its texts into requests within the API's limits, sends
 * up to `concurrency` at once through the SDK and validates every answer before returning any vector.
 */
export function openaiEmbedder(p: OpenaiParams, env: NodeJS.ProcessEnv): HostedEmbedder {
  const key = env[OPENAI_KEY_ENV];
  if (!key) throw new HarnessError(`openai-embed needs the environment variable ${OPENAI_KEY_ENV}; set it (its value is never printed)`, { exitCode: 2 });
  const baseURL = p.baseUrl ?? env[OPENAI_BASE_URL_ENV] ?? OPENAI_DEFAULT_BASE_URL;
  const dims = openaiDims(p);
  const usage: HostedUsage = { requests: 0, texts: 0, tokens: 0 };
  const meter = usageMeter(usage, openaiPrice(p));
  type Client = { embeddings: { create(body: object): Promise<unknown> } };
  let client: Promise<Client> | undefined;
  const limits = { maxTexts: p.batchSize, maxTokens: p.maxTokensPerRequest, overheadTokens: 0 };
  return {
    identity: {
      provider: 'openai',
      model: p.model,
      // The API serves one unversioned model per name.
      revision: 'unpinned',
      dims,
      pooling: 'provider',
      normalize: true,
      prefixes: { query: '', document: '' },
    },
    dims,
    // One store batch fans out into `concurrency` requests; it is also the checkpoint a killed run resumes from.
    batchSize: p.batchSize * p.concurrency,
    async embed(texts: readonly string[]): Promise<Float32Array> {
      client ??= import('openai').then(
        ({ default: OpenAI }) =>
          // organization/project come from our arguments only: the SDK would read OPENAI_ORG_ID from process.env.
          new OpenAI({
            apiKey: key,
            baseURL,
            organization: null,
            project: null,
            maxRetries: p.maxRetries,
            timeout: p.timeoutSeconds * 1000,
            logLevel: 'off',
          }) as unknown as Client,
      );
      const c = await client;
      return embedInBatches('openai-embed', texts, { limits, concurrency: p.concurrency, dims, usage }, async (batch): Promise<RawBatch> => {
        let res: { data?: { index?: unknown; embedding?: unknown }[]; usage?: { total_tokens?: unknown; prompt_tokens?: unknown } };
        try {
          // encoding_format is always given, so the SDK returns the wire format as is and we decode (and check) it.
          res = (await c.embeddings.create({
            input: [...batch],
            model: p.model,
            encoding_format: p.encoding,
            ...(p.dimensions === undefined ? {} : { dimensions: p.dimensions }),
          })) as typeof res;
        } catch (err) {
          throw sanitizedError('openai-embed', err, { key, keyEnv: OPENAI_KEY_ENV, baseUrl: baseURL, maxRetries: p.maxRetries });
        }
        const tokens = res?.usage?.total_tokens ?? res?.usage?.prompt_tokens;
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
 * `openai-embed`: OpenAI embeddings (default text-embedding-3-small, optional `dimensions`), cosine top-k over
 * the shared embedding store. The key comes from OPENAI_API_KEY only and is in no fingerprint or cache key.
 */
export const openaiEmbedArm: ArmFactory<typeof openaiParams> = {
  kind: 'openai-embed',
  summary: 'OpenAI embeddings through the openai SDK (text-embedding-3-small, dimensions); sends text to OpenAI',
  params: openaiParams,
  requires: denseRequires(['openai'], [OPENAI_KEY_ENV]),
  // Transport (base URL, wire encoding, batching, concurrency, retries, timeout) and price change no vector.
  fingerprint: (p) => ({ kind: 'openai-embed', v: 1, model: p.model, dims: openaiDims(p), search: searchFingerprint(p) }),
  theoreticalMinScore: () => COSINE_MIN,
  sendsTextOffMachine: () => true,
  create: (id, p, ctx) => hostedArm({ id, ctx, make: () => openaiEmbedder(p, ctx.env), search: p }),
};
