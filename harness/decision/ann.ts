import type { JsonValue } from '../../evalset/types.js';
import type { ReportCore } from './select.js';
import type { ReportWarning } from './types.js';

/**
 * Approximate indexes in the report body (docs/adr/0041-engine-fusion-and-ann-recall.md and its addendum): for
 * every run whose index stats carry ANN recall (the LanceDB index of a dense arm, pgvector HNSW or IVFFlat in a
 * postgres arm), the index, its parameters, and recall against exact search over the same vectors at each
 * reported depth: 10, the depth of every reported R@k and the run's topK. Measured on the eval queries
 * (`annQueryFound@k` / `annQueryExact@k`, `annQueries`); stats written before that (`annRecallFound@k` /
 * `annRecallExact@k`, document vectors as queries, which find themselves and overstate recall) are shown as
 * such. Read from index stats summed over scopes and the run's params as it ran; nothing is recomputed.
 */

/** Recall against exact search below which an approximate index is warned, at any reported depth. */
export const ANN_RECALL_FLOOR = 0.9;

/** The stat names of each measure: on the eval queries, and the document-vector one of older runs. */
const SOURCES = {
  queries: { found: 'annQueryFound@', exact: 'annQueryExact@', sample: 'annQueries' },
  documents: { found: 'annRecallFound@', exact: 'annRecallExact@', sample: 'annRecallQueries' },
} as const;

export interface AnnRow {
  readonly run: string;
  /** e.g. `lancedb hnsw-sq`, `pgvector hnsw (vector, cosine)`. */
  readonly index: string;
  /** The parameters that set its recall, as they ran (`ef 100, m default`). */
  readonly params: string;
  /** The parameters whose raise buys recall, for the warning. */
  readonly raise: string;
  /** `queries`: the eval queries; `documents`: document vectors as queries (stats from before the change). */
  readonly on: keyof typeof SOURCES;
  /** Recall at every depth the stats hold, ascending. */
  readonly recall: readonly { readonly k: number; readonly recall: number }[];
  /** Queries searched both ways (absent from stats written before it was recorded). */
  readonly sample?: number;
}

type Obj = Readonly<Record<string, JsonValue>>;

function obj(v: JsonValue | undefined): Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {};
}

function show(p: Obj, keys: readonly string[], fallback: Readonly<Record<string, string>> = {}): string {
  return keys.map((k) => `${k} ${p[k] ?? fallback[k] ?? 'default'}`).join(', ');
}

/** The index and its recall-setting parameters, read from a dense arm's or a postgres arm's params. */
function describeIndex(params: JsonValue | undefined): Pick<AnnRow, 'index' | 'params' | 'raise'> {
  const p = obj(params);
  if (p['index'] === 'lancedb') {
    const l = obj(p['lancedb']);
    const kind = String(l['indexType'] ?? 'ivf-pq');
    if (kind === 'hnsw-sq')
      return { index: 'lancedb hnsw-sq', params: show(l, ['ef', 'm', 'efConstruction', 'numPartitions', 'nprobes']), raise: 'ef, m, efConstruction' };
    if (kind === 'ivf-flat') return { index: 'lancedb ivf-flat', params: show(l, ['numPartitions', 'nprobes']), raise: 'nprobes' };
    return {
      index: `lancedb ${kind}`,
      params: show(l, ['numPartitions', 'numSubVectors', 'nprobes', 'refineFactor'], { refineFactor: 'none' }),
      raise: 'nprobes, refineFactor',
    };
  }
  const v = obj(p['vector']);
  const index = `pgvector ${String(v['index'] ?? '?')} (${String(v['type'] ?? 'vector')}, ${String(v['distance'] ?? 'cosine')})`;
  if (v['index'] === 'ivfflat')
    return { index, params: `lists ${v['lists'] ?? 'default'}, probes ${p['probes'] ?? 'server default (1)'}`, raise: 'probes (or fewer lists)' };
  return {
    index,
    params: `m ${v['m'] ?? 'default'}, efConstruction ${v['efConstruction'] ?? 'default'}, efSearch ${p['efSearch'] ?? 'server default (40)'}`,
    raise: 'efSearch, m, efConstruction',
  };
}

