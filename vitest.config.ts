import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{harness,arms,evalset,scripts,e2e,bench}/**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**'],
    // Shuffled order catches tests that lean on each other's state.
    sequence: { shuffle: true },
    pool: 'forks',
    // The run gets a private temp folder (TMPDIR) and fails if any test leaves something in it.
    globalSetup: ['harness/testing/global-setup.ts'],
    // Removes, after each test file, the temp folders it made outside a test (harness/testing/temp.ts).
    setupFiles: ['harness/testing/temp-setup.ts'],
    // Given to every test worker and the processes tests start; a value already set in the shell wins.
    env: {
      // LanceDB's Rust logger (env_logger, default level warn) prints a deprecation warning per vector search
      // and a warning per new table to stderr; keep errors only.
      LANCEDB_LOG: process.env['LANCEDB_LOG'] ?? 'error',
      // ONNX Runtime's telemetry writes .ses and mat-debug-<pid>.log into the temp dir (and tries to upload).
      ORT_DISABLE_TELEMETRY: process.env['ORT_DISABLE_TELEMETRY'] ?? '1',
      // tsx, in the processes tests start with --import tsx, caches transpiled files in <tmpdir>/tsx-<uid>.
      TSX_DISABLE_CACHE: process.env['TSX_DISABLE_CACHE'] ?? '1',
    },
    // In CI a JSON report too, from which .ci/run prints one plain "N passed, N failed" line.
    reporters: process.env['CI'] ? ['default', ['json', { outputFile: '.tmp/vitest-results.json' }]] : ['default'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
