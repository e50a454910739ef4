import { spawn } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BatchLoopback, startBatchLoopback } from '../harness/testing/batch-loopback.js';
import { cleanEnv, type Installed, installPackage, step } from './package.js';

/**
 * Issue 44 from the packed package: `harness judge --batch` of the installed binary, through the official
 * `openai` SDK against a server on 127.0.0.1 speaking OpenAI's Files and Batch endpoints, gets the qrels of the
 * synchronous run; killed with SIGKILL while its batch is in flight, the same command again submits nothing twice
 * and gets the same qrels.
 */

/** A deterministic judge: the grade from the number of letters the query and the passage share, mod 4. */
function answer(prompt: string): string {
  const query = /\nQuery: (.*)\n/.exec(prompt)?.[1] ?? '';
  const passage = /\nPassage: ([\s\S]*?)\n\nSplit this problem/.exec(prompt)?.[1] ?? '';
  const shared = new Set([...query.toLowerCase()].filter((c) => /[a-z]/.test(c) && passage.toLowerCase().includes(c))).size;
  return `M: 1, T: 1\n##final score: ${shared % 4}`;
}

let study: Installed;
let server: BatchLoopback;
const NO_KEY = { OPENAI_API_KEY: undefined };
const judgeArgs = (out: string, cache: string, extra: readonly string[] = []) => [
  'judge',
  '--config',
  'configs/example-judged.yaml',
  '--base-url',
  `${server.url}/v1`,
  '--out',
  out,
  '--cache',
  cache,
  ...extra,
];
const BATCH = ['--batch', '--poll-seconds', '0.05'];
const qrels = (out: string) => readFileSync(join(study.dir, out, 'qrels.trec'), 'utf8');

beforeAll(async () => {
  study = await installPackage();
  cpSync(join(study.pkg, 'configs'), join(study.dir, 'configs'), { recursive: true });
  cpSync(join(study.pkg, 'evalset'), join(study.dir, 'evalset'), { recursive: true });
  server = await startBatchLoopback({ answer });
}, 600_000);

afterAll(async () => {
  await server?.close();
  study?.remove();
});

/** The ledger files of the judge's batches under `cache`, read as text. */
function ledgerTexts(cache: string): string[] {
  const dir = join(study.dir, cache, 'batches', 'judge');
  return existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .map((f) => readFileSync(join(dir, f), 'utf8'))
    : [];
}

describe('harness judge --batch from the installed package', { shuffle: false }, () => {
  let sync = '';

  it('gets the qrels of the synchronous run, in one batch', async () => {
    await step(study, 'judge one by one', judgeArgs('data/j-sync', '.cache-sync'), { env: NO_KEY });
    sync = qrels('data/j-sync');
    expect(sync.trim().split('\n').length).toBeGreaterThan(20);
    expect(server.batchIds).toHaveLength(0);
    const ran = await step(study, 'judge --batch', judgeArgs('data/j-batch', '.cache-batch', BATCH), { env: NO_KEY });
    expect(qrels('data/j-batch')).toBe(sync);
    expect(server.batchIds).toHaveLength(1);
    expect(ran.stderr).toMatch(/batch_\w+/);
    const status = await step(study, 'judge --status', [...judgeArgs('data/j-batch', '.cache-batch'), '--status'], { env: NO_KEY });
    expect(status.stdout).toMatch(/openai qwen2\.5-7b-instruct: 1 batch in /);
    expect(status.stdout).toMatch(/: ended/);
  });

  it('killed with SIGKILL while its batch is in flight, resumes it: nothing is submitted twice, the qrels are the same', async () => {
    const before = server.batchIds.length;
    server.hold();
    const bin = join(study.dir, 'node_modules', '.bin', 'harness');
    const child = spawn(bin, judgeArgs('data/j-kill', '.cache-kill', BATCH), { cwd: study.dir, env: cleanEnv(NO_KEY), stdio: 'ignore' });
    const deadline = Date.now() + 60_000;
    while (!ledgerTexts('.cache-kill').some((t) => /"id": "batch_/.test(t))) {
      if (Date.now() > deadline) throw new Error('the judge never recorded its batch id in the ledger');
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGKILL');
    await new Promise((r) => child.once('close', r));
    expect(server.batchIds).toHaveLength(before + 1);
    const pending = await step(study, 'judge --status', [...judgeArgs('data/j-kill', '.cache-kill'), '--status'], { env: NO_KEY });
    expect(pending.stdout).toMatch(/live (validating|in_progress)/);
    server.release();
    await step(study, 'judge --batch again', judgeArgs('data/j-kill', '.cache-kill', BATCH), { env: NO_KEY });
    expect(server.batchIds).toHaveLength(before + 1);
    expect([...server.submitted.values()].every((n) => n <= 2)).toBe(true);
    // Each pair was submitted once by the first batched run and once by the killed one: never by the rerun.
    expect([...server.submitted.values()].filter((n) => n === 2)).toHaveLength(server.submitted.size);
    expect(qrels('data/j-kill')).toBe(sync);
  });
});
