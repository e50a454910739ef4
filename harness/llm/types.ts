/**
 * The LLM clients' contract: what every stage that asks a model (relevance judge, answer reader, answer judge,
 * v1 extraction, eval-set generation) sees, whichever provider answers and whether calls go one by one or
 * through the provider's batch API. A stage calls a ChatFn and caches the parsed result; the client decides how
 * the request travels. Keys never appear in any of these values.
 */

/** Who serves the model: any OpenAI-compatible server (OpenAI, vLLM, llama.cpp, Ollama), or Anthropic's Messages API. */
export type ProviderName = 'openai' | 'anthropic';

/**
 * How the model decodes. A field left out is not sent: the server's default (a reasoning model that takes no
 * temperature, say). Anthropic requires a token limit, so there an absent `maxTokens` is sent as
 * {@link ANTHROPIC_DEFAULT_MAX_TOKENS}.
 */
export interface Decoding {
  readonly temperature?: number;
  readonly maxTokens?: number;
}

/** The token limit sent to Anthropic when the stage sets none (its API requires one). */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;

export interface ChatReply {
  readonly content: string;
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** The model as the server's reply names it (a dated snapshot of the model asked for, say); absent when it names none. */
  readonly model?: string;
  /** The reply came through a provider batch API (its tokens are priced at the batch discount). */
  readonly batch?: boolean;
}

/**
 * One chat completion: a single user message in, the first choice's text out. `tag` tells apart requests whose
 * bodies are equal but whose replies must be drawn independently (sample n of a pair at temperature > 0): it is
 * part of a batch request's identity, never sent to the server.
 */
export type ChatFn = ((prompt: string, decoding: Decoding, tag?: string) => Promise<ChatReply>) & {
  /**
   * How many calls the caller should keep in flight: the rate limiter's ceiling for calls sent one by one, a
   * batch's size for batched calls (a batch is submitted when calls stop arriving). Absent: the stage's own
   * `concurrency`.
   */
  readonly inFlight?: number;
};

/** How batched calls travel: the provider's batch API, with the ids of what is submitted kept in a ledger. */
export interface BatchSettings {
  /** Between two polls of a batch's status. */
  readonly pollMs: number;
  /** Requests per batch at most (OpenAI: 50,000; Anthropic: 100,000). */
  readonly maxRequests: number;
  /** Bytes of one batch's requests at most (OpenAI: 200 MB input file; Anthropic: 256 MB). */
  readonly maxBytes: number;
  /** A batch is submitted once no new call arrived for this long, or `maxRequests` are waiting. */
  readonly idleMs: number;
  /** A request that failed or expired in a batch is submitted again at most this many times. */
  readonly maxResubmits: number;
  /** Where the ledger lives: what each submitted batch holds, written before polling so a rerun resumes it. */
  readonly ledgerDir: string;
  /**
   * Calls a stage keeps waiting at once (default `maxRequests`). Each holds its prompt and its pair's state in memory
   * (about 8 KB for a relevance judgment), and the next calls start as earlier ones settle: a larger number puts
   * more of a study into one round of batches, a smaller one bounds memory.
   */
  readonly inFlight?: number;
}

/**
 * Where a model lives and how to reach it. The key is read from the environment variable `apiKeyEnv` at call
 * time and kept only inside the SDK client: it is never part of a cache key, a fingerprint, a manifest, a log
 * line or an error message.
 */
export interface ChatEndpoint {
  readonly provider: ProviderName;
  readonly model: string;
  /** Default: the provider's own API. Any OpenAI-compatible server works for `openai`. */
  readonly baseURL?: string;
  readonly apiKeyEnv: string;
  /** Declared by the user: the endpoint runs on this machine or network, so sensitive documents may go to it. */
  readonly local: boolean;
  /** Further attempts after a connection error, a timeout, 408, 409, 429, 529 or 5xx, honouring Retry-After / retry-after-ms. */
  readonly maxRetries: number;
  /** How long one attempt may take from the request to the last byte of the reply (not only to its headers). */
  readonly timeoutMs: number;
  /** Calls in flight at the start; the limiter raises it while the server keeps up, up to `maxConcurrency`. */
  readonly concurrency: number;
  readonly maxConcurrency: number;
  /** Present: calls go through the provider's batch API. */
  readonly batch?: BatchSettings;
}

/** One request as a batch holds it; `customId` is its identity (a hash of the endpoint, the body and the tag). */
export interface BatchRequest {
  readonly customId: string;
  readonly prompt: string;
  readonly decoding: Decoding;
}

/** A batch's state as the provider reports it: still running, or ended (completed, failed, expired, cancelled). */
export interface BatchStatus {
  readonly state: 'in_progress' | 'ended';
  /** The provider's own word for the state (validating, in_progress, finalizing, completed, expired, ...). */
  readonly providerState: string;
  readonly counts: { readonly total: number; readonly succeeded: number; readonly failed: number };
}

/** One request's outcome in an ended batch. A request the results do not name counts as failed and retryable. */
export type BatchResult =
  | { readonly customId: string; readonly reply: ChatReply }
  | { readonly customId: string; readonly failure: string; readonly retryable: boolean };

/** A provider's batch API, as the batch collector drives it. */
export interface BatchApi {
  readonly provider: ProviderName;
  /** Bytes one request adds to a batch (to split at `maxBytes`). */
  requestBytes(r: BatchRequest): number;
  /** Submits the requests as one batch; `token` is recorded with it where the provider keeps metadata. */
  submit(requests: readonly BatchRequest[], token: string): Promise<string>;
  /** The id of a batch submitted with `token`, when the provider can tell (a run killed between submit and record). */
  findSubmitted(token: string): Promise<string | undefined>;
  status(id: string): Promise<BatchStatus>;
  /** The outcomes of an ended batch, streamed. */
  results(id: string): AsyncIterable<BatchResult>;
}
