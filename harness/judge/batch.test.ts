import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type BatchLoopback, startBatchLoopback } from '../testing/batch-loopback.js';
import { runCaptured } from '../testing/cli.js';
import { tempFolder } from '../testing/files.js';
import { filesContaining } from '../testing/secret.js';
import type { JudgmentsManifest } from './store.js';

/**
 * Issue 44 through `harness judge`: the pool judged through each provider's batch API gives the qrels of the
 * pool judged one by one, pair for pair; a rerun asks nothing; `--status` lists the batches; a price prices the
 * batched tokens at the discount; a throttling server is waited out one by one.
 */

const KEY = 'sk-judge-batch-secret-0123456789';
let server: BatchLoopback | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A deterministic judge: the grade from the passage's `gN` tag. */
function answer(prompt: string): string {
  const passage = /Passage: ([\s\S]*?)\n\nSplit this problem/.exec(prompt)?.[1] ?? '';
  return `M: 1, T: 1\n##final score: ${/g(\d)/.exec(passage)?.[1] ?? '0'}`;
}

const grades = [0, 1, 2, 3, 1, 0];
const queries = [
  { id: 'q1', text: 'Where does Alex run?', stratum: 'exact' },
  { id: 'q2', text: 'What did Alex buy?', stratum: 'multi-hop' },
];
const corpus = [
  ...queries.flatMap((q) => grades.map((g, i) => ({ id: `${q.id}d${i}`, text: `memory ${i} of ${q.id} g${g}` }))),
  ...queries.map((q) => ({ id: `${q.id}gold`, text: `the answer to ${q.id} g3` })),
];
const run = queries.flatMap((q) => grades.map((_, i) => `${q.id} Q0 ${q.id}d${i} ${i + 1} ${10 - i} A`)).join('\n');

async function fixture(): Promise<string> {
  return tempFolder('judge-batch', {
    'es/corpus.jsonl': corpus.map((d) => JSON.stringify(d)).join('\n'),
    'es/queries.jsonl': queries.map((q) => JSON.stringify({ ...q, qrels: { [`${q.id}gold`]: 3 } })).join('\n'),
    'a.trec': `${run}\n`,
  });
}

const argv = (url: string, out: string, cache: string, extra: readonly string[] = []) => [
  'judge',
  '--runs',
  'a.trec',
  '--evalset',
  'es',
  '--out',
  out,
  '--cache',
  cache,
  '--depth',
  '6',
  '--model',
  'judge-m',
  '--api-key-env',
  'JUDGE_KEY',
  '--base-url',
  url,
  ...extra,
];
const env = { JUDGE_KEY: KEY };
const read = (dir: string, ...p: string[]) => readFileSync(join(dir, ...p), 'utf8');
const manifest = (dir: string, out: string) => JSON.parse(read(dir, out, 'manifest.json')) as JudgmentsManifest;

