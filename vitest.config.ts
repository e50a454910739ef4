import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{harness,arms,evalset,scripts}/**/*.test.ts'],
    exclude: ['node_modules/**', 'dist/**'],
    // Shuffled order catches tests that lean on each other's state.
    sequence: { shuffle: true },
    pool: 'forks',
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
