import { type Loopback, type LoopbackReply, type LoopbackRequest, startLoopback } from '../harness/testing/loopback.js';

/**
 * An OpenAI-compatible chat-completions server on 127.0.0.1 for the end-to-end suites: `POST /v1/chat/completions`
 * answered as the API answers it (id, object, created, model, choices, usage), with the reply text decided by the
 * test from the request's prompt. Failures (a 500, a 429 with Retry-After) can be scripted for the next requests.
 * Other paths get the API's 404, a body without messages its 400.
 */

/** One request the server received, with what it did with it. */
export interface ChatCall {
  /** Milliseconds since the server started. */
  readonly at: number;
  readonly model: string;
  /** The (single) user message. */
  readonly prompt: string;
  /** The openai SDK's `x-stainless-retry-count` header: 0 for a first try. */
  readonly retry: number;
  /** The decoding the client asked for. */
  readonly temperature: number | undefined;
  readonly maxTokens: number | undefined;
  /** The HTTP status sent back. */
  readonly status: number;
  /** The reply text, for a 200. */
  readonly content?: string;
}

export interface ChatServer {
  /** `http://127.0.0.1:<port>/v1`: the base URL a client is given. */
  readonly baseURL: string;
  readonly calls: ChatCall[];
  /** Answers the next requests (in order, whatever they ask) with these failures before asking the decider again. */
  fail(...replies: LoopbackReply[]): void;
  close(): Promise<void>;
}

/** Decides the reply text of one chat request from its prompt and model. */
export type Decide = (prompt: string, model: string) => string;

/** A rough token count, as a server reports usage: a token per four characters. */
const tokens = (text: string) => Math.max(1, Math.ceil(text.length / 4));

export async function startChatServer(decide: Decide): Promise<ChatServer> {
  const t0 = performance.now();
  const calls: ChatCall[] = [];
  const failures: LoopbackReply[] = [];
  let ids = 0;
  const handle = (req: LoopbackRequest): LoopbackReply => {
    if (req.method !== 'POST' || req.path !== '/v1/chat/completions') {
      return {
        status: 404,
        body: { error: { message: `Unknown request URL: ${req.method} ${req.path}`, type: 'invalid_request_error', code: 'unknown_url' } },
      };
    }
    const body = req.json as { model?: unknown; messages?: { role?: unknown; content?: unknown }[]; temperature?: number; max_tokens?: number } | undefined;
    const message = Array.isArray(body?.messages) ? body.messages.find((m) => m.role === 'user') : undefined;
    if (typeof body?.model !== 'string' || typeof message?.content !== 'string') {
      return { status: 400, body: { error: { message: 'model and a user message are required', type: 'invalid_request_error' } } };
    }
    const model = body.model;
    const prompt = message.content;
    const base = {
      at: performance.now() - t0,
      model,
      prompt,
      retry: Number(req.headers['x-stainless-retry-count'] ?? 0),
      temperature: body.temperature,
      maxTokens: body.max_tokens,
    };
    const failure = failures.shift();
    if (failure !== undefined) {
      calls.push({ ...base, status: failure.status ?? 500 });
      return failure;
    }
    const content = decide(prompt, model);
    calls.push({ ...base, status: 200, content });
    return {
      body: {
        id: `chatcmpl-${++ids}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [{ index: 0, finish_reason: 'stop', logprobs: null, message: { role: 'assistant', content, refusal: null } }],
        usage: { prompt_tokens: tokens(prompt), completion_tokens: tokens(content), total_tokens: tokens(prompt) + tokens(content) },
      },
    };
  };
  const server: Loopback = await startLoopback(handle);
  return {
    baseURL: `${server.url}/v1`,
    calls,
    fail: (...replies) => void failures.push(...replies),
    close: () => server.close(),
  };
}

/** An error reply as the API sends it (`{ error: { message, type } }`), for `fail`. */
export function apiError(status: number, message: string, headers: Readonly<Record<string, string>> = {}): LoopbackReply {
  return { status, headers, body: { error: { message, type: status === 429 ? 'rate_limit_exceeded' : 'server_error' } } };
}
