import { ConfigError, HarnessError } from '../errors.js';

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
  /** SDK retries on connection errors, 408, 409, 429 and 5xx, honouring Retry-After / retry-after-ms. */
  readonly maxRetries: number;
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

/**
 * A chat function over the real `openai` SDK. A missing key is a config error naming the variable (a local
 * server that needs none gets a placeholder); HTTP failures after the SDK's retries are runtime errors that
 * name the status, never the key or the request body.
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
    maxRetries: ep.maxRetries,
    timeout: ep.timeoutMs,
  });
  return async (prompt, decoding) => {
    let res: Awaited<ReturnType<typeof client.chat.completions.create>>;
    try {
      res = await client.chat.completions.create({
        model: ep.model,
        messages: [{ role: 'user', content: prompt }],
        temperature: decoding.temperature,
        max_tokens: decoding.maxTokens,
        stream: false,
      });
    } catch (err) {
      const status = (err as { status?: number }).status;
      throw new HarnessError(
        `${publicBaseURL(ep.baseURL)}: chat completion with model ${ep.model} failed${status === undefined ? '' : ` with HTTP ${status}`} after ${ep.maxRetries} retries`,
        { hint: status === 401 || status === 403 ? `check ${ep.apiKeyEnv}` : 'check that the server is up and the model name is right', cause: err },
      );
    }
    const content = res.choices?.[0]?.message?.content;
    return {
      content: typeof content === 'string' ? content : '',
      promptTokens: res.usage?.prompt_tokens ?? 0,
      completionTokens: res.usage?.completion_tokens ?? 0,
    };
  };
}
