import { describe, expect, it } from 'vitest';
import type { Block } from './blocks.js';
import { deviationBlocks } from './deviations.js';
import { blocksToMarkdown } from './systems.js';
import { textMappingBlocks } from './text-mapping.js';
import type { ReportRun } from '../decision/types.js';

const md = (blocks: Block[]) => blocksToMarkdown(blocks).join('\n');

describe('the Text mapping section', () => {
  it('is absent without returned text, and gives each share and the unjudged count', () => {
    expect(textMappingBlocks({ runs: [{ id: 'bm25', kind: 'bm25', fingerprint: 'x' }] })).toEqual([]);
    const runs: ReportRun[] = [
      {
        id: 'facts',
        kind: 'http',
        fingerprint: 'a',
        textMapping: { hits: { byId: 10, byText: 50, byFuzzy: 20, returned: 20 }, results: 90, returnedResults: 18, returnedJudged: 12 },
      },
      { id: 'rrf', kind: 'fuse', fingerprint: 'b', textMapping: { results: 100, returnedResults: 9, returnedJudged: 9 } },
    ];
    const text = md(textMappingBlocks({ runs }));
    expect(text).toContain('## Text mapping');
    expect(text).toContain('| facts | 10 (10.0%) | 50 (50.0%) | 20 (20.0%) | 20 (20.0%) | 90 | 18 (20.0%) | 12 | 6 |');
    expect(text).toContain('| rrf |  |  |  |  | 100 | 9 (9.0%) | 9 | 0 |');
    expect(text).toContain('Unjudged Returned items score 0');
  });
});

describe('the Deviations section', () => {
  const dev = (kind: 'substitute' | 'assumption', stage: string, text: string, from: string) => ({ kind, stage, text, from });
  it('lists each labelled system with its counts, and what differs between the points of a grid', () => {
    const runs: ReportRun[] = [
      { id: 'bm25', kind: 'bm25', fingerprint: 'x' },
      {
        id: 'v1',
        kind: 'fuse',
        fingerprint: 'a',
        deviations: [dev('substitute', 'embedding', 'GloVe for bge-large', 'v1-dense'), dev('assumption', 'fusion', 'RRF k 60', 'v1')],
      },
      { id: 'g.recency=0.2', kind: 'fuse', fingerprint: 'b', group: 'g', deviations: [dev('assumption', 'rerank', 'recency weight 0.2', 'g')] },
      { id: 'g.recency=0', kind: 'fuse', fingerprint: 'c', group: 'g', deviations: [] },
    ];
    const text = md(deviationBlocks({ runs }));
    expect(text).toContain('## Deviations from sources');
    expect(text).toContain('| v1 | 1 substitute, 1 assumption | substitute | embedding | GloVe for bge-large | v1-dense |');
    expect(text).toContain('|  |  | assumption | fusion | RRF k 60 | v1 |');
    expect(text).toContain('| g | g.recency=0.2 | assumption: rerank: recency weight 0.2 |');
    expect(text).not.toContain('| bm25 |');
  });
});
