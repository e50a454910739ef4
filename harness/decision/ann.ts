import type { JsonValue } from '../../evalset/types.js';
import type { ReportCore } from './select.js';
import type { ReportWarning } from './types.js';

/**
 * Approximate indexes in the report body (docs/adr/0041-engine-fusion-and-ann-recall.md): for every run whose
 * index stats carry `annRecallFound@10` / `annRecallExact@10` (the LanceDB index of a dense arm, pgvector HNSW
 * or IVFFlat in a postgres arm), the index, its parameters, recall@10 against exact search over the same
 * vectors and the number of document vectors used as queries. Read from index stats summed over scopes and the
 * run's params as it ran; nothing is recomputed. Below {@link ANN_RECALL_FLOOR} the run is a serious warning
 * naming the parameters to raise.
 */

/** Recall@10 against exact search below which an approximate index is a serious warning. */
export const ANN_RECALL_FLOOR = 0.9;

export interface AnnRow {
  readonly run: string;
  /** e.g. `lancedb hnsw-sq`, `pgvector hnsw (vector, cosine)`. */
  readonly index: string;
  /** The parameters that set its recall, as they ran (`ef 100, m default`). */
  readonly params: string;
  /** The parameters whose raise buys recall, for the warning. */
  readonly raise: string;
  readonly recall10: number;
  readonly recall100?: number;
  /** Document vectors searched both ways (absent from stats written before it was recorded). */
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

/** One row per run with an approximate index, in the report's run order. */
export function annRows(data: Pick<ReportCore, 'runs' | 'costs'>): AnnRow[] {
  const costs = data.costs;
  if (!costs) return [];
  return data.runs.flatMap((r) => {
    const s = costs[r.id]?.indexStats ?? {};
    const exact = s['annRecallExact@10'];
    if (!exact) return [];
    const at100 = s['annRecallExact@100'];
    return [
      {
        run: r.id,
        ...describeIndex(r.params),
        recall10: (s['annRecallFound@10'] ?? 0) / exact,
        ...(at100 ? { recall100: (s['annRecallFound@100'] ?? 0) / at100 } : {}),
        ...(s['annRecallQueries'] === undefined ? {} : { sample: s['annRecallQueries'] }),
      },
    ];
  });
}

/** Approximate indexes whose recall@10 against exact search is below the floor: one serious warning. */
export function annRecallWarnings(data: ReportCore, onGate: ReadonlySet<string>): ReportWarning[] {
  const low = annRows(data).filter((r) => r.recall10 < ANN_RECALL_FLOOR);
  if (low.length === 0) return [];
  const shown = low.slice(0, 3).map((r) => `${r.run}: ${r.index} at ${r.params}, recall@10 ${r.recall10.toFixed(3)}; raise ${r.raise}`);
  return [
    {
      code: 'ann-recall',
      severity: 'serious',
      subject: low.map((r) => r.run).join(', '),
      gate: low.some((r) => onGate.has(r.run)),
      message:
        `${low.length === 1 ? 'an approximate index finds' : `${low.length} approximate indexes find`} less than ${ANN_RECALL_FLOOR} of the exact top 10 ` +
        `(${shown.join('; ')}${low.length > 3 ? `; and ${low.length - 3} more` : ''}): their numbers measure the index as much as the ranking`,
    },
  ];
}
