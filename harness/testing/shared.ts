import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';

/** The project root (this file lives in harness/testing/). */
export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** `../shared` beside the project root: read-only reference data, present in CI, maybe absent elsewhere. */
export const SHARED_DIR = process.env['HARNESS_SHARED_DIR'] ?? resolve(PROJECT_ROOT, '..', 'shared');

export function sharedPath(...parts: string[]): string {
  return join(SHARED_DIR, ...parts);
}

/**
 * Why files under ../shared are missing, as a skip reason: the folder is absent (a fresh clone), or it is there
 * without them (an older or partial copy): the two call for different fixes.
 */
export function sharedMissing(missing: readonly string[]): string {
  return existsSync(SHARED_DIR)
    ? `../shared (${SHARED_DIR}) has no ${missing.join(', ')}`
    : `../shared is not here (${SHARED_DIR} does not exist; it would hold ${missing.join(', ')})`;
}

/**
 * A describe block that needs files under ../shared. Where they are missing it is skipped, and the reason is
 * printed so a green run elsewhere never hides that the reference checks did not run.
 */
export function describeShared(name: string, relPaths: readonly string[], fn: () => void): void {
  const missing = relPaths.filter((p) => !existsSync(sharedPath(p)));
  if (missing.length > 0) {
    process.stderr.write(`[skip] ${name}: ${sharedMissing(missing)}\n`);
    // Not `fn`: its body would run to collect tests (making temp folders) while vitest runs no afterAll of a
    // suite whose tests are all skipped.
    describe.skip(`${name} (skipped: ../shared missing)`, () => {
      it(`needs ${missing.join(', ')} under ${SHARED_DIR}`, () => {});
    });
    return;
  }
  describe(name, fn);
}
