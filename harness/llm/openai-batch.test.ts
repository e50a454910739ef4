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
import { BatchCallError, batchChat, batchRequestId } from './batch.js';
import { describeLedger, Ledger, newSubmissionToken } from './ledger.js';
import { openaiChat } from './openai.js';
import { bodyLines, openaiBatchApi } from './openai-batch.js';
import type { ChatEndpoint, Decoding } from './types.js';

const DEC: Decoding = { temperature: 0, maxTokens: 8 };
const answer = (prompt: string) => `answer to ${prompt.slice(0, 12)}`;

let server: BatchLoopback | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function setup(batch: Partial<NonNullable<ChatEndpoint['batch']>> = {}) {
  server = await startBatchLoopback({ answer });
  const ep = loopbackBatchEndpoint('openai', server.url, tempDir('openai-batch'), batch);
  const api = await openaiBatchApi(ep, BATCH_TEST_ENV, 'test.yaml', 'judge');
  const log = memoryLogger();
  return { server, ep, api, log, chat: batchChat(api, ep, { log, label: 'judge' }) };
}

const idOf = (ep: ChatEndpoint, prompt: string) => batchRequestId('openai', ep.model, prompt, DEC);

describe('openaiBatchApi through the openai SDK', () => {
  it('gives the replies a synchronous call gives, token counts and served model included, each request submitted once', async () => {
    const { server, ep, chat, log } = await setup();
    const prompts = numberedPrompts(6);
    const batched = await Promise.all(prompts.map((p) => chat(p, DEC)));
    const sync = await openaiChat({ ...ep, batch: undefined } as ChatEndpoint, BATCH_TEST_ENV, 'test.yaml');
    for (const [i, p] of prompts.entries()) {
      const { batch, ...reply } = batched[i] as (typeof batched)[number];
      expect(batch).toBe(true);
      expect(reply).toEqual(await sync(p, DEC));
      expect(reply).toEqual({ content: answer(p), promptTokens: loopbackTokens(p), completionTokens: loopbackTokens(answer(p)), model: servedModel('gpt-t') });
    }
    expect([...server.submitted.values()]).toEqual([1, 1, 1, 1, 1, 1]);
    const create = server.loopback.requests.find((r) => r.method === 'POST' && r.path === '/v1/batches')?.json as Record<string, unknown>;
    const [entry] = (await Ledger.open((ep.batch as { ledgerDir: string }).ledgerDir, ep)).batches;
    expect(create).toEqual({
      input_file_id: expect.any(String),
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
      metadata: { harness_token: entry?.token },
    });
    expect(entry).toMatchObject({ id: server.batchIds[0], state: 'ended', providerState: 'completed', counts: { total: 6, succeeded: 6, failed: 0 } });
    const upload = server.loopback.requests.find((r) => r.path === '/v1/files')?.body ?? '';
    expect(upload).toContain('name="purpose"\r\n\r\nbatch');
    const line = JSON.parse(upload.split('\n').find((l) => l.includes('custom_id')) ?? '{}') as Record<string, unknown>;
    expect(line).toEqual({
      custom_id: idOf(ep, prompts[0] as string),
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'gpt-t', messages: [{ role: 'user', content: prompts[0] }], temperature: 0, max_tokens: 8 },
    });
    expect(log.lines.filter((l) => l.includes(server.batchIds[0] as string))).toEqual([
      `judge: submitted openai batch ${server.batchIds[0]} (6 requests)`,
      `judge: openai batch ${server.batchIds[0]} in_progress: 0 succeeded, 0 failed of 6`,
      `judge: openai batch ${server.batchIds[0]} completed: 6 succeeded, 0 failed of 6`,
    ]);
  });

  it('resubmits failed and expired requests, and rejects an invalid one after one submission', async () => {
    const { server, ep, chat, log } = await setup();
    const [a, b, c, d] = numberedPrompts(4) as [string, string, string, string];
    server.failOnce([idOf(ep, a)], 'server');
    server.expireOnce([idOf(ep, b)]);
    server.failOnce([idOf(ep, c)], 'invalid');
    const out = await Promise.allSettled([a, b, c, d].map((p) => chat(p, DEC)));
    expect(out.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((out[0] as PromiseFulfilledResult<{ content: string }>).value.content).toBe(answer(a));
    expect([a, b, c, d].map((p) => server.submitted.get(idOf(ep, p)))).toEqual([2, 2, 1, 1]);
    const first = server.batchIds[0] as string;
    expect(((out[2] as PromiseRejectedResult).reason as Error).message).toBe(
      `judge: request ${idOf(ep, c)} failed in openai batch ${first}: HTTP 400 (loopback invalid failure)`,
    );
    expect(log.lines).toContain(`judge: openai batch ${first} expired: 1 succeeded, 3 failed of 4`);
  });

  it('fails every request of a batch rejected at validation, with the provider errors, without resubmitting', async () => {
    const { server, ep, chat } = await setup();
    server.rejectNext('the model gpt-t does not exist');
    const out = await Promise.allSettled(numberedPrompts(2).map((p) => chat(p, DEC)));
    const id = server.batchIds[0] as string;
    expect(out.map((o) => (o.status === 'rejected' ? (o.reason as Error).message : 'ok'))).toEqual(
      numberedPrompts(2).map(
        (p) =>
          `judge: request ${idOf(ep, p)} failed in openai batch ${id}: openai batch ${id} failed validation: invalid_request at line 1: the model gpt-t does not exist`,
      ),
    );
    expect([...server.submitted.values()]).toEqual([1, 1]);
  });

  it('finds a submission by the token in its metadata, and describes the ledger live', async () => {
    const { server, ep, api } = await setup();
    server.hold();
    const token = newSubmissionToken(new Date());
    const id = await api.submit([{ customId: 'c1', prompt: 'p', decoding: DEC }], token);
    await api.submit([{ customId: 'c2', prompt: 'q', decoding: DEC }], newSubmissionToken(new Date()));
    expect(await api.findSubmitted(token)).toBe(id);
    expect(await api.findSubmitted(newSubmissionToken(new Date()))).toBeUndefined();
    const dir = (ep.batch as { ledgerDir: string }).ledgerDir;
    const ledger = await Ledger.open(dir, ep);
    await ledger.record({ token, id, submittedAt: '2026-01-01T00:00:00.000Z', state: 'in_progress', customIds: ['c1'] });
    const lines = await describeLedger(dir, ep, api);
    expect(lines[1]).toBe(`  ${id}: live validating, 0 succeeded, 0 failed of 1; 1 requests submitted 2026-01-01T00:00:00.000Z`);
    expect((await describeLedger(dir, ep))[1]).toBe(`  ${id}: in_progress, no counts yet; 1 requests submitted 2026-01-01T00:00:00.000Z`);
  });

  it('resumes a batch whose submission a kill left `submitting`, found by the token in its metadata', async () => {
    const { server, ep, api, chat, log } = await setup();
    const [p] = numberedPrompts(1) as [string];
    const token = newSubmissionToken(new Date());
    server.hold();
    const id = await api.submit([{ customId: idOf(ep, p), prompt: p, decoding: DEC }], token);
    const ledger = await Ledger.open((ep.batch as { ledgerDir: string }).ledgerDir, ep);
    await ledger.record({ token, submittedAt: new Date().toISOString(), state: 'submitting', customIds: [idOf(ep, p)] });
    server.release();
    expect((await chat(p, DEC)).content).toBe(answer(p));
    expect(server.submitted.get(idOf(ep, p))).toBe(1);
    expect(log.lines[0]).toBe(`judge: submission ${token} was openai batch ${id}; resuming it`);
  });

  it('names the failure of a batch endpoint without the key, and says whether a retry may help', async () => {
    const { server, api } = await setup();
    const key = BATCH_TEST_ENV.BATCH_TEST_KEY;
    server.loopback.enqueue('/v1/batches/batch_x', { status: 503, body: { error: { message: `overloaded for key ${key}` } } });
    const err = (await api.status('batch_x').catch((e: unknown) => e)) as BatchCallError;
    expect(err).toBeInstanceOf(BatchCallError);
    expect(err.retryable).toBe(true);
    expect(err.message).toBe('openai status of batch batch_x failed: HTTP 503 (overloaded for key [redacted])');
    const missing = (await api.status('batch_y').catch((e: unknown) => e)) as BatchCallError;
    expect([missing.retryable, missing.message]).toEqual([false, 'openai status of batch batch_y failed: HTTP 404 (no such batch)']);
    const gone = await startBatchLoopback({ answer });
    await gone.close();
    const closed = await openaiBatchApi(loopbackBatchEndpoint('openai', gone.url, tempDir('openai-batch')), BATCH_TEST_ENV, 'test.yaml', 'judge');
    const refused = (await closed.status('batch_z').catch((e: unknown) => e)) as BatchCallError;
    expect([refused.retryable, refused.message]).toEqual([true, 'openai status of batch batch_z failed: connection failed (ECONNREFUSED)']);
  });

  it('splits a streamed body into lines across chunk boundaries, multi-byte characters included', async () => {
    const bytes = Buffer.from('{"a":"é"}\n\n{"b":2}\n{"c":3}', 'utf8');
    async function* chunks() {
      for (let i = 0; i < bytes.length; i += 3) yield bytes.subarray(i, i + 3);
    }
    const lines: string[] = [];
    for await (const l of bodyLines(chunks())) lines.push(l);
    expect(lines).toEqual(['{"a":"é"}', '{"b":2}', '{"c":3}']);
  });
});
