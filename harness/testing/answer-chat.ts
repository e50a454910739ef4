import { type ChatFn, openaiChat } from '../llm/openai.js';
import { chatCompletion } from './chat.js';
import { type Loopback, type LoopbackReply, startLoopback } from './loopback.js';

/**
 * A scripted OpenAI-compatible chat server on 127.0.0.1 and a ChatFn over it through the real SDK client
 * (`openaiChat`), for the answer level's reader and judge tests. `decide` gets each request's prompt (its one
 * user message) and the request's 0-based number, and returns the reply's text (sent as a completion with
 * 7 prompt and 2 completion tokens) or a whole reply (an error status, say).
 */
export interface ScriptedChat {
  readonly server: Loopback;
  readonly chat: ChatFn;
  /** The prompt of every request so far, in order. */
  prompts(): string[];
  /** The decoding of every request so far, in order. */
  decodings(): { readonly temperature: number; readonly maxTokens: number }[];
}

export const SCRIPTED_TOKENS = { prompt: 7, completion: 2 } as const;

type Body = { messages: { content: string }[]; temperature: number; max_tokens: number };

export async function scriptedChat(
  decide: (prompt: string, n: number) => string | LoopbackReply,
  opts: { readonly maxRetries?: number; readonly timeoutMs?: number; readonly model?: string } = {},
): Promise<ScriptedChat> {
  let n = 0;
  const server = await startLoopback((req) => {
    const said = decide((req.json as Body).messages[0]?.content ?? '', n++);
    return typeof said === 'string' ? chatCompletion(said, SCRIPTED_TOKENS) : said;
  });
  const bodies = () => server.requests.filter((r) => r.path.endsWith('/chat/completions')).map((r) => r.json as Body);
  const chat = await openaiChat(
    {
      model: opts.model ?? 'judge-m',
      baseURL: `${server.url}/v1`,
      apiKeyEnv: 'SCRIPTED_CHAT_KEY',
      local: true,
      maxRetries: opts.maxRetries ?? 0,
      timeoutMs: opts.timeoutMs ?? 10_000,
      provider: 'openai',
      concurrency: 4,
      maxConcurrency: 4,
    },
    {},
    'scripted-chat',
  );
  return {
    server,
    chat,
    prompts: () => bodies().map((b) => b.messages[0]?.content ?? ''),
    decodings: () => bodies().map((b) => ({ temperature: b.temperature, maxTokens: b.max_tokens })),
  };
}
