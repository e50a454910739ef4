import pLimit from 'p-limit';
import { z } from 'zod';
import { redactSecrets, redactUrl, urlSecrets } from '../../../harness/util/redact.js';
import { HarnessError } from '../../../harness/errors.js';
import type { Arm } from '../../types.js';
import { MAX_TIMER_MS } from '../../remote/limits.js';
import { type DenseArmOptions, denseArm } from '../arm.js';
import type { Embedder } from '../embedder.js';

/**
 * Shared plumbing of the hosted embedding arms (voyage-embed, openai-embed): request batches within an API's
 * documented limits, a concurrency limit, response validation, usage accounting and error messages that
 * cannot carry a secret. Each provider module supplies one `send` function through its official SDK.
 */

/**
 * Seconds one request may take. The SDKs arm a Node.js timer of that many milliseconds, and a timer longer
 * than MAX_TIMER_MS fires after 1 ms, so a larger value would fail every request at once: refused at load.
 */
export const timeoutSecondsSchema = () =>
  z
    .number()
    .positive()
    .max(MAX_TIMER_MS / 1000, { error: `must be at most ${MAX_TIMER_MS / 1000} (about 24.8 days), the longest timer Node.js can set` });

/** A provider's per-request limits. */
export interface RequestLimits {
  /** Texts per request. */
  readonly maxTexts: number;
  /** Tokens per request, summed over its texts, as the API counts them. */
  readonly maxTokens: number;
  /** Tokens the API adds to each text beyond its own (special tokens, an input-type prompt). */
  readonly overheadTokens: number;
}

/**
 * A conservative token count of `text`: its UTF-8 length in bytes, plus the provider's per-text overhead.
 * Byte-level BPE tokenizers (OpenAI's cl100k/o200k, and Voyage's HF tokenizers with byte fallback) emit at
 * least one byte per token, so a text never has more tokens than bytes; the estimate can only overshoot
 * (English prose runs about 4 bytes per token), which makes batches smaller, never rejected.
 */
export function estimateTokens(text: string, overheadTokens: number): number {
  return Buffer.byteLength(text, 'utf8') + overheadTokens;
}

/**
 * Splits `texts` (by position) into consecutive batches of at most `maxTexts` texts and `maxTokens` estimated
 * tokens. A single text whose estimate alone passes `maxTokens` goes in a batch of its own: the API then
 * judges it (Voyage truncates, OpenAI refuses past 8,192 tokens), rather than the harness dropping it.
 */
export function planBatches(texts: readonly string[], limits: RequestLimits): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  let start = 0;
  let tokens = 0;
  for (let i = 0; i < texts.length; i++) {
    const t = estimateTokens(texts[i] as string, limits.overheadTokens);
    if (i > start && (i - start >= limits.maxTexts || tokens + t > limits.maxTokens)) {
      out.push({ start, end: i });
      start = i;
      tokens = 0;
    }
    tokens += t;
  }
  if (texts.length > start) out.push({ start, end: texts.length });
  return out;
}

/** One response as a provider module hands it over: embeddings with the positions the API gave them. */
export interface RawBatch {
  readonly data: readonly { readonly index: unknown; readonly embedding: unknown }[] | undefined;
  /** Tokens the API billed for the request, when it said. */
  readonly tokens: number | undefined;
}

/** Usage over every request an embedder made: what the manifest and index stats report. */
export interface HostedUsage {
  requests: number;
  texts: number;
  tokens: number;
}

/**
 * A response made into vectors, or a clear error: exactly one embedding per text, each index once, each of
 * `dims` finite numbers. A vector decoded from base64 arrives as a Float32Array or a base64 string.
 */
