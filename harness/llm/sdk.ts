import { MAX_TIMER_MS } from '../../arms/remote/limits.js';
import { ConfigError } from '../errors.js';
import { urlSecrets } from '../util/redact.js';
import type { ChatEndpoint } from './types.js';

/** The default key variable of each provider, when the config names none. */
export const DEFAULT_KEY_ENV = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' } as const;

/**
 * The endpoint's key from the environment. A missing key is a config error of `source` naming the variable (and
 * `who`, the config block asking); a server declared local that needs none gets a placeholder.
 */
export function endpointKey(ep: ChatEndpoint, env: NodeJS.ProcessEnv, source: string, who: string): string {
  const key = env[ep.apiKeyEnv];
  if (key !== undefined && key !== '') return key;
  if (ep.local) return 'no-key-local-server';
  throw new ConfigError(source, [`${who}: ${ep.apiKeyEnv} is not set; set it, or point baseURL at a local server and declare local: true`]);
}

/** What error messages must never show: the key and any credentials in the base URL. */
export function endpointSecrets(ep: ChatEndpoint, env: NodeJS.ProcessEnv): string[] {
  const key = env[ep.apiKeyEnv];
  return [...(key === undefined || key === '' ? [] : [key]), ...urlSecrets(ep.baseURL ?? '')];
}

/**
 * The SDK's own timer, a second past the deadline so the deadline decides; capped at the longest wait a
 * Node.js timer keeps, since a longer one would fire after 1 ms and fail every attempt.
 */
export function sdkTimeoutMs(ep: ChatEndpoint): number {
  return Math.min(ep.timeoutMs + 1000, MAX_TIMER_MS);
}

/** The `openai` SDK client of an endpoint; retries are counted by the caller, never by the SDK. */
export async function openaiSdk(ep: ChatEndpoint, env: NodeJS.ProcessEnv, source: string, who: string): Promise<import('openai').OpenAI> {
  const apiKey = endpointKey(ep, env, source, who);
  const { default: OpenAI } = await import('openai');
  return new OpenAI({ apiKey, ...(ep.baseURL === undefined ? {} : { baseURL: ep.baseURL }), maxRetries: 0, timeout: sdkTimeoutMs(ep) });
}

/**
 * The `@anthropic-ai/sdk` client of an endpoint; retries are counted by the caller. Its base URL is the server's
 * root (the SDK appends `/v1/messages`), e.g. http://127.0.0.1:8080 for a loopback server.
 */
export async function anthropicSdk(ep: ChatEndpoint, env: NodeJS.ProcessEnv, source: string, who: string): Promise<import('@anthropic-ai/sdk').Anthropic> {
  const apiKey = endpointKey(ep, env, source, who);
  const { default: Anthropic } = await import('@anthropic-ai/sdk');
  return new Anthropic({ apiKey, ...(ep.baseURL === undefined ? {} : { baseURL: ep.baseURL }), maxRetries: 0, timeout: sdkTimeoutMs(ep) });
}
