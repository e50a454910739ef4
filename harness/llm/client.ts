import type { Logger } from '../log.js';
import { anthropicBatchApi } from './anthropic-batch.js';
import { anthropicChat } from './anthropic.js';
import { batchChat } from './batch.js';
import { openaiBatchApi } from './openai-batch.js';
import { openaiChat } from './openai.js';
import type { BatchApi, ChatEndpoint, ChatFn } from './types.js';

/** Who asks, for messages: the stage's label on progress lines and the config block a missing key is reported under. */
export interface ClientUse {
  readonly log: Logger;
  readonly label: string;
  readonly who: string;
}

/**
 * The chat function of an endpoint: the provider's batch API when the endpoint has batch settings, else calls one
 * by one under the adaptive rate limiter. Every stage asks through this, so a stage never knows how calls travel.
 */
export async function chatClient(ep: ChatEndpoint, env: NodeJS.ProcessEnv, source: string, use: ClientUse): Promise<ChatFn> {
  if (ep.batch !== undefined) return batchChat(await batchApiOf(ep, env, source, use.who), ep, { log: use.log, label: use.label });
  const opts = { log: use.log, label: use.label, who: use.who };
  return ep.provider === 'anthropic' ? anthropicChat(ep, env, source, opts) : openaiChat(ep, env, source, opts);
}

/** The provider's batch API of an endpoint. */
export function batchApiOf(ep: ChatEndpoint, env: NodeJS.ProcessEnv, source: string, who: string): Promise<BatchApi> {
  return ep.provider === 'anthropic' ? anthropicBatchApi(ep, env, source, who) : openaiBatchApi(ep, env, source, who);
}
