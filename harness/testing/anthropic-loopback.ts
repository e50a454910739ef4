import { type Loopback, type LoopbackReply, type LoopbackRequest, startLoopback } from './loopback.js';

/**
 * A scripted server of Anthropic's Messages API on 127.0.0.1, for tests of the Anthropic client through the real
 * `@anthropic-ai/sdk`: POST /v1/messages answers with what a test's `decide` says for the request's prompt
 * (its one user message) and 0-based number: a text (sent as a message with MESSAGE_TOKENS usage from the
 * loopback's model) or a whole reply (an error status, say). Point the client's baseURL at `server.url`.
 */
export interface AnthropicLoopback {
  readonly server: Loopback;
  /** The prompt of every Messages request so far, in order. */
  prompts(): string[];
  /** The body of every Messages request so far, in order. */
  bodies(): MessagesBody[];
}

/** A Messages request's body as the client sends it. */
export interface MessagesBody {
  readonly model: string;
  readonly max_tokens: number;
  readonly temperature?: number;
  readonly messages: readonly { readonly role: string; readonly content: string }[];
}

export const MESSAGE_TOKENS = { input: 11, output: 3 } as const;

/** A Messages API reply whose content is `text` in one text block, from `model`, with the given usage. */
export function anthropicMessage(text: string, model: string, tokens: { readonly input: number; readonly output: number } = MESSAGE_TOKENS): LoopbackReply {
  return {
    body: {
      id: 'msg_loopback',
      type: 'message',
      role: 'assistant',
      model,
      content: [{ type: 'text', text }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: tokens.input, output_tokens: tokens.output },
    },
  };
}

/** An error reply in the Messages API's envelope (`rate_limit_error`, `overloaded_error`, ...). */
export function anthropicError(status: number, type: string, message: string, headers: Readonly<Record<string, string>> = {}): LoopbackReply {
  return { status, headers, body: { type: 'error', error: { type, message } } };
}

function promptOf(req: LoopbackRequest): string {
  return (req.json as MessagesBody | undefined)?.messages[0]?.content ?? '';
}

/** Starts the server; `model` is the model its replies name (default `claude-loopback-20250101`). */
export async function anthropicLoopback(
  decide: (prompt: string, n: number) => string | LoopbackReply | Promise<string | LoopbackReply>,
  opts: { readonly model?: string } = {},
): Promise<AnthropicLoopback> {
  let n = 0;
  const model = opts.model ?? 'claude-loopback-20250101';
  const server = await startLoopback(async (req) => {
    if (req.method !== 'POST' || req.path !== '/v1/messages') return anthropicError(404, 'not_found_error', `no route ${req.method} ${req.path}`);
    const said = await decide(promptOf(req), n++);
    return typeof said === 'string' ? anthropicMessage(said, model) : said;
  });
  const messages = () => server.requests.filter((r) => r.path === '/v1/messages');
  return {
    server,
    prompts: () => messages().map(promptOf),
    bodies: () => messages().map((r) => r.json as MessagesBody),
  };
}
