import { type AttemptFailure, attemptOnce, type ChatClientOptions, clientLimiter, requestOptions, type SentReply, withRetries } from './attempt.js';
import { realClock } from './limiter.js';
import { anthropicSdk, endpointSecrets } from './sdk.js';
import { ANTHROPIC_DEFAULT_MAX_TOKENS, type ChatEndpoint, type ChatFn, type ChatReply, type Decoding } from './types.js';

/**
 * The reply of one Messages API call: its text blocks joined (a reply may split its text, and thinking or tool
 * blocks are not the answer), the tokens it reports, and the model it names. A reply that is not a message, or
 * holds no content list, is broken.
 */
export function messageReply(res: unknown): ChatReply | AttemptFailure {
  const r = res as { type?: unknown; content?: unknown; usage?: { input_tokens?: unknown; output_tokens?: unknown }; model?: unknown };
  if (r.type !== 'message' || !Array.isArray(r.content)) {
    return { status: 200, reason: 'HTTP 200 with no message content in the reply', retryable: true };
  }
  const text = (r.content as { type?: unknown; text?: unknown }[])
    .filter((b) => b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('');
  const tokens = (n: unknown) => (typeof n === 'number' ? n : 0);
  return {
    content: text,
    promptTokens: tokens(r.usage?.input_tokens),
    completionTokens: tokens(r.usage?.output_tokens),
    ...(typeof r.model === 'string' && r.model !== '' ? { model: r.model } : {}),
  };
}

/** The body of one Messages API call: one user message, the decoding asked for. */
export function messageBody(model: string, prompt: string, decoding: Decoding) {
  return {
    model,
    max_tokens: decoding.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
    ...(decoding.temperature === undefined ? {} : { temperature: decoding.temperature }),
    messages: [{ role: 'user' as const, content: prompt }],
  };
}

type CreateFn = (body: object, options: object) => { withResponse(): Promise<SentReply> };

/**
 * A chat function over Anthropic's Messages API through `@anthropic-ai/sdk`, with the same contract as
 * `openaiChat`: a missing key is a config error naming the variable, retries are counted here (429, 529
 * overloaded and 5xx retried, Retry-After honoured), each attempt is cut at `timeoutMs` to the last byte,
 * failures never name the key, and all calls share one adaptive limiter fed by the `anthropic-ratelimit-*`
 * headers. The reply's `model` is the model the server says served it.
 */
export async function anthropicChat(ep: ChatEndpoint, env: NodeJS.ProcessEnv, source: string, opts: ChatClientOptions = {}): Promise<ChatFn> {
  const client = await anthropicSdk(ep, env, source, opts.who ?? 'judge');
  const secrets = endpointSecrets(ep, env);
  const create = client.messages.create.bind(client.messages) as unknown as CreateFn;
  const clock = opts.clock ?? realClock;
  const limiter = clientLimiter(ep, opts);
  const chat = async (prompt: string, decoding: Decoding) => {
    const body = messageBody(ep.model, prompt, decoding);
    const attempt = (n: number) =>
      attemptOnce((signal) => create(body, requestOptions(ep, signal, n)).withResponse(), messageReply, ep.timeoutMs, secrets, clock);
    return withRetries(ep, attempt, limiter, clock);
  };
  return Object.assign(chat, { inFlight: ep.maxConcurrency });
}
