import type { Block } from './blocks.js';
import { ANN_RECALL_FLOOR, annRows } from '../decision/ann.js';
import type { ReportCore } from '../decision/select.js';

/** The "Approximate indexes" section; empty when no run has one. */
export function annBlocks(data: Pick<ReportCore, 'runs' | 'costs'>): Block[] {
  const rows = annRows(data);
  if (rows.length === 0) return [];
  return [
    { kind: 'heading', level: 2, text: 'Approximate indexes' },
    {
      kind: 'para',
      text:
        'Recall of each approximate index against exact search over the same vectors: document vectors (evenly spaced rows) searched both ways, ' +
        `recall@k the share of the exact top k the index returned, summed over scopes. Below ${ANN_RECALL_FLOOR} (strong) the index loses what exact search finds.`,
    },
    {
      kind: 'table',
      head: ['system', 'index', 'params', 'recall@10', 'recall@100', 'sample'],
      align: ['l', 'l', 'l', 'r', 'r', 'r'],
      rows: rows.map((r) => [
        r.run,
        r.index,
        r.params,
        r.recall10 < ANN_RECALL_FLOOR ? { text: r.recall10.toFixed(3), strong: true } : r.recall10.toFixed(3),
        r.recall100 === undefined ? '' : r.recall100.toFixed(3),
        r.sample === undefined ? '' : String(r.sample),
      ]),
    },
  ];
}
