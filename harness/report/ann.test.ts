import { describe, expect, it } from 'vitest';
import type { JsonValue } from '../../evalset/types.js';
import { annBlocks } from './ann.js';
import { annRows } from '../decision/ann.js';
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
const low = { 'annRecallFound@10': 620, 'annRecallExact@10': 1000, 'annRecallFound@100': 7000, 'annRecallExact@100': 10000, annRecallQueries: 100 };

describe('approximate indexes in the report', () => {
  it('a pgvector HNSW row: index, the parameters that set its recall, recall@10 and @100, sample', () => {
    expect(annRows(buildReportData(withAnn(HNSW_PG, low)))).toEqual([
      {
        run: 'dense',
        index: 'pgvector hnsw (vector, cosine)',
        params: 'm 4, efConstruction 8, efSearch 10',
        raise: 'efSearch, m, efConstruction',
        recall10: 0.62,
        recall100: 0.7,
        sample: 100,
      },
    ]);
  });

  it('below 0.9 recall@10: one serious warning naming the run and the parameters to raise', () => {
    const d = buildReportData(withAnn(HNSW_PG, low));
    const w = d.warnings.filter((x) => x.code === 'ann-recall');
    expect(w).toEqual([
      {
        code: 'ann-recall',
        severity: 'serious',
        subject: 'dense',
        gate: false,
        message:
          'an approximate index finds less than 0.9 of the exact top 10 (dense: pgvector hnsw (vector, cosine) at m 4, efConstruction 8, efSearch 10, recall@10 0.620; raise efSearch, m, efConstruction): their numbers measure the index as much as the ranking',
      },
    ]);
  });

  it('at or above 0.9: the row, no warning; a run without recall stats has no row', () => {
    const d = buildReportData(withAnn(HNSW_PG, { ...low, 'annRecallFound@10': 900 }));
    expect(d.warnings.some((x) => x.code === 'ann-recall')).toBe(false);
    expect(annRows(d).map((r) => [r.run, r.recall10])).toEqual([['dense', 0.9]]);
    expect(annBlocks(buildReportData(withAnn(HNSW_PG, {})))).toEqual([]);
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

  it('the Markdown body has the section, the low recall strong, the warning among the serious ones', () => {
    const md = renderMarkdown(buildReportData(withAnn(HNSW_PG, low)));
    expect(md).toContain('## Approximate indexes');
    expect(md).toContain('| dense | pgvector hnsw (vector, cosine) | m 4, efConstruction 8, efSearch 10 | **0.620** | 0.700 | 100 |');
    expect(md).toMatch(/raise efSearch, m, efConstruction/);
  });
});
