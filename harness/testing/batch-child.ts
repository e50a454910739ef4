import { writeFile } from 'node:fs/promises';
import { anthropicBatchApi } from '../llm/anthropic-batch.js';
import { batchChat } from '../llm/batch.js';
import { openaiBatchApi } from '../llm/openai-batch.js';
import { stderrLogger } from '../log.js';
import { BATCH_TEST_ENV, loopbackBatchEndpoint, numberedPrompts } from './batch-loopback.js';

/**
 * The child of the kill -9 test of the batch collector (harness/llm/batch-kill.test.ts): runs batchChat over the
 * test's prompts against a batch loopback and writes the replies to a file. Run as
 * `node --import tsx batch-child.ts <provider> <server url> <ledger dir> <prompts> <out file>`; the test kills it while its
 * batch is held.
 */
async function main(): Promise<void> {
  const [provider, url, ledgerDir, n, out] = process.argv.slice(2) as [string, string, string, string, string];
  const ep = loopbackBatchEndpoint(provider === 'anthropic' ? 'anthropic' : 'openai', url, ledgerDir);
  const api =
    ep.provider === 'anthropic' ? await anthropicBatchApi(ep, BATCH_TEST_ENV, 'child', 'judge') : await openaiBatchApi(ep, BATCH_TEST_ENV, 'child', 'judge');
  const chat = batchChat(api, ep, { log: stderrLogger(), label: 'child' });
  const replies = await Promise.all(numberedPrompts(Number(n)).map((p) => chat(p, { temperature: 0, maxTokens: 8 })));
  await writeFile(out, JSON.stringify(replies));
}

await main();
