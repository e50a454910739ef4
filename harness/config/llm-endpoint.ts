import { join } from 'node:path';
import { z } from 'zod';
import { timeoutMsSchema } from '../../arms/remote/limits.js';
import { DEFAULT_KEY_ENV } from '../llm/sdk.js';
import type { BatchSettings, ChatEndpoint, ProviderName } from '../llm/types.js';

/**
 * The fields every config block that names a model shares (the relevance judge, the answer reader and judge):
 * who serves it, how calls reach it one by one, and whether they go through the provider's batch API instead.
 */

export const providerSchema = z.enum(['openai', 'anthropic']).default('openai');

/** `batch: true`, or the batch API's settings; absent or false: calls go one by one. */
export const batchBlockSchema = z
  .union([
    z.boolean(),
    z
      .object({
        /** Seconds between two polls of a batch's status. */
        pollSeconds: z.number().positive().default(30),
        /** Requests per batch; default and most the provider's limit (OpenAI 50,000; Anthropic 100,000). */
        maxRequests: z.number().int().positive().optional(),
        /** Bytes of one batch's requests; default the provider's limit (OpenAI 200 MB; Anthropic 256 MB). */
        maxBytes: z.number().int().positive().optional(),
        /** Milliseconds without a new call before the calls waiting are submitted as a batch. */
        idleMs: z.number().int().min(0).default(2000),
        /** A request that failed or expired in a batch is submitted again at most this many times. */
        maxResubmits: z.number().int().min(0).default(2),
        /**
         * Calls a stage keeps waiting at once, each holding its prompt in memory (about 8 KB a judged pair): 20,000
         * keeps a 100,000-pair judging under 1 GB in batches of 20,000; more runs more of a study per round of
         * batches, at more memory (at most `maxRequests`).
         */
        inFlight: z.number().int().positive().default(20_000),
      })
      .strict(),
  ])
  .default(false);

export type BatchBlock = z.output<typeof batchBlockSchema>;

/** The shape shared by every model-naming block; each block adds its own fields and defaults. */
export const endpointShape = {
  provider: providerSchema,
  /** Calls in flight at the start. */
  concurrency: z.number().int().positive().default(4),
  /**
   * The most calls in flight the rate limiter raises to while the server keeps up. Default: 4x `concurrency` (at
   * most 64) for a hosted endpoint, `concurrency` for a local one (a local server sends no rate-limit signals).
   */
  maxConcurrency: z.number().int().positive().optional(),
  batch: batchBlockSchema,
} as const;

/** A provider's batch limits: requests and bytes per batch. */
const BATCH_LIMITS: Readonly<Record<ProviderName, { readonly maxRequests: number; readonly maxBytes: number }>> = {
  openai: { maxRequests: 50_000, maxBytes: 200_000_000 },
  anthropic: { maxRequests: 100_000, maxBytes: 256_000_000 },
};

/** The key variable a block names, else its provider's (OPENAI_API_KEY, ANTHROPIC_API_KEY). */
export function keyEnvOf(b: { readonly provider: ProviderName; readonly apiKeyEnv?: string | undefined }): string {
  return b.apiKeyEnv ?? DEFAULT_KEY_ENV[b.provider];
}

/** The batch settings of a block, its ledger under the cache folder; undefined when calls go one by one. */
export function batchSettingsOf(batch: BatchBlock, provider: ProviderName, ledgerDir: string): BatchSettings | undefined {
  if (batch === false) return undefined;
  const b = batch === true ? batchBlockSchema.parse({}) : batch;
  if (typeof b === 'boolean') throw new Error('unreachable: batch defaults parse to an object');
  const limits = BATCH_LIMITS[provider];
  return {
    pollMs: b.pollSeconds * 1000,
    maxRequests: Math.min(b.maxRequests ?? limits.maxRequests, limits.maxRequests),
    maxBytes: Math.min(b.maxBytes ?? limits.maxBytes, limits.maxBytes),
    idleMs: b.idleMs,
    maxResubmits: b.maxResubmits,
    ledgerDir,
    inFlight: b.inFlight,
  };
}

/** What a block says of its endpoint, as the fields are named in every block. */
export interface EndpointBlock {
  readonly provider: ProviderName;
  readonly model: string;
  readonly baseURL?: string | undefined;
  readonly apiKeyEnv?: string | undefined;
  readonly local: boolean;
  readonly maxRetries: number;
  readonly timeoutMs: number;
  readonly concurrency: number;
  readonly maxConcurrency?: number | undefined;
  readonly batch: BatchBlock;
}

/** The ledger folder of one stage's batches (`judge`, `answer-reader`, ...): each stage keeps its own. */
export function batchLedgerDir(cacheDir: string, stage: string): string {
  return join(cacheDir, 'batches', stage);
}

/**
 * The endpoint a block describes, its batch ledger under the cache folder in the stage's own folder; `batch`
 * forces the batch API on (the verbs' `--batch`).
 */
export function chatEndpointOf(b: EndpointBlock, cacheDir: string, opts: { readonly stage: string; readonly batch?: boolean }): ChatEndpoint {
  const batch = batchSettingsOf(opts.batch === true && b.batch === false ? true : b.batch, b.provider, batchLedgerDir(cacheDir, opts.stage));
  return {
    provider: b.provider,
    model: b.model,
    ...(b.baseURL === undefined ? {} : { baseURL: b.baseURL }),
    apiKeyEnv: keyEnvOf(b),
    local: b.local,
    maxRetries: b.maxRetries,
    timeoutMs: b.timeoutMs,
    concurrency: b.concurrency,
    maxConcurrency: Math.max(b.concurrency, b.maxConcurrency ?? (b.local ? b.concurrency : Math.min(64, 4 * b.concurrency))),
    ...(batch === undefined ? {} : { batch }),
  };
}

/** USD per million input and output tokens of one model, and the share a batch takes off (both providers: half). */
export const priceSchema = z
  .object({
    input: z.number().min(0),
    output: z.number().min(0),
    batchDiscount: z.number().min(0).max(1).default(0.5),
  })
  .strict();

export type PriceEntry = z.output<typeof priceSchema>;

export { timeoutMsSchema };
