import type { TestProject } from 'vitest/node';
import { type PackedInstalls, packAndInstall } from './package.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's installs of the packed package (e2e/package.ts), read by installPackage. */
    packedInstalls: PackedInstalls;
  }
}

/**
 * Vitest globalSetup of vitest.e2e.config.ts, after harness/testing/global-setup.ts (so in the run's private
 * temp folder, and torn down before that folder is checked for leftovers): packs the built checkout once and
 * installs it once per kind, before any test file starts, and hands the folders to the files through
 * provide/inject. Each file then works in a linked copy of its own (installPackage), and teardown removes the
 * installs.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const { installs, remove } = await packAndInstall();
  project.provide('packedInstalls', installs);
  return remove;
}
