import { compareSchema, type CompareConfigInput, type GateConfigInput, gateSchema } from '../../compare/config.js';
import type { ReportInput } from '../../decision/types.js';

/**
 * A hand-made report input: 3 runs x 2 strata x 12 queries, values chosen so every delta, W/T/L and exact
 * randomization p can be derived by hand (see report.test.ts for the arithmetic).
 *
 * Per-query values, queries q01-q12 in `exact`, q13-q24 in `paraphrase`:
 *
 * | measure   | run    | exact                      | paraphrase                        |
 * | nDCG@10   | bm25   | 0.5 x12                    | 0.2 x12                           |
 * |           | dense  | 0.5 x12                    | 0.4, 0.6 alternating              |
 * |           | hybrid | 0.4, 0.2 alternating       | 0.3 x3, then 0.2 x9               |
 * | R@10      | bm25   | 0.6 x12                    | 0.3 x12                           |
 * |           | dense  | 0.6 x12                    | 0.4, 0.4, 0.2, then 0.3 x9        |
 * |           | hybrid | as bm25                    | as bm25                           |
 * | R@100     | bm25   | 0.8 x12                    | 0.6 x12                           |
 * |           | dense  | 0.8 x12                    | 0.7 x12                           |
 * |           | hybrid | as bm25                    | as bm25                           |
 * | Judged@10 | dense  | 1 x12                      | 0.7 x12 (the others 1 everywhere) |
 */
const rep = (n: number, v: number): number[] => Array.from({ length: n }, () => v);
const alt = (n: number, a: number, b: number): number[] => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? a : b));

export const FIXTURE_MEASURES = ['nDCG@10', 'R@10', 'R@100', 'Judged@10'] as const;

export function fixtureInput(opts: { compare?: CompareConfigInput; gate?: GateConfigInput; qrelsJudgesNonRelevant?: boolean } = {}): ReportInput {
  const queries = Array.from({ length: 24 }, (_, i) => ({
    id: `q${String(i + 1).padStart(2, '0')}`,
    stratum: i < 12 ? 'exact' : 'paraphrase',
  }));
  const perQuery = {
    bm25: {
      'nDCG@10': [...rep(12, 0.5), ...rep(12, 0.2)],
      'R@10': [...rep(12, 0.6), ...rep(12, 0.3)],
      'R@100': [...rep(12, 0.8), ...rep(12, 0.6)],
      'Judged@10': rep(24, 1),
    },
    dense: {
      'nDCG@10': [...rep(12, 0.5), ...alt(12, 0.4, 0.6)],
      'R@10': [...rep(12, 0.6), 0.4, 0.4, 0.2, ...rep(9, 0.3)],
      'R@100': [...rep(12, 0.8), ...rep(12, 0.7)],
      'Judged@10': [...rep(12, 1), ...rep(12, 0.7)],
    },
    hybrid: {
      'nDCG@10': [...alt(12, 0.4, 0.2), ...rep(3, 0.3), ...rep(9, 0.2)],
      'R@10': [...rep(12, 0.6), ...rep(12, 0.3)],
      'R@100': [...rep(12, 0.8), ...rep(12, 0.6)],
      'Judged@10': rep(24, 1),
    },
  };
  return {
    name: 'fixture-study',
    configHash: '0123456789abcdef',
    evalset: {
      name: 'fixture',
      format: 'memory-jsonl',
      path: 'evalset/fixtures/report',
      fingerprint: 'sha256:5f1e0c2d',
      queries: 24,
      documents: 100,
      strata: { exact: 12, paraphrase: 12 },
      notes: ['2 run queries absent from the qrels were dropped'],
      qrelsSource: 'gold',
      // A pooled qrels (judged non-relevant documents listed), so Judged@10 measures judgment holes.
      qrelsJudgesNonRelevant: opts.qrelsJudgesNonRelevant ?? true,
    },
    runs: [
      { id: 'bm25', kind: 'bm25', fingerprint: 'bm25-k1=0.9-b=0.4' },
      { id: 'dense', kind: 'onnx-embed', fingerprint: 'glove-6b-100d', substitute: 'GloVe stands in for bge-large' },
      { id: 'hybrid', kind: 'rrf', fingerprint: 'rrf-60(bm25,dense)', label: 'RRF of bm25 and dense' },
    ],
    measures: [...FIXTURE_MEASURES],
    queries,
    perQuery,
    compare: compareSchema.parse(opts.compare ?? {}),
    ...(opts.gate ? { gate: gateSchema.parse(opts.gate) } : {}),
    command: 'harness ablate --config configs/fixture-study.yaml',
  };
}
