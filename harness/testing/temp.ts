import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished, TestRunner } from 'vitest';

/**
 * Temp folders that clean up after themselves. A test run must leave os.tmpdir() as it found it: the global setup
 * (harness/testing/global-setup.ts) points the run at a private temp folder and fails the run naming whatever is
 * left in it. So a test never calls mkdtemp itself; it asks for a folder here, and the folder (with everything the
 * code under test wrote into it) is removed, recursively, when its owner ends:
 *
 * - created inside a test, or in a beforeEach: when that test finishes, pass or fail;
 * - created anywhere else (module top level, describe body, beforeAll): when the test file finishes (the
 *   afterAll registered by harness/testing/temp-setup.ts, a vitest setupFile).
 *
 * Code under test that writes into os.tmpdir() directly (a cache root, a workDir) must be given one of these
 * folders instead.
 */

/** Paths created outside any test in this test file, removed by {@link removeFileTemps} after the file's tests. */
const fileTemps = new Set<string>();

/** Removes `path` (recursive, force) when the current test finishes, or after the file's tests outside a test. */
export function removeWhenDone(path: string): void {
  if (TestRunner.getCurrentTest()) {
    onTestFinished(() => rmSync(path, { recursive: true, force: true }));
  } else {
    fileTemps.add(path);
  }
}

/** A fresh empty folder `<os.tmpdir()>/<prefix>-XXXXXX`, removed when its test (or else its test file) ends. */
export function tempDir(prefix = 'harness'): string {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  removeWhenDone(dir);
  return dir;
}

/** Called once per test file, after its tests and hooks: removes the folders made outside a test. */
export function removeFileTemps(): void {
  for (const path of fileTemps) rmSync(path, { recursive: true, force: true });
  fileTemps.clear();
}

/**
 * Points TMPDIR (what os.tmpdir() and native code such as LanceDB's Rust `std::env::temp_dir()` read) at a fresh
 * folder while the current test runs, and restores it and removes the folder when the test finishes. For code
 * under test that leaves scratch files in the temp dir itself and cannot be told where to put them: LanceDB
 * 0.31 leaks an empty `.tmpXXXXXX` folder (its IVF shuffle scratch dir) into the temp dir on every index build.
 * Call it inside a test (or a beforeEach); tests of one file run one at a time, so the change is theirs alone.
 */
export function isolateTmpdir(prefix = 'harness-tmpdir'): string {
  if (!TestRunner.getCurrentTest()) throw new Error('isolateTmpdir() changes the process temp dir for one test: call it inside a test or beforeEach');
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const saved = { TMPDIR: process.env['TMPDIR'], TMP: process.env['TMP'], TEMP: process.env['TEMP'] };
  process.env['TMPDIR'] = process.env['TMP'] = process.env['TEMP'] = dir;
  onTestFinished(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}