/** The recall at each depth the stats hold under one source's names, ascending; empty when none. */
function recallAt(s: Readonly<Record<string, number>>, src: (typeof SOURCES)[keyof typeof SOURCES]): AnnRow['recall'] {
  return Object.keys(s)
    .filter((key) => key.startsWith(src.exact) && (s[key] ?? 0) > 0)
    .map((key) => Number(key.slice(src.exact.length)))
    .filter((k) => Number.isInteger(k) && k > 0)
    .sort((a, b) => a - b)
    .map((k) => ({ k, recall: (s[`${src.found}${k}`] ?? 0) / (s[`${src.exact}${k}`] as number) }));
}

/** One row per run with an approximate index, in the report's run order. */
export function annRows(data: Pick<ReportCore, 'runs' | 'costs'>): AnnRow[] {
  const costs = data.costs;
  if (!costs) return [];
  return data.runs.flatMap((r) => {
    const s = costs[r.id]?.indexStats ?? {};
    const on = recallAt(s, SOURCES.queries).length > 0 ? 'queries' : 'documents';
    const recall = recallAt(s, SOURCES[on]);
    if (recall.length === 0) return [];
    const sample = s[SOURCES[on].sample];
    return [{ run: r.id, ...describeIndex(r.params), on, recall, ...(sample === undefined ? {} : { sample }) }];
  });
}

/**
 * The depths the report shows and warns at: 10, every reported R@k, and each row's deepest (the run's topK,
 * which the arm always records), ascending.
 */
export function annDepths(measures: readonly string[], rows: readonly AnnRow[]): number[] {
  const fromMeasures = measures.flatMap((m) => {
    const k = /^R@(\d+)$/.exec(m)?.[1];
    return k === undefined ? [] : [Number(k)];
  });
  const deepest = rows.flatMap((r) => r.recall.slice(-1).map((d) => d.k));
  return [...new Set([10, ...fromMeasures, ...deepest])].sort((a, b) => a - b);
}

/** A row's recall at the shown depths that is below the floor. */
export function lowDepths(row: AnnRow, depths: readonly number[]): AnnRow['recall'] {
  return row.recall.filter((d) => depths.includes(d.k) && d.recall < ANN_RECALL_FLOOR);
}

/**
 * Approximate indexes below the floor at any shown depth: one warning naming each run, its index and
 * parameters and every low depth; serious when the gate compares one of them.
 */
export function annRecallWarnings(data: ReportCore, onGate: ReadonlySet<string>): ReportWarning[] {
  const rows = annRows(data);
  const depths = annDepths(data.measures, rows);
  const low = rows.map((r) => ({ r, at: lowDepths(r, depths) })).filter((x) => x.at.length > 0);
  if (low.length === 0) return [];
  const SHOWN = 6;
  const named = low.slice(0, SHOWN).map(({ r, at }) => {
    const on = r.on === 'documents' ? ' (document vectors as queries)' : '';
    return `${r.run}: ${r.index} at ${r.params}, ${at.map((d) => `recall@${d.k} ${d.recall.toFixed(3)}`).join(', ')}${on}; raise ${r.raise}`;
  });
  const gate = low.some(({ r }) => onGate.has(r.run));
  return [
    {
      code: 'ann-recall',
      severity: gate ? 'serious' : 'warning',
      subject: low.map(({ r }) => r.run).join(', '),
      gate,
      message:
        `${low.length === 1 ? 'an approximate index finds' : `${low.length} approximate indexes find`} less than ${ANN_RECALL_FLOOR} of the exact top k ` +
        `at a reported depth (${named.join('; ')}${low.length > SHOWN ? `; and ${low.length - SHOWN} more` : ''}): their numbers at that depth measure the index as much as the ranking`,
    },
  ];
}
