import { describe, expect, it } from 'vitest';
import { UsageError } from '../errors.js';
import { loadPrompt } from './prompt.js';

describe('loadPrompt', () => {
  it('finds the shipped prompts from the package root, whatever the working directory', () => {
    const cwd = process.cwd();
    try {
      process.chdir('/');
      expect(loadPrompt('judge', 'umbrela-v1').text).toContain('{{query}}');
      expect(loadPrompt('evalset-build', 'exact-v1').sha256).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      process.chdir(cwd);
    }
  });

  it('a prompt that does not exist is a usage error naming the versions that do', () => {
    let err: unknown;
    try {
      loadPrompt('judge', 'umbrela-v9');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(/^no prompt "umbrela-v9" in .*harness[/\\]judge[/\\]prompts: it has umbrela-v1$/);
  });
});
