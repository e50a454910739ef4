import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HarnessError } from '../errors.js';
import { memoryLogger } from '../log.js';
import { tempDir } from '../testing/temp.js';
import { BatchCallError, batchChat, batchRequestId, splitBatches } from './batch.js';
import { type LedgerBatch, ledgerPath } from './ledger.js';
import type { BatchApi, BatchRequest, BatchResult, BatchStatus, ChatEndpoint, Decoding } from './types.js';

const DEC: Decoding = { temperature: 0, maxTokens: 16 };

function endpoint(ledgerDir: string, batch: Partial<ChatEndpoint['batch']> = {}): ChatEndpoint {
  return {
    provider: 'openai',
    model: 'm',
    apiKeyEnv: 'K',
    local: true,
    maxRetries: 2,
    timeoutMs: 1000,
    concurrency: 1,
    maxConcurrency: 1,
    batch: { pollMs: 1, maxRequests: 100, maxBytes: 1_000_000, idleMs: 5, maxResubmits: 2, ledgerDir, ...batch },
  };
}

const idOf = (prompt: string, tag?: string) => batchRequestId('openai', 'm', prompt, DEC, tag);

/** How the fake provider ends a request: a reply, a failure (retryable or not) or left out of the results. */
type Fate = 'ok' | 'fail' | 'fatal' | 'missing';

/**
 * A provider in memory: batches end after `polls` status reads; each request's fate is drawn from `fates`
 * (consumed one per submission, then `ok`). It records every submission and status read.
 */
class FakeApi implements BatchApi {
  readonly provider = 'openai' as const;
  readonly submits: { token: string; requests: readonly BatchRequest[] }[] = [];
  readonly statusReads: string[] = [];
  readonly batches = new Map<string, { requests: readonly BatchRequest[]; reads: number; results?: BatchResult[] }>();
  readonly fates = new Map<string, Fate[]>();
  readonly tokens = new Map<string, string>();
  polls = 2;
  onSubmit: (token: string) => void = () => {};
  onStatus: (id: string) => void = () => {};
  submitErrors: Error[] = [];

  requestBytes(r: BatchRequest): number {
    return r.prompt.length;
  }

  async submit(requests: readonly BatchRequest[], token: string): Promise<string> {
    this.onSubmit(token);
    const err = this.submitErrors.shift();
    const id = `b${this.batches.size + 1}`;
    if (err !== undefined && !(err instanceof BatchCallError && err.message.includes('lost reply'))) throw err;
    this.submits.push({ token, requests });
    this.batches.set(id, { requests, reads: 0 });
    this.tokens.set(token, id);
    if (err !== undefined) throw err;
    return id;
  }

  async findSubmitted(token: string): Promise<string | undefined> {
    return this.tokens.get(token);
  }

  async status(id: string): Promise<BatchStatus> {
    this.statusReads.push(id);
    this.onStatus(id);
    const b = this.batches.get(id);
    if (b === undefined) throw new BatchCallError(`no batch ${id}`, false);
    b.reads++;
    const ended = b.reads > this.polls;
    const n = b.requests.length;
    return {
      state: ended ? 'ended' : 'in_progress',
      providerState: ended ? 'completed' : 'in_progress',
      counts: { total: n, succeeded: ended ? n : 0, failed: 0 },
    };
  }

  async *results(id: string): AsyncIterable<BatchResult> {
    const b = this.batches.get(id) as { requests: readonly BatchRequest[]; results?: BatchResult[] };
    b.results ??= b.requests.flatMap((r): BatchResult[] => {
      const fate = this.fates.get(r.customId)?.shift() ?? 'ok';
      if (fate === 'missing') return [];
      if (fate === 'ok') return [{ customId: r.customId, reply: { content: `re: ${r.prompt}`, promptTokens: 3, completionTokens: 2, model: 'm-1' } }];
      return [{ customId: r.customId, failure: fate === 'fail' ? 'HTTP 500 (overloaded)' : 'HTTP 400 (bad request)', retryable: fate === 'fail' }];
    });
    yield* b.results;
  }

  /** A batch the provider already has (an earlier run's), ending after `polls` reads. */
  preload(id: string, prompts: readonly string[]): void {
    this.batches.set(id, { requests: prompts.map((p) => ({ customId: idOf(p), prompt: p, decoding: DEC })), reads: 0 });
  }

