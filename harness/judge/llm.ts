import { MAX_TIMER_MS } from '../../arms/remote/limits.js';
import { ConfigError, HarnessError } from '../errors.js';
import { redactSecrets, urlSecrets } from '../util/redact.js';

/**
 * Where an OpenAI-compatible chat endpoint lives and how to reach it. The key is read from the environment
 * variable `apiKeyEnv` at call time and kept only inside the SDK client: it is never part of a cache key, a
 * fingerprint, a manifest, a log line or an error message.
 */
export interface ChatEndpoint {
  readonly model: string;
  /** Default: the OpenAI API. Any OpenAI-compatible server (llama.cpp, vLLM, Ollama) works. */
  readonly baseURL?: string;
  readonly apiKeyEnv: string;
  /** Declared by the user: the endpoint runs on this machine or network, so sensitive documents may go to it. */
  readonly local: boolean;
  /** Further attempts after a connection error, a timeout, 408, 409, 429 or 5xx, honouring Retry-After / retry-after-ms. */
  readonly maxRetries: number;
  /** How long one attempt may take from the request to the last byte of the reply (not only to its headers). */
  readonly timeoutMs: number;
}

export interface Decoding {
  readonly temperature: number;
  readonly maxTokens: number;
}

export interface ChatReply {
  readonly content: string;
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** The model as the server's reply names it (a dated snapshot of the model asked for, say); absent when it names none. */
  readonly model?: string;
}

/** One chat completion: a single user message in, the first choice's text out. */
export type ChatFn = (prompt: string, decoding: Decoding) => Promise<ChatReply>;

