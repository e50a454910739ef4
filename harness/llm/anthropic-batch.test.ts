import { afterEach, describe, expect, it } from 'vitest';
import { memoryLogger } from '../log.js';
import {
  BATCH_TEST_ENV,
  type BatchLoopback,
  loopbackBatchEndpoint,
  loopbackTokens,
  numberedPrompts,
  servedModel,
  startBatchLoopback,
} from '../testing/batch-loopback.js';
import { tempDir } from '../testing/temp.js';
import { anthropicBatchApi, anthropicResultOf } from './anthropic-batch.js';
import { BatchCallError, batchChat, batchRequestId } from './batch.js';
import { anthropicSdk } from './sdk.js';
import type { ChatEndpoint, Decoding } from './types.js';

const DEC: Decoding = { temperature: 0.5, maxTokens: 8 };
const answer = (prompt: string) => `reply: ${prompt.slice(0, 11)}`;

let server: BatchLoopback | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup() {
  server = await startBatchLoopback({ answer });
  const ep = loopbackBatchEndpoint('anthropic', server.url, tempDir('anthropic-batch'));
  const api = await anthropicBatchApi(ep, BATCH_TEST_ENV, 'test.yaml', 'judge');
  const log = memoryLogger();
  return { server, ep, api, log, chat: batchChat(api, ep, { log, label: 'reader' }) };
}

const idOf = (ep: ChatEndpoint, prompt: string) => batchRequestId('anthropic', ep.model, prompt, DEC);

describe('anthropicBatchApi through @anthropic-ai/sdk', () => {
  it('gives the text, token counts and served model of the message, as the Messages API gives them, each request submitted once', async () => {
    const { server, ep, chat, log } = await setup();
    const prompts = numberedPrompts(5);
    const replies = await Promise.all(prompts.map((p) => chat(p, DEC)));
    const client = await anthropicSdk(ep, BATCH_TEST_ENV, 'test.yaml', 'judge');
    for (const [i, p] of prompts.entries()) {
      // The SDK's types no longer list `temperature`; the batch request sends it, so the synchronous one does too.
      const params = { model: ep.model, max_tokens: 8, temperature: 0.5, messages: [{ role: 'user' as const, content: p }] };
      const sync = await client.messages.create(params);
      const text = sync.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
      expect(replies[i]).toEqual({
        content: text,
        promptTokens: sync.usage.input_tokens,
        completionTokens: sync.usage.output_tokens,
        model: sync.model,
        batch: true,
      });
      expect(replies[i]).toMatchObject({ content: answer(p), promptTokens: loopbackTokens(p), model: servedModel('claude-t') });
    }
    expect([...server.submitted.values()]).toEqual([1, 1, 1, 1, 1]);
    const create = server.loopback.requests.find((r) => r.method === 'POST' && r.path === '/v1/messages/batches')?.json as { requests: unknown[] };
    expect(create.requests[0]).toEqual({
      custom_id: idOf(ep, prompts[0] as string),
      params: { model: 'claude-t', max_tokens: 8, temperature: 0.5, messages: [{ role: 'user', content: prompts[0] }] },
    });
    const id = server.batchIds[0] as string;
    expect(log.lines).toEqual([
      `reader: submitted anthropic batch ${id} (5 requests)`,
      `reader: anthropic batch ${id} in_progress: 0 succeeded, 0 failed of 5`,
      `reader: anthropic batch ${id} ended: 5 succeeded, 0 failed of 5`,
    ]);
  });

  it('resubmits errored and expired requests, and rejects an invalid request after one submission', async () => {
    const { server, ep, chat } = await setup();
    const [a, b, c, d] = numberedPrompts(4) as [string, string, string, string];
    server.failOnce([idOf(ep, a)], 'server');
    server.expireOnce([idOf(ep, b)]);
    server.failOnce([idOf(ep, c)], 'invalid');
    const out = await Promise.allSettled([a, b, c, d].map((p) => chat(p, DEC)));
    expect(out.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect([a, b, c, d].map((p) => server.submitted.get(idOf(ep, p)))).toEqual([2, 2, 1, 1]);
    expect(((out[2] as PromiseRejectedResult).reason as Error).message).toBe(
      `reader: request ${idOf(ep, c)} failed in anthropic batch ${server.batchIds[0]}: invalid_request_error (loopback invalid failure)`,
    );
  });

  it('cannot find an interrupted submission (no metadata), and names a failure without the key', async () => {
    const { server, api } = await setup();
    expect(await api.findSubmitted('any')).toBeUndefined();
    const key = BATCH_TEST_ENV.BATCH_TEST_KEY;
    server.loopback.enqueue('/v1/messages/batches/mb_x', { status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: `busy ${key}` } } });
    const err = (await api.status('mb_x').catch((e: unknown) => e)) as BatchCallError;
    expect(err).toBeInstanceOf(BatchCallError);
    expect([err.retryable, err.message]).toEqual([true, 'anthropic status of batch mb_x failed: HTTP 529 (busy [redacted])']);
  });

  it('reads canceled results as retryable failures', () => {
    expect(anthropicResultOf({ custom_id: 'c', result: { type: 'canceled' } })).toEqual({ customId: 'c', failure: 'request canceled', retryable: true });
  });
});
