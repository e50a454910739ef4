import { type CompareConfigInput, compareSchema, gateSchema } from '../../compare/config.js';
import type { JsonValue } from '../../../evalset/types.js';
import type { ReportInput, ReportRun } from '../../decision/types.js';

/**
 * A report input the shape of `configs/rrf-vs-cc.yaml`'s without running it: 3 arms, an `rrf` grid over 4
 * input subsets x 4 constants, two `cc` grids of 11 alphas each (41 systems), a tuned system per grid,
 * 106 queries in 3 strata, 3 measures, gated on `rrf.tuned`. Values come from a seeded generator, so every
 * build is the same. `alphaStep` thins or thickens the cc grids (0.005 gives a 201-point sweep); `heat` adds
 * a two-parameter grid; `compare` overrides the comparison settings (a t-test keeps a 400-system build fast).
 */
export function gridStudyInput(opts: { alphaStep?: number; heat?: boolean; compare?: CompareConfigInput } = {}): ReportInput {
  let seed = 12345;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const strata: [string, number, number][] = [
    ['exact', 36, 0.85],
    ['paraphrase', 36, 0.1],
    ['multi-hop', 34, 0.75],
  ];
  const queries = strata.flatMap(([s, n]) => Array.from({ length: n }, (_, i) => ({ id: `${s}-${String(i).padStart(3, '0')}`, stratum: s })));
  const level = queries.map((q) => (strata.find((s) => s[0] === q.stratum) as [string, number, number])[2]);
  const runs: ReportRun[] = [];
  const perQuery: Record<string, Record<string, number[]>> = {};
  // Each system: the stratum's level, a shift that depends on its point, and per-query noise in [0, 1].
  const add = (run: ReportRun, shift: number) => {
    runs.push(run);
    const v = level.map((l) => Math.min(1, Math.max(0, l + shift + (rand() - 0.5) * 0.3)));
    perQuery[run.id] = { 'nDCG@10': v, 'R@10': v.map((x) => x * 0.9), RR: v.map((x) => Math.min(1, x * 1.1)) };
  };
  for (const [id, shift] of [
    ['bm25', 0],
    ['bm25-nostem', -0.02],
    ['fts5', -0.015],
  ] as const)
    add({ id, kind: id === 'fts5' ? 'sqlite-fts5' : 'bm25', node: 'retrieve', fingerprint: `${id}-${'f'.repeat(58)}` }, shift);
  const member = (group: string, point: Record<string, JsonValue>, inputs: string[], shift: number) => {
    const id = `${group}.${Object.entries(point)
      .map(([k, v]) => (k === 'inputs' ? String(v) : `${k}=${String(v)}`))
      .join('.')}`;
    add({ id, kind: 'rrf', node: 'fuse', inputs, group, point, fingerprint: `fp-${id}` }, shift);
    return id;
  };
  const subsets = [
    ['bm25', 'bm25-nostem'],
    ['bm25', 'fts5'],
    ['bm25-nostem', 'fts5'],
    ['bm25', 'bm25-nostem', 'fts5'],
  ];
  const rrf = subsets.flatMap((s, i) => [10, 30, 60, 100].map((k) => member('rrf', { inputs: s.join('+'), rrfK: k }, s, 0.005 * i - k / 20000)));
  const step = opts.alphaStep ?? 0.1;
  const alphas = Array.from({ length: Math.round(1 / step) + 1 }, (_, i) => Number((i * step).toFixed(6)));
  const cc = (group: string) => alphas.map((a) => member(group, { alpha: a }, ['bm25', 'fts5'], 0.02 - (a - 0.7) ** 2 / 10));
  const groups: [string, string[]][] = [
    ['rrf', rrf],
    ['cc-tm2c2', cc('cc-tm2c2')],
    ['cc-minmax', cc('cc-minmax')],
  ];
  if (opts.heat) {
    const heat = [0.2, 0.5, 0.8].flatMap((a) => [10, 60].map((k) => member('cc-heat', { alpha: a, rrfK: k }, ['bm25', 'fts5'], a / 50 - k / 10000)));
    groups.push(['cc-heat', heat]);
  }
  for (const [group, members] of groups) add(tunedRun(group, members), 0.01);
  return {
    name: 'grid-study',
    description: 'Does fusing lexical arms beat BM25 alone, and does RRF or a convex combination fuse better?',
    configHash: '9d90ae91c0ffee00',
    evalset: evalsetOf(queries.length),
    runs,
    measures: ['nDCG@10', 'R@10', 'RR'],
    queries,
    perQuery,
    compare: compareSchema.parse({ baseline: 'bm25', ...opts.compare }),
    gate: gateSchema.parse({ candidate: 'rrf.tuned', measure: 'nDCG@10', rule: 'gain-overall-no-loss' }),
    command: 'harness ablate --config configs/rrf-vs-cc.yaml',
  };
}

/** A tuned system that picked the point at 70% of its grid on four folds and the first point on the fifth. */
function tunedRun(group: string, members: readonly string[]): ReportRun {
  const picked = members[Math.floor(members.length * 0.7)] as string;
  return {
    id: `${group}.tuned`,
    kind: 'tuned',
    node: 'tune',
    group,
    fingerprint: `tuned:${group}:folds`,
    tuning: {
      measure: 'nDCG@10',
      method: 'folds',
      choices: [1, 2, 3, 4, 5].map((f) => ({ fold: String(f), member: f === 5 ? (members[0] as string) : picked, trainMean: 0.56, queries: 21 })),
      oracle: { member: picked, mean: 0.57 },
    },
  };
}

function evalsetOf(queries: number): ReportInput['evalset'] {
  return {
    name: 'alex-memory',
    format: 'memory',
    path: '../evalset/examples/alex-memory',
    fingerprint: `sha256:${'e'.repeat(64)}`,
    queries,
    documents: 351,
    strata: { exact: 36, paraphrase: 36, 'multi-hop': 34 },
    notes: [],
    qrelsSource: 'gold',
  };
}
