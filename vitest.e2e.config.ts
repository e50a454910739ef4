import { defineConfig } from 'vitest/config';
import { E2E_TESTS, TEST_ENV, WORKERS, reporters } from './vitest.config.js';

/**
 * `npm run test:e2e`: the packed-package suite in e2e/ and the Monte Carlo simulations, the slow part of the
 * checks that `npm test` leaves out (vitest.config.ts). CI runs it after `npm test`.
 */
export default defineConfig({
  test: {
    include: E2E_TESTS,
    exclude: ['node_modules/**', 'dist/**'],
    sequence: { shuffle: true },
    pool: 'forks',
    maxWorkers: WORKERS,
    // The run's private temp folder first (its teardown, run last, fails the run on leftovers); then one
    // `npm pack` of the built checkout and its installs, which every e2e file copies (e2e/global-setup.ts).
    globalSetup: ['harness/testing/global-setup.ts', 'e2e/global-setup.ts'],
    setupFiles: ['harness/testing/temp-setup.ts'],
    env: TEST_ENV,
    reporters: reporters('.tmp/vitest-e2e-results.json'),
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
