import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Test files that run under `npm run test:e2e` (vitest.e2e.config.ts) instead of `npm test`: the packed-package
 * suite in e2e/ (one `npm pack` and install for the whole run) and the Monte Carlo simulations, which each
 * replay tens of thousands of studies to check a coverage or error-rate bound. CI runs both commands.
 */
export const E2E_TESTS = ['e2e/**/*.test.ts', '**/*.simulation.test.ts'];

/** Given to every test worker and the processes tests start; a value already set in the shell wins. */
export const TEST_ENV = {
  // LanceDB's Rust logger (env_logger, default level warn) prints a deprecation warning per vector search
  // and a warning per new table to stderr; keep errors only.
  LANCEDB_LOG: process.env['LANCEDB_LOG'] ?? 'error',
  // ONNX Runtime's telemetry writes .ses and mat-debug-<pid>.log into the temp dir (and tries to upload).
  ORT_DISABLE_TELEMETRY: process.env['ORT_DISABLE_TELEMETRY'] ?? '1',
  // tsx, in the processes tests start with --import tsx, caches transpiled files in <tmpdir>/tsx-<uid>.
  TSX_DISABLE_CACHE: process.env['TSX_DISABLE_CACHE'] ?? '1',
};

/**
 * One test worker per core, at least 2. Vitest's default leaves a core to its main process (one worker on 2 cores,
 * every file in turn), but much of a file's time is spent waiting on the processes and loopback servers its tests
 * start, or on the next file's start-up, so a second worker on 2 cores fills that time.
 */
export const WORKERS = Math.max(2, availableParallelism());

/** In CI a JSON report too, from which .ci/run prints one plain "N passed, N failed" line (summed over both runs). */
export function reporters(outputFile: string): (string | [string, { outputFile: string }])[] {
  return process.env['CI'] ? ['default', ['json', { outputFile }]] : ['default'];
}

export default defineConfig({
  test: {
    include: ['{harness,arms,evalset,scripts,bench}/**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**', ...E2E_TESTS],
    // Shuffled order catches tests that lean on each other's state.
    sequence: { shuffle: true },
    pool: 'forks',
    // Each file in a fresh process (vitest's default, kept on purpose): files change process.env (TMPDIR in
    // isolateTmpdir), hold module-level state, and load native modules.
    isolate: true,
    maxWorkers: WORKERS,
    // The run gets a private temp folder (TMPDIR) and fails if any test leaves something in it.
    globalSetup: ['harness/testing/global-setup.ts'],
    // Removes, after each test file, the temp folders it made outside a test (harness/testing/temp.ts).
    setupFiles: ['harness/testing/temp-setup.ts'],
    env: TEST_ENV,
    reporters: reporters('.tmp/vitest-results.json'),
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