describe('harness judge --batch', () => {
  it.each(['openai', 'anthropic'] as const)(
    'through %s batches gives the synchronous qrels, asks nothing on a rerun, and shows its batches',
    async (provider) => {
      server = await startBatchLoopback({ answer });
      const dir = await fixture();
      const url = provider === 'openai' ? `${server.url}/v1` : server.url;
      const p = ['--provider', provider];
      const sync = await runCaptured(argv(url, 'sync', 'cache-sync', p), dir, env);
      expect(sync.code, sync.stderr + sync.log.join('\n')).toBe(0);
      expect(server.batchIds).toHaveLength(0);

      const batched = await runCaptured(argv(url, 'batch', 'cache-batch', [...p, '--batch', '--poll-seconds', '0.02']), dir, env);
      expect(batched.code, batched.stderr + batched.log.join('\n')).toBe(0);
      expect(read(dir, 'batch', 'qrels.trec')).toBe(read(dir, 'sync', 'qrels.trec'));
      expect(read(dir, 'batch', 'qrels.trec').trim().split('\n')).toHaveLength(12);
      expect(server.batchIds).toHaveLength(1);
      expect([...server.submitted.values()].every((n) => n === 1)).toBe(true);
      expect(server.submitted.size).toBe(12);
      const m = manifest(dir, 'batch');
      expect(m.judge).toMatchObject({ provider, batch: true });
      // Both runs judged the same pairs with the same judge: the same qrels version.
      expect(m.qrelsVersion).toBe(manifest(dir, 'sync').qrelsVersion);
      expect(m.tokens.batched).toEqual({ prompt: m.tokens.prompt, completion: m.tokens.completion });
      expect(m.servedModels).toEqual(['judge-m-2026-01-01']);

      const again = await runCaptured(argv(url, 'batch', 'cache-batch', [...p, '--batch', '--poll-seconds', '0.02']), dir, env);
      expect(again.code).toBe(0);
      expect(server.batchIds).toHaveLength(1);
      expect(again.out).toMatch(/requests sent: 0;/);

      const status = await runCaptured([...argv(url, 'batch', 'cache-batch', p), '--status'], dir, env);
      expect(status.code).toBe(0);
      expect(status.out).toContain(`${provider} judge-m: 1 batch in`);
      expect(status.out).toContain(`${server.batchIds[0]}: ended`);
      expect(status.out).toMatch(/12 succeeded, 0 failed of 12/);
      // Nothing the runs wrote (ledger, cache, judgments) holds the key.
      expect(filesContaining([dir], KEY)).toEqual([]);
    },
  );

  it('prices batched tokens at the batch discount', async () => {
    server = await startBatchLoopback({ answer });
    const dir = await fixture();
    const config = (batch: boolean) =>
      [
        'name: priced',
        'evalset: { format: memory, path: es }',
        'measures: [nDCG@10]',
        'arms:',
        '  - { id: a, kind: run-file, params: { path: a.trec } }',
        `judgments: ${batch ? 'batch' : 'sync'}`,
        `cache: ${batch ? 'cache-batch' : 'cache-sync'}`,
        'judge:',
        '  model: judge-m',
        `  baseURL: ${server?.url}/v1`,
        '  apiKeyEnv: JUDGE_KEY',
        '  depth: 6',
        '  price: { input: 2, output: 10 }',
        ...(batch ? ['  batch: { pollSeconds: 0.02, idleMs: 20 }'] : []),
      ].join('\n');
    const files = await tempFolder('judge-batch-priced', { 'sync.yaml': config(false), 'batch.yaml': config(true) });
    for (const f of ['es', 'a.trec']) await import('node:fs/promises').then((fs) => fs.cp(join(dir, f), join(files, f), { recursive: true }));
    for (const name of ['sync', 'batch']) {
      const r = await runCaptured(['judge', '--config', `${name}.yaml`], files, env);
      expect(r.code, r.stderr + r.log.join('\n')).toBe(0);
    }
    const sync = manifest(files, 'sync');
    const batch = manifest(files, 'batch');
    expect(batch.tokens.prompt).toBe(sync.tokens.prompt);
    expect(sync.cost).toBeCloseTo((sync.tokens.prompt * 2 + sync.tokens.completion * 10) / 1e6, 12);
    expect(batch.cost).toBeCloseTo((sync.cost as number) / 2, 12);
  });
});

describe('harness judge one by one against a throttling server', () => {
  it('waits out a 429 with Retry-After and a storm of 529s, caches no failed pair, and says so on stderr', async () => {
    server = await startBatchLoopback({ answer });
    const dir = await fixture();
    const overloaded = { status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } };
    server.loopback.enqueue(
      '/v1/messages',
      { status: 429, headers: { 'retry-after': '1' }, body: { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } } },
      ...Array.from({ length: 6 }, () => overloaded),
    );
    const r = await runCaptured(argv(server.url, 'out', 'cache', ['--provider', 'anthropic', '--concurrency', '4', '--max-retries', '6']), dir, env);
    expect(r.code, r.stderr + r.log.join('\n')).toBe(0);
    const said = r.log.join('\n');
    expect(said).toMatch(/server throttled \(HTTP 429\), waiting 1\.0 s/);
    expect(said).toMatch(/HTTP 529/);
    expect(read(dir, 'out', 'qrels.trec').trim().split('\n')).toHaveLength(12);
    // Every grade came from a 200: a rerun reads all twelve from the cache.
    const again = await runCaptured(argv(server.url, 'out2', 'cache', ['--provider', 'anthropic']), dir, env);
    expect(again.out).toMatch(/requests sent: 0; replies from cache: 12;/);
  });
});
