import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { memoryLogger } from '../log.js';
import { BATCH_TEST_ENV, type BatchLoopback, loopbackBatchEndpoint, numberedPrompts, startBatchLoopback } from '../testing/batch-loopback.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { tempDir } from '../testing/temp.js';
import { anthropicBatchApi } from './anthropic-batch.js';
import { batchChat } from './batch.js';
import { type LedgerBatch, ledgerPath } from './ledger.js';
import { openaiBatchApi } from './openai-batch.js';
import type { ChatReply, ProviderName } from './types.js';

/** Issue 44: a batched run killed with SIGKILL while its batch runs pays for nothing twice when it is run again. */

const PROMPTS = 30;
const answer = (prompt: string) => `the answer to "${prompt}"`;
const servers: BatchLoopback[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

/** Runs batchChat over the prompts in this process, against `url`, with the ledger in `ledgerDir`. */
async function runHere(provider: ProviderName, url: string, ledgerDir: string): Promise<ChatReply[]> {
  const ep = loopbackBatchEndpoint(provider, url, ledgerDir);
  const api =
    provider === 'anthropic' ? await anthropicBatchApi(ep, BATCH_TEST_ENV, 'test', 'judge') : await openaiBatchApi(ep, BATCH_TEST_ENV, 'test', 'judge');
  const chat = batchChat(api, ep, { log: memoryLogger(), label: 'again' });
  return Promise.all(numberedPrompts(PROMPTS).map((p) => chat(p, { temperature: 0, maxTokens: 8 })));
}

/** The ledger's batches, or none while it is not written yet. */
function ledgerBatches(provider: ProviderName, url: string, ledgerDir: string): LedgerBatch[] {
  const path = ledgerPath(ledgerDir, loopbackBatchEndpoint(provider, url, ledgerDir));
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as { batches: LedgerBatch[] }).batches : [];
}

describe('a batched run killed with SIGKILL', () => {
  it.each(['openai', 'anthropic'] as const)(
    '%s: the rerun attaches to the batch the ledger names; every request submitted once, replies as an uninterrupted run',
    async (provider) => {
      const server = await startBatchLoopback({ answer });
      servers.push(server);
      server.hold();
      const ledgerDir = tempDir('batch-kill');
      const out = join(tempDir('batch-kill-out'), 'replies.json');
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', join(PROJECT_ROOT, 'harness', 'testing', 'batch-child.ts'), provider, server.url, ledgerDir, String(PROMPTS), out],
        // tsx resolves from the working folder, so the child starts in the project; every path it gets is absolute.
        { cwd: PROJECT_ROOT, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => void (stderr += c.toString()));
      const exited = new Promise((res) => child.on('exit', res));
      const deadline = Date.now() + 40_000;
      while (!ledgerBatches(provider, server.url, ledgerDir).some((b) => b.id !== undefined) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      expect(
        ledgerBatches(provider, server.url, ledgerDir).map((b) => [b.state, b.customIds.length]),
        `the child never recorded a batch id:\n${stderr}`,
      ).toEqual([['in_progress', PROMPTS]]);
      child.kill('SIGKILL');
      await exited;
      expect(existsSync(out)).toBe(false);
      server.release();

      const again = await runHere(provider, server.url, ledgerDir);
      expect(server.submitted.size).toBe(PROMPTS);
      expect([...server.submitted.values()].every((n) => n === 1)).toBe(true);
      expect(server.batchIds).toHaveLength(1);

      const fresh = await startBatchLoopback({ answer });
      servers.push(fresh);
      expect(again).toEqual(await runHere(provider, fresh.url, tempDir('batch-kill-fresh')));
      expect(again.map((r) => r.content)).toEqual(numberedPrompts(PROMPTS).map(answer));
    },
    60_000,
  );
});
