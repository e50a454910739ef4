import type { Block, Cell } from './blocks.js';
import type { ReportData } from '../decision/types.js';

/**
 * The graph section (docs/adr/0019-graph-arms.md): for every run whose index stats describe a graph (graph-ppr,
 * graph-bfs, entity-lane), its size, concepts per document, seed coverage (share of queries with at least one
 * seed) overall and per stratum, and PPR iterations and milliseconds per seeded query. Read from the index
 * stats, summed over scopes; nothing is recomputed. Empty when no run has a graph.
 */
export function graphBlocks(data: ReportData): Block[] {
  const costs = data.costs;
  if (!costs) return [];
  const runs = data.runs.filter((r) => costs[r.id]?.indexStats['graphNodes'] !== undefined);
  if (runs.length === 0) return [];
  const strata = data.strata.filter((s) => !s.overall).map((s) => s.id);
  const pct = (num: number | undefined, den: number | undefined): Cell => {
    if (!den) return '';
    const share = (num ?? 0) / den;
    const text = `${(100 * share).toFixed(0)}%`;
    // Fewer than half the queries seeded: most of the stratum gets an empty ranking from this system.
    return share < 0.5 ? { text, strong: true } : text;
  };
  const fixed = (x: number | undefined, digits: number) => (x === undefined || !Number.isFinite(x) ? '' : x.toFixed(digits));
  return [
    { kind: 'heading', level: 2, text: 'Graph systems' },
    {
      kind: 'para',
      text: 'Graph size summed over scopes; seed coverage is the share of queries with at least one seed (a query without one gets an empty ranking), shown strong below 50%; PPR iterations and milliseconds are per seeded query.',
    },
    {
      kind: 'table',
      head: ['system', 'kind', 'nodes', 'edges', 'concepts per document', 'seed coverage', ...strata, 'PPR iterations', 'PPR ms'],
      align: ['l', 'l', 'r', 'r', 'r', 'r', ...strata.map(() => 'r' as const), 'r', 'r'],
      rows: runs.map((r) => {
        const s = costs[r.id]?.indexStats ?? {};
        const seeded = s['seededQueries'];
        const ppr = s['pprIterations'] !== undefined && seeded ? seeded : undefined;
        return [
          r.id,
          r.kind,
          String(s['graphNodes'] ?? ''),
          String(s['graphEdges'] ?? ''),
          fixed((s['conceptMentions'] ?? Number.NaN) / (s['documents'] ?? Number.NaN), 1),
          pct(seeded, s['queries']),
          ...strata.map((st) => pct(s[`seededQueries.${st}`], s[`queries.${st}`])),
          ppr === undefined ? '' : fixed((s['pprIterations'] as number) / ppr, 1),
          ppr === undefined ? '' : fixed((s['pprMs'] as number) / ppr, 3),
        ];
      }),
    },
  ];
}