/** The base URL as provenance may show it: without credentials, query or fragment. */
export function publicBaseURL(baseURL: string | undefined): string {
  if (baseURL === undefined) return 'https://api.openai.com/v1';
  try {
    const u = new URL(baseURL);
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/$/, '')}`;
  } catch {
    return '(unparsable base URL)';
  }
}

/** Why one attempt failed: the HTTP status when one came back, the reason, whether another attempt may help. */
export interface AttemptFailure {
  readonly status?: number;
  readonly reason: string;
  readonly retryable: boolean;
  /** What the server asked to wait before the next attempt (Retry-After / retry-after-ms), when it did. */
  readonly waitMs?: number;
}

/** The longest Retry-After honoured; a longer one (or none) falls back to exponential backoff. */
const MAX_RETRY_AFTER_MS = 60_000;

/** The wait the server asked for, from `retry-after-ms` or `Retry-After` (seconds or an HTTP date). */
function retryAfter(headers: Headers | undefined): number | undefined {
  const ms = Number.parseFloat(headers?.get('retry-after-ms') ?? '');
  const raw = headers?.get('retry-after') ?? '';
  const secs = Number.parseFloat(raw);
  const wait = !Number.isNaN(ms) ? ms : !Number.isNaN(secs) ? secs * 1000 : raw === '' ? Number.NaN : Date.parse(raw) - Date.now();
  return wait >= 0 && wait <= MAX_RETRY_AFTER_MS ? wait : undefined;
}

/** Exponential backoff before retry `n` (0-based), as the SDK waits: 0.5 s doubling to 8 s, up to 25% less. */
function backoffMs(n: number): number {
  return Math.min(500 * 2 ** n, 8000) * (1 - Math.random() * 0.25);
}

/** A status the SDK would retry: the server's `x-should-retry` when it says, else 408, 409, 429 and 5xx. */
function retryableStatus(status: number, headers: Headers | undefined): boolean {
  const said = headers?.get('x-should-retry');
  if (said === 'true' || said === 'false') return said === 'true';
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** The error code at the bottom of a connection error's cause chain (ECONNREFUSED, ECONNRESET, ...). */
function causeCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e !== null && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** One failed attempt as a reason that names no secret: status, the server's short message, or the transport's code. */
function failureOf(err: unknown, timedOut: boolean, timeoutMs: number, secrets: readonly string[]): AttemptFailure {
  if (timedOut) return { reason: `no complete reply within ${timeoutMs} ms (timeoutMs)`, retryable: true };
  const e = err as { status?: unknown; headers?: Headers; error?: { message?: unknown }; message?: unknown; name?: unknown };
  const clean = (text: string) => redactSecrets(text, secrets).replace(/\s+/g, ' ').slice(0, 200);
  if (typeof e.status === 'number') {
    const said = typeof e.error?.message === 'string' ? e.error.message : typeof e.message === 'string' ? e.message.replace(/^\d{3}\s*/, '') : '';
    const waitMs = retryAfter(e.headers);
    return {
      status: e.status,
      reason: `HTTP ${e.status}${said === '' ? '' : ` (${clean(said)})`}`,
      retryable: retryableStatus(e.status, e.headers),
      ...(waitMs === undefined ? {} : { waitMs }),
    };
  }
  // The SDK's errors are named by their class (their `name` is plain Error); it is loaded lazily, so no instanceof.
  const kind = (err as { constructor?: { name?: string } } | null)?.constructor?.name;
  if (kind === 'APIConnectionTimeoutError') return { reason: `no complete reply within ${timeoutMs} ms (timeoutMs)`, retryable: true };
  if (kind === 'APIConnectionError') {
    return { reason: `connection failed (${causeCode(err) ?? clean(String(e.message))})`, retryable: true };
  }
  if (err instanceof SyntaxError) return { reason: 'the reply is not valid JSON', retryable: false };
  return { reason: clean(`${String(e.name ?? 'Error')}: ${String(e.message ?? err)}`), retryable: false };
}

/** The attempts of one failed chat completion as one line: each reason, repeats folded (`2 x HTTP 503`). */
function reasonsLine(failures: readonly AttemptFailure[]): string {
  const runs: [string, number][] = [];
  for (const f of failures) {
    const last = runs[runs.length - 1];
    if (last && last[0] === f.reason) last[1]++;
    else runs.push([f.reason, 1]);
  }
  return runs.map(([r, n]) => (n === 1 ? r : `${n} x ${r}`)).join(', then ');
}

/**
 * The error of a chat completion whose attempts all failed: the server, the model, the real number of
 * attempts, each reason, and why it stopped (retries used up, or a failure no retry can fix).
 */
export function chatFailure(ep: ChatEndpoint, failures: readonly AttemptFailure[]): HarnessError {
  const last = failures[failures.length - 1] as AttemptFailure;
  const n = failures.length;
  const why = last.retryable ? `maxRetries ${ep.maxRetries} used up` : `${last.status === undefined ? 'this failure' : `HTTP ${last.status}`} is not retried`;
  const status = last.status;
  return new HarnessError(
    `${publicBaseURL(ep.baseURL)}: chat completion with model ${ep.model} failed after ${n} attempt${n === 1 ? '' : 's'} (${why}): ${reasonsLine(failures)}`,
    {
      hint:
        status === 401 || status === 403
          ? `check ${ep.apiKeyEnv}`
          : /within \d+ ms/.test(last.reason)
            ? 'the server did not finish a reply in time: raise timeoutMs, lower concurrency, or check the server'
            : 'check that the server is up and the model name is right',
    },
  );
}

/** The reply of one successful completion, or why it cannot be used (no choices at all is a broken reply). */
function replyOf(res: unknown): ChatReply | AttemptFailure {
  const r = res as { choices?: unknown; usage?: { prompt_tokens?: number; completion_tokens?: number }; model?: unknown };
  if (!Array.isArray(r.choices) || r.choices.length === 0) {
    return { status: 200, reason: 'HTTP 200 with no choices in the reply', retryable: true };
  }
  const content = (r.choices[0] as { message?: { content?: unknown } } | undefined)?.message?.content;
  return {
    content: typeof content === 'string' ? content : '',
    promptTokens: r.usage?.prompt_tokens ?? 0,
    completionTokens: r.usage?.completion_tokens ?? 0,
    ...(typeof r.model === 'string' && r.model !== '' ? { model: r.model } : {}),
  };
}

type CreateFn = (body: object, options: object) => PromiseLike<unknown>;

/**
 * The SDK's own timer, a second past the deadline so the deadline decides; capped at the longest wait a
 * Node.js timer keeps, since a longer one would fire after 1 ms and fail every attempt.
 */
function sdkTimeoutMs(ep: ChatEndpoint): number {
  return Math.min(ep.timeoutMs + 1000, MAX_TIMER_MS);
}

/**
 * One attempt, cut at `timeoutMs` from the request to the last byte: the SDK's own timeout stops at the headers,
 * so a body that stalls after them would hang; here the attempt's signal is aborted at the deadline, and the
 * race ends the attempt even if a transport ignores the abort.
 */
async function attemptOnce(create: CreateFn, ep: ChatEndpoint, body: object, attempt: number, secrets: readonly string[]): Promise<ChatReply | AttemptFailure> {
  const controller = new AbortController();
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
      reject(new Error('deadline'));
    }, ep.timeoutMs);
  });
  const call = Promise.resolve(
    // The SDK's own timer (to the headers only) is set past the deadline, so the deadline always decides.
    create(body, { signal: controller.signal, maxRetries: 0, timeout: sdkTimeoutMs(ep), headers: { 'X-Stainless-Retry-Count': String(attempt) } }),
  );
  // The losing side of the race must not surface as an unhandled rejection.
  call.catch(() => {});
  try {
    return replyOf(await Promise.race([call, deadline]));
  } catch (err) {
    return failureOf(err, timedOut, ep.timeoutMs, secrets);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A chat function over the real `openai` SDK. A missing key is a config error naming the variable (a local
 * server that needs none gets a placeholder). Retries are counted here, not in the SDK, so a failure names the
 * real number of attempts and each reason; never the key, the request body or credentials of the base URL.
 */
export async function openaiChat(ep: ChatEndpoint, env: NodeJS.ProcessEnv, source: string): Promise<ChatFn> {
  const key = env[ep.apiKeyEnv];
  if ((key === undefined || key === '') && !ep.local) {
    throw new ConfigError(source, [`judge: ${ep.apiKeyEnv} is not set; set it, or point baseURL at a local server and declare local: true`]);
  }
  const { default: OpenAI } = await import('openai');
  const client = new OpenAI({
    apiKey: key === undefined || key === '' ? 'no-key-local-server' : key,
    ...(ep.baseURL === undefined ? {} : { baseURL: ep.baseURL }),
    maxRetries: 0,
    timeout: sdkTimeoutMs(ep),
  });
  const secrets = [...(key === undefined ? [] : [key]), ...urlSecrets(ep.baseURL ?? '')];
  const create = client.chat.completions.create.bind(client.chat.completions) as unknown as CreateFn;
  return async (prompt, decoding) => {
    const body = {
      model: ep.model,
      messages: [{ role: 'user', content: prompt }],
      temperature: decoding.temperature,
      max_tokens: decoding.maxTokens,
      stream: false,
    };
    const failures: AttemptFailure[] = [];
    for (let attempt = 0; attempt <= ep.maxRetries; attempt++) {
      const r = await attemptOnce(create, ep, body, attempt, secrets);
      if (!('reason' in r)) return r;
      failures.push(r);
      if (!r.retryable || attempt === ep.maxRetries) break;
      await new Promise((resolve) => setTimeout(resolve, r.waitMs ?? backoffMs(attempt)));
    }
    throw chatFailure(ep, failures);
  };
}
