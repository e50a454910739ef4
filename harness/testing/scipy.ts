import { spawnSync } from 'node:child_process';
import { expect } from 'vitest';

/**
 * A reference script's fresh output (`python3 <script> --stdout`, JSON), or undefined after skipping the test with
 * its reason where python3 has no scipy: the committed reference is checked either way, this adds a live run.
 */
export function freshScipyReference<T>(ctx: { skip: () => void }, testFile: string, script: string): T | undefined {
  const probe = spawnSync('python3', ['-c', 'import scipy'], { encoding: 'utf8' });
  if (probe.status !== 0) {
    console.log(`${testFile}: live reference skipped: python3 with scipy is not available (${probe.error?.message ?? probe.stderr.trim().split('\n').at(-1)})`);
    ctx.skip();
    return undefined;
  }
  const run = spawnSync('python3', [script, '--stdout'], { encoding: 'utf8', maxBuffer: 16 << 20 });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as T;
}