  submittedIds(): string[] {
    return this.submits.flatMap((s) => s.requests.map((r) => r.customId));
  }
}

async function writeLedger(ep: ChatEndpoint, batches: readonly LedgerBatch[]): Promise<void> {
  const path = ledgerPath((ep.batch as { ledgerDir: string }).ledgerDir, ep);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, JSON.stringify({ version: 1, provider: 'openai', baseURL: 'x', model: 'm', batches }));
}

function readLedger(ep: ChatEndpoint): LedgerBatch[] {
  return (JSON.parse(readFileSync(ledgerPath((ep.batch as { ledgerDir: string }).ledgerDir, ep), 'utf8')) as { batches: LedgerBatch[] }).batches;
}

const fastSleep = () => new Promise<void>((r) => setTimeout(r, 1));

describe('batchChat', () => {
  it('sends identical concurrent calls as one request, and a tag makes a request of its own', async () => {
    const api = new FakeApi();
    const ep = endpoint(tempDir('batch'));
    const chat = batchChat(api, ep, { log: memoryLogger(), label: 'judge', sleep: fastSleep });
    expect(chat.inFlight).toBe(100);
    const replies = await Promise.all([chat('a', DEC), chat('a', DEC), chat('a', DEC, 's1'), chat('b', DEC)]);
    expect(replies.map((r) => r.content)).toEqual(['re: a', 're: a', 're: a', 're: b']);
    expect(replies[0]).toEqual({ content: 're: a', promptTokens: 3, completionTokens: 2, model: 'm-1', batch: true });
    expect(api.submits).toHaveLength(1);
    expect(api.submittedIds().sort()).toEqual([idOf('a'), idOf('a', 's1'), idOf('b')].sort());
    expect(idOf('a')).toMatch(/^[0-9a-f]{32}$/);
  });

  it('splits a round into batches at maxRequests and at maxBytes', async () => {
    const byCount = new FakeApi();
    const ep = endpoint(tempDir('batch'), { maxRequests: 2 });
    const chat = batchChat(byCount, ep, { log: memoryLogger(), label: 'judge', sleep: fastSleep });
    await Promise.all(['p1', 'p2', 'p3', 'p4', 'p5'].map((p) => chat(p, DEC)));
    expect(byCount.submits.map((s) => s.requests.length)).toEqual([2, 2, 1]);

    const byBytes = new FakeApi();
    const ep2 = endpoint(tempDir('batch'), { maxBytes: 10 });
    const chat2 = batchChat(byBytes, ep2, { log: memoryLogger(), label: 'judge', sleep: fastSleep });
    await Promise.all(['aaaa', 'bbbb', 'cccc', 'dddddddddd'].map((p) => chat2(p, DEC)));
    expect(byBytes.submits.map((s) => s.requests.map((r) => r.prompt))).toEqual([['aaaa', 'bbbb'], ['cccc'], ['dddddddddd']]);
    // A request larger than a whole batch may hold is refused, not submitted.
    await expect(chat2('eeeeeeeeeee', DEC)).rejects.toThrow(/11 bytes exceeds the openai batch maxBytes 10/);
    expect(splitBatches([], { maxRequests: 1, maxBytes: 1 }, () => 1)).toEqual([]);
  });

  it('resubmits failed and unnamed requests up to maxResubmits, then rejects naming the batch, provider and reason', async () => {
    const api = new FakeApi();
    api.fates.set(idOf('flaky'), ['fail']);
    api.fates.set(idOf('gone'), ['missing']);
    api.fates.set(idOf('broken'), ['fail', 'fail', 'fail']);
    api.fates.set(idOf('invalid'), ['fatal']);
    const ep = endpoint(tempDir('batch'), { maxResubmits: 2 });
    const chat = batchChat(api, ep, { log: memoryLogger(), label: 'judge', sleep: fastSleep });
    const [flaky, gone, broken, invalid] = await Promise.allSettled(['flaky', 'gone', 'broken', 'invalid'].map((p) => chat(p, DEC)));
    expect(flaky).toMatchObject({ status: 'fulfilled', value: { content: 're: flaky' } });
    expect(gone).toMatchObject({ status: 'fulfilled', value: { content: 're: gone' } });
    const count = (p: string) => api.submittedIds().filter((id) => id === idOf(p)).length;
    expect([count('flaky'), count('gone'), count('broken'), count('invalid')]).toEqual([2, 2, 3, 1]);
    const brokenErr = (broken as PromiseRejectedResult).reason as HarnessError;
    expect(brokenErr).toBeInstanceOf(HarnessError);
    expect(brokenErr.message).toMatch(
      new RegExp(`judge: request ${idOf('broken')} failed in openai batch b3 \\(after 2 resubmissions; maxResubmits 2\\): HTTP 500 \\(overloaded\\)`),
    );
    expect(((invalid as PromiseRejectedResult).reason as Error).message).toMatch(/failed in openai batch b1: HTTP 400 \(bad request\)/);
  });

  it('attaches a call to a ledger batch still in progress, polling it and never submitting it again', async () => {
    const api = new FakeApi();
    api.preload('old-1', ['x', 'y']);
    const ep = endpoint(tempDir('batch'));
    await writeLedger(ep, [{ token: 't1', id: 'old-1', submittedAt: '2026-01-01T00:00:00.000Z', state: 'in_progress', customIds: [idOf('x'), idOf('y')] }]);
    const log = memoryLogger();
    const chat = batchChat(api, ep, { log, label: 'judge', sleep: fastSleep });
    const [x, z] = await Promise.all([chat('x', DEC), chat('z', DEC)]);
    expect([x.content, z.content]).toEqual(['re: x', 're: z']);
    expect(api.submittedIds()).toEqual([idOf('z')]);
    expect(api.statusReads.filter((id) => id === 'old-1').length).toBe(3);
    expect(log.lines).toContain('judge: resuming openai batch old-1 from the ledger (submitted 2026-01-01T00:00:00.000Z)');
    expect(readLedger(ep).find((b) => b.id === 'old-1')).toMatchObject({
      state: 'ended',
      providerState: 'completed',
      counts: { total: 2, succeeded: 2, failed: 0 },
    });
  });

  it('reads an ended ledger batch back, and submits only what its results hold no success for', async () => {
    const api = new FakeApi();
    api.preload('done-1', ['x', 'y']);
    api.fates.set(idOf('y'), ['fail']);
    const ep = endpoint(tempDir('batch'));
    await writeLedger(ep, [{ token: 't1', id: 'done-1', submittedAt: '2026-01-01T00:00:00.000Z', state: 'ended', customIds: [idOf('x'), idOf('y')] }]);
    const log = memoryLogger();
    const chat = batchChat(api, ep, { log, label: 'judge', sleep: fastSleep });
    const replies = await Promise.all([chat('x', DEC), chat('y', DEC)]);
    expect(replies.map((r) => r.content)).toEqual(['re: x', 're: y']);
    expect(api.submittedIds()).toEqual([idOf('y')]);
    expect(api.statusReads).not.toContain('done-1');
    expect(log.lines).toContain('judge: 1 of 2 replies read back from ended openai batch done-1');
  });

  it('recovers a `submitting` entry through findSubmitted, and frees the requests of one the provider never got', async () => {
    const api = new FakeApi();
    api.preload('found-1', ['x']);
    api.tokens.set('tok-found', 'found-1');
    const ep = endpoint(tempDir('batch'));
    const at = '2026-01-01T00:00:00.000Z';
    await writeLedger(ep, [
      { token: 'tok-found', submittedAt: at, state: 'submitting', customIds: [idOf('x')] },
      { token: 'tok-lost', submittedAt: at, state: 'submitting', customIds: [idOf('y')] },
    ]);
    const chat = batchChat(api, ep, { log: memoryLogger(), label: 'judge', sleep: fastSleep });
    const replies = await Promise.all([chat('x', DEC), chat('y', DEC)]);
    expect(replies.map((r) => r.content)).toEqual(['re: x', 're: y']);
    expect(api.submittedIds()).toEqual([idOf('y')]);
    const ledger = readLedger(ep);
    expect(ledger.map((b) => b.token)).not.toContain('tok-lost');
    expect(ledger.find((b) => b.token === 'tok-found')).toMatchObject({ id: 'found-1', state: 'ended' });
  });

  it('records the batch as submitting before submission and with its id before the first poll', async () => {
    const api = new FakeApi();
    const ep = endpoint(tempDir('batch'));
    const seen: string[] = [];
    api.onSubmit = (token) => seen.push(`submit: ${JSON.stringify(readLedger(ep).map((b) => [b.token === token, b.state, b.id ?? null]))}`);
    api.onStatus = (id) => seen.push(`status: ${JSON.stringify(readLedger(ep).map((b) => [b.id === id, b.state]))}`);
    const chat = batchChat(api, ep, { log: memoryLogger(), label: 'judge', sleep: fastSleep });
    await chat('x', DEC);
    expect(seen[0]).toBe('submit: [[true,"submitting",null]]');
    expect(seen[1]).toBe('status: [[true,"in_progress"]]');
  });

  it('logs one line per state change of a batch, not one per poll', async () => {
    const api = new FakeApi();
    api.polls = 6;
    const log = memoryLogger();
    const chat = batchChat(api, endpoint(tempDir('batch')), { log, label: 'judge', sleep: fastSleep });
    await chat('x', DEC);
    expect(api.statusReads).toHaveLength(7);
    expect(log.lines).toEqual([
      'judge: submitted openai batch b1 (1 requests)',
      'judge: openai batch b1 in_progress: 0 succeeded, 0 failed of 1',
      'judge: openai batch b1 completed: 1 succeeded, 0 failed of 1',
    ]);
  });

  it('retries a submission whose reply was lost without submitting it twice, and rejects on a failure no retry fixes', async () => {
    const api = new FakeApi();
    api.submitErrors = [new BatchCallError('openai submitting a batch failed: connection failed (lost reply)', true)];
    const ep = endpoint(tempDir('batch'));
    const chat = batchChat(api, ep, { log: memoryLogger(), label: 'judge', sleep: fastSleep });
    expect((await chat('x', DEC)).content).toBe('re: x');
    expect(api.submits).toHaveLength(1);

    api.submitErrors = [new BatchCallError('openai submitting a batch failed: HTTP 400 (bad model)', false)];
    await expect(chat('y', DEC)).rejects.toThrow('judge: openai submitting a batch failed: HTTP 400 (bad model)');
    expect(readLedger(ep).map((b) => b.state)).toEqual(['ended']);
  });

  it('rejects every call of a batch whose results cannot be had (rejected at validation)', async () => {
    const api = new FakeApi();
    api.results = async function* () {
      yield* [];
      throw new BatchCallError('openai batch b1 failed validation: invalid_request: bad line', false);
    };
    const chat = batchChat(api, endpoint(tempDir('batch')), { log: memoryLogger(), label: 'judge', sleep: fastSleep });
    const out = await Promise.allSettled([chat('x', DEC), chat('y', DEC)]);
    expect(out.map((o) => (o.status === 'rejected' ? (o.reason as Error).message : 'ok'))).toEqual([
      `judge: request ${idOf('x')} failed in openai batch b1: openai batch b1 failed validation: invalid_request: bad line`,
      `judge: request ${idOf('y')} failed in openai batch b1: openai batch b1 failed validation: invalid_request: bad line`,
    ]);
    expect(api.submits).toHaveLength(1);
  });

  it('retries a status read that failed retryably, and rejects the calls of a batch it cannot poll, leaving the batch in the ledger', async () => {
    const api = new FakeApi();
    const failures = [true, true];
    const status = api.status.bind(api);
    api.status = async (id) => {
      const retryable = failures.shift();
      if (retryable !== undefined) throw new BatchCallError(`openai status of batch ${id} failed: HTTP ${retryable ? 503 : 404}`, retryable);
      return status(id);
    };
    const ep = endpoint(tempDir('batch'));
    const chat = batchChat(api, ep, { log: memoryLogger(), label: 'judge', sleep: fastSleep });
    expect((await chat('x', DEC)).content).toBe('re: x');

    failures.push(false);
    const err = (await chat('y', DEC).catch((e: unknown) => e)) as HarnessError;
    expect(err.message).toBe('judge: openai batch b2: openai status of batch b2 failed: HTTP 404');
    expect(err.hint).toMatch(/stays in the ledger .*; run again to resume it/);
    expect(readLedger(ep).map((b) => `${b.id} ${b.state}`)).toEqual(['b1 ended', 'b2 in_progress']);
  });

  it('keeps collecting rounds while calls arrive after earlier replies', async () => {
    const api = new FakeApi();
    const chat = batchChat(api, endpoint(tempDir('batch')), { log: memoryLogger(), label: 'judge', sleep: fastSleep });
    const first = await chat('x', DEC);
    const again = await chat(`${first.content} (asked again)`, DEC);
    expect(again.content).toBe('re: re: x (asked again)');
    expect(api.submits).toHaveLength(2);
  });
});
