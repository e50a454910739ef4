import { describe, expect, it } from 'vitest';
import type { JsonValue } from '../../evalset/types.js';
import { annBlocks } from './ann.js';
import { annDepths, annRows } from '../decision/ann.js';
import { buildReportData } from '../decision/build.js';
import { renderMarkdown } from './markdown.js';
import { fixtureInput } from './testdata/fixture.js';
import type { ReportCosts, ReportInput } from '../decision/types.js';

const cost = (indexStats: Record<string, number>) => ({ indexMs: 1, searchMs: 1, queryMsP50: 1, queryMsP95: 1, indexStats });

/** The fixture with params and index stats on its `dense` run (the only approximate one) and bm25 exact. */
function withAnn(params: JsonValue, stats: Record<string, number>, input: ReportInput = fixtureInput()): ReportInput {
  const costs: ReportCosts = { bm25: cost({ documents: 10 }), dense: cost({ documents: 10, ...stats }) };
  return { ...input, costs, runs: input.runs.map((r) => (r.id === 'dense' ? { ...r, params } : r)) };
}

const HNSW_PG = { ranking: 'vector', vector: { index: 'hnsw', type: 'vector', distance: 'cosine', m: 4, efConstruction: 8 }, efSearch: 10 };
/** Query-based recall of 100 queries searched to topK 100: 0.62 at 10, 0.95 at 50 (no reported R@50), 0.7 at 100. */
const low = {
  'annQueryFound@10': 620,
  'annQueryExact@10': 1000,
  'annQueryFound@50': 4750,
  'annQueryExact@50': 5000,
  'annQueryFound@100': 7000,
  'annQueryExact@100': 10000,
  annQueries: 100,
};
const MSG_TAIL = ': their numbers at that depth measure the index as much as the ranking';