export function validateBatch(provider: string, raw: RawBatch, count: number, dims: number): Float32Array[] {
  const bad = (why: string) =>
    new HarnessError(`${provider}: malformed response from the embeddings API: ${why}; nothing was cached`, {
      hint: 'check that the base URL points at the real API (or a faithful proxy) and that dimensions matches what the model returns',
    });
  const data = raw.data;
  if (!Array.isArray(data)) throw bad('no data array');
  if (data.length !== count) throw bad(`${data.length} embeddings for ${count} texts`);
  const out = new Array<Float32Array | undefined>(count);
  for (const item of data) {
    const index = item?.index;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count)
      throw bad(`embedding index ${String(index)} is not one of 0..${count - 1}`);
    if (out[index] !== undefined) throw bad(`embedding index ${index} appears twice`);
    const vec = toVector(item.embedding);
    if (vec === undefined) throw bad(`embedding ${index} is neither a list of numbers nor base64 float32`);
    if (vec.length !== dims) throw bad(`embedding ${index} has ${vec.length} dimensions, expected ${dims}`);
    for (let j = 0; j < vec.length; j++) if (!Number.isFinite(vec[j])) throw bad(`embedding ${index} has a non-finite value at dimension ${j}`);
    out[index] = vec;
  }
  return out as Float32Array[];
}

function toVector(e: unknown): Float32Array | undefined {
  if (e instanceof Float32Array) return e;
  if (Array.isArray(e)) return e.every((x) => typeof x === 'number') ? Float32Array.from(e as number[]) : undefined;
  if (typeof e === 'string') {
    // The APIs' base64 is the little-endian float32 bytes of the vector.
    const bytes = Buffer.from(e, 'base64');
    if (bytes.length % 4 !== 0 || bytes.toString('base64').replace(/=+$/, '') !== e.replace(/=+$/, '')) return undefined;
    const v = new Float32Array(bytes.length / 4);
    for (let i = 0; i < v.length; i++) v[i] = bytes.readFloatLE(i * 4);
    return v;
  }
  return undefined;
}

/**
 * Embeds `texts` in planned batches, at most `concurrency` requests in flight, in input order. `send` makes
 * one request through the provider's SDK (which retries 429 and 5xx itself, honouring Retry-After). Every batch
 * is validated before any vector is returned, so a malformed response leaves nothing to cache. A blank text
 * (empty or whitespace) is not sent, since both APIs refuse an empty input: it gets the zero vector, whose
 * cosine with anything is 0, as the local embedders give a text without a known word.
 */
export async function embedInBatches(
  provider: string,
  texts: readonly string[],
  opts: { readonly limits: RequestLimits; readonly concurrency: number; readonly dims: number; readonly usage: HostedUsage },
  send: (batch: readonly string[]) => Promise<RawBatch>,
): Promise<Float32Array> {
  const limit = pLimit(opts.concurrency);
  const rows = texts.flatMap((t, i) => (t.trim() === '' ? [] : [i]));
  const sent = rows.map((i) => texts[i] as string);
  const batches = planBatches(sent, opts.limits);
  // The first failure ends the call: batches still queued are dropped, not sent.
  let failed = false;
  const results = await Promise.all(
    batches.map(({ start, end }) =>
      limit(async (): Promise<Float32Array[]> => {
        if (failed) return [];
        try {
          const slice = sent.slice(start, end);
          const raw = await send(slice);
          const vectors = validateBatch(provider, raw, slice.length, opts.dims);
          opts.usage.requests++;
          opts.usage.texts += slice.length;
          // An API that omits usage is billed by our own upper bound, so cost is never under-reported.
          opts.usage.tokens += raw.tokens ?? slice.reduce((n, t) => n + estimateTokens(t, opts.limits.overheadTokens), 0);
          return vectors;
        } catch (err) {
          failed = true;
          throw err;
        }
      }),
    ),
  );
  const out = new Float32Array(texts.length * opts.dims);
  results.flat().forEach((v, k) => out.set(v, (rows[k] as number) * opts.dims));
  return out;
}

/**
 * Reads of a hosted Embedder's usage, split by phase: `index` (what the dense arm merges into IndexStats after
 * embedding a corpus: `apiRequests`, `apiTexts`, `apiTokens`, `costMicroUsd`) and `search` (the same counters
 * prefixed `query`, read through `Arm.searchStats` once a scope's queries are answered). Each read returns the
 * counts since the previous read of either phase, so the runner's sum over scopes counts every request once.
 * Cost is tokens x USD per 1M tokens in micro-USD (1 USD / 1M tokens = 1 micro-USD per token), absent when no
 * price is known.
 */
