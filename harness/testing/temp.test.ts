import { existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { isolateTmpdir, tempDir } from './temp.js';

// onTestFinished callbacks run last-registered first, so one registered before a folder is made runs after the
// folder's own cleanup and can check that it is gone.

const atTopLevel = tempDir('temp-top');
let inBeforeAll = '';
let inBeforeEach = '';
beforeAll(() => {
  inBeforeAll = tempDir('temp-before-all');
});
beforeEach(() => {
  onTestFinished(() => expect(existsSync(made)).toBe(false));
  const made = tempDir('temp-before-each');
  inBeforeEach = made;
});

describe('tempDir', () => {
  it('is under the run temp folder the global setup gave every worker', () => {
    expect(basename(tmpdir())).toMatch(/^harness-vitest-/);
    expect(dirname(atTopLevel)).toBe(tmpdir());
    expect(basename(atTopLevel)).toMatch(/^temp-top-/);
  });

  it('made in a test or a beforeEach: removed, with its contents, when the test finishes', () => {
    let dir = '';
    onTestFinished(() => expect(existsSync(dir)).toBe(false));
    dir = tempDir('temp-in-test');
    writeFileSync(join(dir, 'f.txt'), 'x');
    expect(existsSync(join(dir, 'f.txt'))).toBe(true);
    expect(existsSync(inBeforeEach)).toBe(true);
  });

  it('made at top level or in beforeAll: kept for every test of the file', () => {
    expect(existsSync(atTopLevel)).toBe(true);
    expect(existsSync(inBeforeAll)).toBe(true);
  });
});

describe('isolateTmpdir', () => {
  it('points os.tmpdir() at a fresh folder for one test, then restores it and removes the folder', () => {
    const before = tmpdir();
    let dir = '';
    onTestFinished(() => {
      expect(tmpdir()).toBe(before);
      expect(existsSync(dir)).toBe(false);
    });
    dir = isolateTmpdir();
    expect(tmpdir()).toBe(dir);
    expect(dirname(dir)).toBe(before);
    writeFileSync(join(tmpdir(), 'scratch'), 'x');
  });
});