describe('approximate indexes in the report', () => {
  it('a pgvector HNSW row: index, the parameters that set its recall, recall at every recorded depth, on the eval queries', () => {
    expect(annRows(buildReportData(withAnn(HNSW_PG, low)))).toEqual([
      {
        run: 'dense',
        index: 'pgvector hnsw (vector, cosine)',
        params: 'm 4, efConstruction 8, efSearch 10',
        raise: 'efSearch, m, efConstruction',
        on: 'queries',
        recall: [
          { k: 10, recall: 0.62 },
          { k: 50, recall: 0.95 },
          { k: 100, recall: 0.7 },
        ],
        sample: 100,
      },
    ]);
  });

  it('shown depths: 10, every reported R@k and the deepest recorded (topK), whatever else the arm recorded', () => {
    const rows = annRows(buildReportData(withAnn(HNSW_PG, low)));
    expect(annDepths(['nDCG@10', 'R@10', 'R@100', 'Judged@10'], rows)).toEqual([10, 100]);
    expect(annDepths(['nDCG@5', 'R@20'], rows)).toEqual([10, 20, 100]);
    expect(annDepths(['R@1000'], [])).toEqual([10, 1000]);
  });

  it('below 0.9 at any shown depth: one warning naming run, index, params, each low depth and its recall; off the gate a warning', () => {
    const d = buildReportData(withAnn(HNSW_PG, low));
    // recall@50 (0.95) is no reported depth and not low anyway; @10 and @100 both are.
    expect(d.warnings.filter((x) => x.code === 'ann-recall')).toEqual([
      {
        code: 'ann-recall',
        severity: 'warning',
        subject: 'dense',
        gate: false,
        message:
          'an approximate index finds less than 0.9 of the exact top k at a reported depth (dense: pgvector hnsw (vector, cosine) at m 4, efConstruction 8, efSearch 10, recall@10 0.620, recall@100 0.700; raise efSearch, m, efConstruction)' +
          MSG_TAIL,
      },
    ]);
  });

  it('serious when the gate compares a low run', () => {
    const input = fixtureInput({ gate: { candidate: 'dense', measure: 'nDCG@10' } });
    const w = buildReportData(withAnn(HNSW_PG, low, input)).warnings.filter((x) => x.code === 'ann-recall');
    expect(w.map((x) => [x.severity, x.gate])).toEqual([['serious', true]]);
  });

  it('low only at the deepest depth (ef_search below the LIMIT): still warned, at that depth only', () => {
    const d = buildReportData(withAnn(HNSW_PG, { ...low, 'annQueryFound@10': 950 }));
    const [w] = d.warnings.filter((x) => x.code === 'ann-recall');
    expect(w?.message).toContain('efSearch 10, recall@100 0.700; raise');
    expect(w?.message).not.toContain('recall@10 ');
  });

  it('at or above 0.9 at every shown depth: the row, no warning; a run without recall stats has no row', () => {
    const d = buildReportData(withAnn(HNSW_PG, { ...low, 'annQueryFound@10': 900, 'annQueryFound@100': 9000 }));
    expect(d.warnings.some((x) => x.code === 'ann-recall')).toBe(false);
    expect(annRows(d).map((r) => [r.run, r.recall.map((x) => x.recall)])).toEqual([['dense', [0.9, 0.95, 0.9]]]);
    expect(annBlocks(buildReportData(withAnn(HNSW_PG, {})))).toEqual([]);
  });

  it('stats written before recall was measured on queries read as document-vector recall, labelled so', () => {
    const old = { 'annRecallFound@10': 945, 'annRecallExact@10': 1000, 'annRecallFound@100': 480, 'annRecallExact@100': 1000, annRecallQueries: 100 };
    const d = buildReportData(withAnn(HNSW_PG, old));
    expect(annRows(d)).toMatchObject([
      {
        on: 'documents',
        sample: 100,
        recall: [
          { k: 10, recall: 0.945 },
          { k: 100, recall: 0.48 },
        ],
      },
    ]);
    expect(d.warnings.find((x) => x.code === 'ann-recall')?.message).toContain('recall@100 0.480 (document vectors as queries)');
    const md = renderMarkdown(d);
    expect(md).toContain('| 100 document vectors | 0.945 | 0.480 ↓ |');
    expect(md).toMatch(/overstate recall; rerun to measure them/);
    // Both kinds present (a cache refreshed since): the eval queries win.
    expect(annRows(buildReportData(withAnn(HNSW_PG, { ...old, ...low })))[0]?.on).toBe('queries');
  });

  it('LanceDB kinds and pgvector IVFFlat name their own parameters', () => {
    const lance = (indexType: string) => ({ index: 'lancedb', lancedb: { indexType, nprobes: 20, ef: 100 } });
    const row = (p: JsonValue) => annRows(buildReportData(withAnn(p, low)))[0];
    expect(row(lance('hnsw-sq'))).toMatchObject({
      index: 'lancedb hnsw-sq',
      params: 'ef 100, m default, efConstruction default, numPartitions default, nprobes 20',
      raise: 'ef, m, efConstruction',
    });
    expect(row(lance('ivf-pq'))).toMatchObject({ index: 'lancedb ivf-pq', raise: 'nprobes, refineFactor' });
    expect(row(lance('ivf-pq'))?.params).toBe('numPartitions default, numSubVectors default, nprobes 20, refineFactor none');
    const ivf = { vector: { index: 'ivfflat', type: 'halfvec', distance: 'l2', lists: 100 }, probes: 3 };
    expect(row(ivf)).toMatchObject({ index: 'pgvector ivfflat (halfvec, l2)', params: 'lists 100, probes 3', raise: 'probes (or fewer lists)' });
  });

  it('the Markdown body: the section, a low recall marked ↓ and never bold (bold means significant), a depth not measured –', () => {
    const base = fixtureInput();
    // R@20 reported (its values R@10's): a depth the arm recorded no count for.
    const perQuery = Object.fromEntries(Object.entries(base.perQuery).map(([run, m]) => [run, { ...m, 'R@20': m['R@10'] ?? [] }]));
    const md = renderMarkdown(buildReportData(withAnn(HNSW_PG, low, { ...base, perQuery, measures: ['nDCG@10', 'R@10', 'R@20', 'R@100'] })));
    expect(md).toContain('## Approximate indexes');
    expect(md).toContain('| system | index | params | measured on | recall@10 | recall@20 | recall@100 |');
    expect(md).toContain('| dense | pgvector hnsw (vector, cosine) | m 4, efConstruction 8, efSearch 10 | 100 eval queries | 0.620 ↓ | – | 0.700 ↓ |');
    const section = md.slice(md.indexOf('## Approximate indexes'));
    expect(section.slice(0, section.indexOf('\n## ', 5))).not.toContain('**');
    expect(md).toMatch(/↓ marks a recall below 0\.9/);
    expect(md).toMatch(/raise efSearch, m, efConstruction/);
  });
});
