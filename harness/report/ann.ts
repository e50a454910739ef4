import type { Block } from './blocks.js';
import { ANN_RECALL_FLOOR, type AnnRow, annDepths, annRows } from '../decision/ann.js';
import type { ReportCore } from '../decision/select.js';

/** Marks a recall below the floor; not bold, which the report keeps for significance. */
export const LOW_MARK = '↓';

function cell(row: AnnRow, k: number): string {
  const d = row.recall.find((x) => x.k === k);
  if (d === undefined) return '–';
  return d.recall < ANN_RECALL_FLOOR ? `${d.recall.toFixed(3)} ${LOW_MARK}` : d.recall.toFixed(3);
}

function measuredOn(row: AnnRow): string {
  const n = row.sample === undefined ? '' : `${row.sample} `;
  return row.on === 'queries' ? `${n}eval queries` : `${n}document vectors`;
}

/** The "Approximate indexes" section; empty when no run has one. */
export function annBlocks(data: Pick<ReportCore, 'runs' | 'costs' | 'measures'>): Block[] {
  const rows = annRows(data);
  if (rows.length === 0) return [];
  const depths = annDepths(data.measures, rows);
  const old = rows.some((r) => r.on === 'documents')
    ? ' Rows measured on document vectors come from runs made before recall was measured on the eval queries: each such query finds itself, so they overstate recall; rerun to measure them.'
    : '';
  return [
    { kind: 'heading', level: 2, text: 'Approximate indexes' },
    {
      kind: 'para',
      text:
        'Recall of each approximate index against exact search over the same vectors, on the eval queries: each query as the run searched it, ' +
        "recall@k the share of the exact top k the run returned in its top k, summed over scopes, at 10, at the depth of every reported R@k and at the run's topK. " +
        `${LOW_MARK} marks a recall below ${ANN_RECALL_FLOOR}: the index loses what exact search finds, so the run's measures at that depth are the index's as much as the ranking's. ` +
        `– : not measured at that depth.${old}`,
    },
    {
      kind: 'table',
      head: ['system', 'index', 'params', 'measured on', ...depths.map((k) => `recall@${k}`)],
      align: ['l', 'l', 'l', 'l', ...depths.map(() => 'r' as const)],
      rows: rows.map((r) => [r.run, r.index, r.params, measuredOn(r), ...depths.map((k) => cell(r, k))]),
    },
  ];
}
