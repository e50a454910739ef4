/**
 * The package root, `harness`: the Library in one import. It re-exports the three subpaths, `harness/metrics`
 * (evaluate and the measures), `harness/stats` (significance tests, intervals, corrections) and
 * `harness/evalset` (the eval-set model, readers, writers, validation), and nothing else: no CLI, no Arm, no
 * model runtime loads with it, and importing it has no side effect (index.test.ts holds both).
 *
 * Name clashes: none today. `MapLike`, `QrelsLike` and `RunLike` come through both metrics and evalset but are
 * one declaration (evalset/input.ts), so the two re-exports are the same binding. `export *` makes any future
 * clash a compile error (TS2308) rather than a silently dropped name; resolve one by naming the export here.
 */
export * from './metrics/index.js';
export * from './stats/index.js';
export * from '../evalset/index.js';