export function usageMeter(usage: HostedUsage, pricePerMTokens: number | undefined): (phase: 'index' | 'search') => Record<string, number> {
  const seen: HostedUsage = { requests: 0, texts: 0, tokens: 0 };
  return (phase) => {
    const tokens = usage.tokens - seen.tokens;
    const counts: Record<string, number> = {
      apiRequests: usage.requests - seen.requests,
      apiTexts: usage.texts - seen.texts,
      apiTokens: tokens,
      ...(pricePerMTokens === undefined ? {} : { costMicroUsd: tokens * pricePerMTokens }),
    };
    Object.assign(seen, usage);
    if (phase === 'index') return counts;
    return Object.fromEntries(Object.entries(counts).map(([k, v]) => [`query${k[0]?.toUpperCase()}${k.slice(1)}`, v]));
  };
}

/** An Embedder of a hosted API, with the usage of its query embeddings readable apart. */
export interface HostedEmbedder extends Embedder {
  readonly searchUsage: () => Record<string, number>;
}

/**
 * The Arm of a hosted embedding kind: the dense arm over the Embedder `make` builds (on the first index), with
 * the API usage of each scope's query embeddings reported as search stats.
 */
export function hostedArm(opts: Omit<DenseArmOptions, 'load'> & { readonly make: () => HostedEmbedder }): Arm {
  let embedder: HostedEmbedder | undefined;
  // Hosted APIs take many texts per request: one embedding call per batch of queries, not one per query.
  const arm = denseArm({
    ...opts,
    batchQueries: true,
    load: async () => {
      embedder = opts.make();
      return embedder;
    },
  });
  // The dense arm's own search stats (an ANN index's recall) stay beside the API usage.
  const own = arm.searchStats?.bind(arm);
  return Object.assign(arm, { searchStats: async () => ({ ...(await own?.()), ...(embedder?.searchUsage() ?? {}) }) });
}

/**
 * An SDK failure as a HarnessError that carries no secret: the HTTP status (or, when none came back, the base
 * URL with any credentials in it redacted) and the API's own short error message, with the key and any bearer
 * token blanked out, cut to 300 characters. The SDK error is not kept as
 * `cause`: its fields hold request options and raw responses that `--verbose` would print.
 */
export function sanitizedError(
  provider: string,
  err: unknown,
  opts: { readonly key: string; readonly keyEnv: string; readonly baseUrl: string; readonly maxRetries: number },
): HarnessError {
  const { key, keyEnv, baseUrl, maxRetries } = opts;
  if (err instanceof HarnessError) return err;
  const e = err as { status?: unknown; statusCode?: unknown; message?: unknown; name?: unknown; code?: unknown };
  const status = typeof e.status === 'number' ? e.status : typeof e.statusCode === 'number' ? e.statusCode : undefined;
  let detail = typeof e.message === 'string' ? e.message : String(err);
  // The SDK may quote the base URL rewritten (a slash added, user info decoded): its credentials go one by one.
  detail = redactSecrets(detail.split(baseUrl).join(redactUrl(baseUrl)), [key, ...urlSecrets(baseUrl)])
    .replace(/\s+/g, ' ')
    .slice(0, 300);
  const what =
    status === undefined
      ? `request to ${redactUrl(baseUrl)} failed (${typeof e.name === 'string' ? e.name : 'error'}${typeof e.code === 'string' ? ` ${e.code}` : ''})`
      : `HTTP ${status}${status === 429 || status >= 500 ? ` after ${maxRetries} retries` : ''}`;
  return new HarnessError(`${provider}: embeddings API ${what}: ${detail}`, {
    hint:
      status === undefined && /time(d)?\s?out/i.test(`${String(e.name)} ${detail}`)
        ? 'the API did not answer within timeoutSeconds; raise it, or lower batchSize'
        : status === 401 || status === 403
          ? `check the key in ${keyEnv}`
          : status === 429 || (status !== undefined && status >= 500)
            ? 'the service is overloaded or failing; raise maxRetries, lower concurrency, or try later (finished batches are cached)'
            : 'check the base URL, the model name and the dimensions',
  });
}
