import { compareSchema, gateSchema } from '../../compare/config.js';
import type { ReportInput, ReportRun } from '../../decision/types.js';

/** Measures of `configs/recipes-locomo.yaml`, the widest means table a shipped config has. */
const MEASURES = ['nDCG@10', 'R@10', 'R-all@10', 'RR', 'AP', 'Judged@10'] as const;

/**
 * A report input past every width limit: `systems` runs (60 by default) against a baseline, 4 strata, 6
 * measures, long run ids, LaTeX specials and non-ASCII in ids and names. Run i scores a level that rises with
 * i, broken by a scatter every seventh run; the baseline leads in `temporal`, where its row is significantly
 * better than dozens of runs in ranges of run order. Seeded; a t-test keeps it fast.
 */
export function manySystemsInput(systems = 60): ReportInput {
  let seed = 4242;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const strata = ['single-hop', 'multi-hop', 'temporal', 'open_domain'];
  const queries = strata.flatMap((s) => Array.from({ length: 20 }, (_, i) => ({ id: `${s}-${String(i).padStart(2, '0')}`, stratum: s })));
  const runs: ReportRun[] = Array.from({ length: systems }, (_, i) => ({
    id: i === 0 ? 'bm25' : i % 10 === 3 ? `recipe_${i} & "ménage" #${i}` : `recipe-memory-mcp-${i}.choices=session-summary+rerank`,
    kind: i === 0 ? 'bm25' : 'fuse',
    fingerprint: `fp-${i}-${'0'.repeat(40)}`,
  }));
  const perQuery: Record<string, Record<string, number[]>> = {};
  for (const [i, r] of runs.entries()) {
    const level = 0.2 + (i % 7 === 6 ? ((i * 37) % systems) / systems : i / systems) * 0.6;
    // The baseline leads in one stratum, so its row is significantly better than dozens of runs there.
    const v = queries.map((q) => Math.min(1, Math.max(0, (i === 0 && q.stratum === 'temporal' ? 0.62 : level) + (rand() - 0.5) * 0.04)));
    perQuery[r.id] = Object.fromEntries(MEASURES.map((m) => [m, m === 'Judged@10' ? v.map(() => 1) : v]));
  }
  return {
    name: 'many-systems_100% & more',
    description: 'Which of 60 designs retrieves best, and is the ~best one worth $5?',
    configHash: 'feedfacefeedface',
    evalset: {
      name: 'many',
      format: 'memory',
      path: 'evalset/many',
      fingerprint: `sha256:${'a'.repeat(64)}`,
      queries: queries.length,
      documents: 500,
      strata: Object.fromEntries(strata.map((s) => [s, 20])),
      notes: [],
      qrelsSource: 'gold',
    },
    runs,
    measures: [...MEASURES],
    queries,
    perQuery,
    compare: compareSchema.parse({ baseline: 'bm25', test: 't' }),
    gate: gateSchema.parse({ candidate: runs[systems - 2]?.id, measure: 'nDCG@10', rule: 'gain-overall' }),
    command: 'harness ablate --config configs/many.yaml',
  };
}
