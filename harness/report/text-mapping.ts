import type { Block } from './blocks.js';
import type { ReportData } from '../decision/types.js';

const pct = (n: number, of: number): string => (of === 0 ? '-' : `${((100 * n) / of).toFixed(1)}%`);

/**
 * The Text mapping section: for each system whose results hold returned text, how its hits became results
 * (by id, by text, fuzzy, Returned items) and how many of its Returned items the scoring qrels grade. A system
 * scored on gold alone has its Returned items unjudged: they score 0 whatever they say, and the section says so.
 */
export function textMappingBlocks(data: Pick<ReportData, 'runs'>): Block[] {
  const runs = data.runs.filter((r) => r.textMapping !== undefined);
  if (runs.length === 0) return [];
  const unjudged = runs.some((r) => (r.textMapping?.returnedResults ?? 0) > (r.textMapping?.returnedJudged ?? 0));
  return [
    { kind: 'heading', level: 2, text: 'Text mapping' },
    {
      kind: 'para',
      text: `Hits that carried text were mapped to the eval set's documents by id, by equal or contained text, or by a fuzzy match; what matched nothing is a Returned item, graded only by a judge.${unjudged ? ' Unjudged Returned items score 0 whatever they say: run harness judge --config and score with qrels: gold+judged.' : ''}`,
    },
    {
      kind: 'table',
      head: ['system', 'hits by id', 'by text', 'fuzzy', 'returned', 'results', 'returned items', 'judged', 'unjudged'],
      align: ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
      rows: runs.map((r) => {
        const t = r.textMapping as NonNullable<typeof r.textMapping>;
        const h = t.hits;
        const hits = h === undefined ? 0 : h.byId + h.byText + h.byFuzzy + h.returned;
        const cell = (n: number | undefined) => (h === undefined || n === undefined ? '' : `${n} (${pct(n, hits)})`);
        return [
          r.id,
          cell(h?.byId),
          cell(h?.byText),
          cell(h?.byFuzzy),
          cell(h?.returned),
          String(t.results),
          `${t.returnedResults} (${pct(t.returnedResults, t.results)})`,
          String(t.returnedJudged),
          String(t.returnedResults - t.returnedJudged),
        ];
      }),
    },
  ];
}
