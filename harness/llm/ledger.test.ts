import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HarnessError } from '../errors.js';
import { tempDir } from '../testing/temp.js';
import { BatchCallError } from './batch.js';
import { describeLedger, Ledger, ledgerPath, newSubmissionToken, submissionTokenTime } from './ledger.js';
import type { BatchApi, ChatEndpoint } from './types.js';

const ep = (over: Partial<ChatEndpoint> = {}): ChatEndpoint => ({
  provider: 'openai',
  model: 'gpt-t',
  apiKeyEnv: 'K',
  local: false,
  maxRetries: 0,
  timeoutMs: 1000,
  concurrency: 1,
  maxConcurrency: 1,
  ...over,
});

describe('the batch ledger', () => {
  it('has one file per provider, public base URL and model; credentials of the base URL do not change or show in its name', () => {
    const names = [
      ep(),
      ep({ provider: 'anthropic' }),
      ep({ model: 'other' }),
      ep({ baseURL: 'http://127.0.0.1:8080/v1' }),
      ep({ baseURL: 'https://api.openai.com/v1' }),
      ep({ baseURL: 'https://bob:s3cretpass@api.openai.com/v1' }),
    ].map((e) => basename(ledgerPath('/l', e)));
    expect(new Set(names.slice(0, 4)).size).toBe(4);
    // No base URL is the provider's own API; credentials in the URL are not part of its identity.
    expect(names[4]).toBe(names[0]);
    expect(names[5]).toBe(names[0]);
    expect(names[0]).toMatch(/^openai-[0-9a-f]{24}\.json$/);
    expect(names[1]).toMatch(/^anthropic-/);
  });

  it('makes submission tokens that carry their time', () => {
    const t = new Date('2026-11-29T00:00:00.000Z');
    const token = newSubmissionToken(t);
    expect(submissionTokenTime(token)).toBe(t.getTime());
    expect(newSubmissionToken(t)).not.toBe(token);
    expect(submissionTokenTime('t1')).toBeUndefined();
  });

  it('keeps every change when changes come faster than the writes, and leaves no temp file', async () => {
    const dir = tempDir('ledger');
    const ledger = await Ledger.open(dir, ep());
    const at = '2026-01-01T00:00:00.000Z';
    await Promise.all(
      Array.from({ length: 12 }, (_, i) => ledger.record({ token: `t${i}`, id: `b${i}`, submittedAt: at, state: 'in_progress', customIds: [`c${i}`] })),
    );
    await Promise.all([ledger.drop('t3'), ledger.record({ token: 't5', id: 'b5', submittedAt: at, state: 'ended', customIds: ['c5'] })]);
    const again = await Ledger.open(dir, ep());
    expect(again.batches.map((b) => `${b.token} ${b.state}`)).toEqual(
      Array.from({ length: 12 }, (_, i) => `t${i} ${i === 5 ? 'ended' : 'in_progress'}`).filter((l) => !l.startsWith('t3 ')),
    );
    expect(again.byId('b7')?.customIds).toEqual(['c7']);
    expect(readdirSync(dir)).toEqual([basename(ledgerPath(dir, ep()))]);
    expect(JSON.parse(readFileSync(ledgerPath(dir, ep()), 'utf8'))).toMatchObject({
      version: 1,
      provider: 'openai',
      baseURL: 'https://api.openai.com/v1',
      model: 'gpt-t',
    });
  });

  it('refuses a damaged ledger, naming the file and what moving it aside costs', async () => {
    const dir = tempDir('ledger');
    const path = ledgerPath(dir, ep());
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, JSON.stringify({ version: 1, batches: [{ token: 't', submittedAt: 'x', state: 'in_progress', customIds: [] }] }));
    const err = (await Ledger.open(dir, ep()).catch((e: unknown) => e)) as HarnessError;
    expect(err).toBeInstanceOf(HarnessError);
    expect(err.message).toBe(`${path}: batch t is in_progress without an id`);
    expect(err.hint).toMatch(/move it aside/);
    await writeFile(path, '{"half');
    await expect(Ledger.open(dir, ep())).rejects.toThrow(`${path}: not a batch ledger (no batches list)`);
  });

  it('describes each batch from the ledger, or live once when given the API', async () => {
    const dir = tempDir('ledger');
    const ledger = await Ledger.open(dir, ep());
    const at = '2026-01-01T00:00:00.000Z';
    await ledger.record({ token: 'tok-a', submittedAt: at, state: 'submitting', customIds: ['a', 'b'] });
    await ledger.record({
      token: 'tok-b',
      id: 'b1',
      submittedAt: at,
      state: 'ended',
      providerState: 'completed',
      counts: { total: 1, succeeded: 1, failed: 0 },
      customIds: ['c'],
    });
    await ledger.record({ token: 'tok-c', id: 'b2', submittedAt: at, state: 'in_progress', providerState: 'in_progress', customIds: ['d'] });
    const lines = await describeLedger(dir, ep());
    expect(lines).toEqual([
      `openai gpt-t: 3 batches in ${ledgerPath(dir, ep())}`,
      `  (no id yet; token tok-a): submitting, no counts yet; 2 requests submitted ${at}`,
      `  b1: ended (completed), 1 succeeded, 0 failed of 1; 1 requests submitted ${at}`,
      `  b2: in_progress (in_progress), no counts yet; 1 requests submitted ${at}`,
    ]);
    const polled: string[] = [];
    const api = {
      provider: 'openai',
      status: async (id: string) => {
        polled.push(id);
        throw new BatchCallError(`openai status of batch ${id} failed: HTTP 503`, true);
      },
    } as unknown as BatchApi;
    const live = await describeLedger(dir, ep(), api);
    expect(polled).toEqual(['b2']);
    expect(live[3]).toBe(
      `  b2: in_progress (in_progress), no counts yet; 1 requests submitted ${at}; status not read: openai status of batch b2 failed: HTTP 503`,
    );
    const empty = tempDir('ledger');
    expect(await describeLedger(empty, ep())).toEqual([`openai gpt-t: 0 batches in ${ledgerPath(empty, ep())}`]);
  });
});
