import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{harness,arms,evalset,scripts}/**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**'],
    // Shuffled order catches tests that lean on each other's state.
    sequence: { shuffle: true },
    pool: 'forks',
    // In CI a JSON report too, from which .ci/run prints one plain "N passed, N failed" line.
    reporters: process.env['CI'] ? ['default', ['json', { outputFile: '.tmp/vitest-results.json' }]] : ['default'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
