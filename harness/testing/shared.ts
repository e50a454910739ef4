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
 * A describe block that needs files under ../shared. Where they are missing it is skipped, and the reason is
 * printed so a green run elsewhere never hides that the reference checks did not run.
 */
export function describeShared(name: string, relPaths: readonly string[], fn: () => void): void {
  const missing = relPaths.filter((p) => !existsSync(sharedPath(p)));
  if (missing.length > 0) {
    process.stderr.write(`[skip] ${name}: ../shared is not here (missing ${missing.join(', ')} under ${SHARED_DIR})\n`);
    // Not `fn`: its body would run to collect tests (making temp folders) while vitest runs no afterAll of a
    // suite whose tests are all skipped.
    describe.skip(`${name} (skipped: ../shared missing)`, () => {
      it(`needs ${missing.join(', ')} under ${SHARED_DIR}`, () => {});
    });
    return;
  }
  describe(name, fn);
}
