import { type AttemptFailure, attemptOnce, type ChatClientOptions, clientLimiter, requestOptions, type SentReply, withRetries } from './attempt.js';
import { realClock } from './limiter.js';
import { endpointSecrets, openaiSdk } from './sdk.js';
import type { ChatEndpoint, ChatFn, ChatReply, Decoding } from './types.js';

export { type AttemptFailure, type ChatClientOptions, chatFailure, publicBaseURL } from './attempt.js';
export type { ChatEndpoint, ChatFn, ChatReply, Decoding } from './types.js';

/** The reply of one successful completion, or why it cannot be used (no choices at all is a broken reply). */
export function completionReply(res: unknown): ChatReply | AttemptFailure {
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

/** The body of one chat completion: one user message, the decoding asked for, no streaming. */
export function completionBody(model: string, prompt: string, decoding: Decoding) {
  return {
    model,
    messages: [{ role: 'user' as const, content: prompt }],
    ...(decoding.temperature === undefined ? {} : { temperature: decoding.temperature }),
    ...(decoding.maxTokens === undefined ? {} : { max_tokens: decoding.maxTokens }),
    stream: false as const,
  };
}

type CreateFn = (body: object, options: object) => { withResponse(): Promise<SentReply> };

/**
 * A chat function over the real `openai` SDK, for any OpenAI-compatible server. A missing key is a config error
 * naming the variable (a local server that needs none gets a placeholder). Retries are counted here, not in the
 * SDK, so a failure names the real number of attempts and each reason; never the key, the request body or
 * credentials of the base URL. All calls share one adaptive limiter; `inFlight` is its ceiling. `tag` is
 * ignored: calls sent one by one are drawn independently anyway.
 */
export async function openaiChat(ep: ChatEndpoint, env: NodeJS.ProcessEnv, source: string, opts: ChatClientOptions = {}): Promise<ChatFn> {
  const client = await openaiSdk(ep, env, source, opts.who ?? 'judge');
  const secrets = endpointSecrets(ep, env);
  const create = client.chat.completions.create.bind(client.chat.completions) as unknown as CreateFn;
  const clock = opts.clock ?? realClock;
  const limiter = clientLimiter(ep, opts);
  const chat = async (prompt: string, decoding: Decoding) => {
    const body = completionBody(ep.model, prompt, decoding);
    const attempt = (n: number) =>
      attemptOnce((signal) => create(body, requestOptions(ep, signal, n)).withResponse(), completionReply, ep.timeoutMs, secrets, clock);
    return withRetries(ep, attempt, limiter, clock);
  };
  return Object.assign(chat, { inFlight: ep.maxConcurrency });
}
