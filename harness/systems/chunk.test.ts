import { describe, expect, it } from 'vitest';
import type { Document, Query } from '../../evalset/types.js';
import { memoryLogger } from '../log.js';
import { chunkNode } from './chunk.js';
import type { NodeContext, ScopeData } from './types.js';

const ctx: NodeContext = { cache: undefined as never, log: memoryLogger(), workDir: '/nonexistent', env: {} };

function scopeOf(documents: Document[], queries: Query[]): ScopeData {
  return { scope: undefined, documents, queries, corpusFingerprint: 'c', queriesFingerprint: 'q' };
}

const bm25 = { kind: 'bm25', params: { preset: 'simple', k1: 1.2, b: 0.75 } };

describe('chunk node', () => {
  it('fills the v1 defaults and wraps the arm in its kind and fingerprint', () => {
    const r = chunkNode.bind({ kind: 'chunk', params: { arm: bm25 }, inputs: [], topK: 10 });
    if ('problems' in r) throw new Error(r.problems.join('\n'));
    expect(r.node.kind).toBe('chunk(bm25)');
    expect(r.node.params).toMatchObject({ size: 1600, overlap: 320, minBoundary: 0.5, arm: { kind: 'bm25', params: { k1: 1.2, b: 0.75 } } });
    expect(r.node.theoreticalMinScore).toBe(0);
  });

  it('reports problems of its own params and of the wrapped arm', () => {
    const r = chunkNode.bind({ kind: 'chunk', params: { arm: { kind: 'bm26' }, overlap: 900 }, inputs: [], topK: 10 });
    expect('problems' in r ? r.problems : []).toEqual([expect.stringMatching(/^params\.overlap: overlap must be below/)]);
    const r2 = chunkNode.bind({ kind: 'chunk', params: { arm: { kind: 'bm26' } }, inputs: [], topK: 10 });
    expect('problems' in r2 ? r2.problems : []).toEqual([expect.stringMatching(/^params\.arm\.kind: unknown arm kind "bm26"; did you mean "bm25"/)]);
  });

  it('searches chunks with their date header and scores each document by its best chunk', async () => {
    const long = `${'filler words here. '.repeat(60)}The adoption agency called about the interview. ${'more filler text. '.repeat(60)}`;
    const docs: Document[] = [
      { id: 'long', text: long, timestamp: '2023-05-08T13:56:00' },
      { id: 'short', text: 'adoption papers signed', timestamp: '2023-07-01T10:00:00' },
      { id: 'other', text: 'painting by the lake', timestamp: '2023-05-08T09:00:00' },
    ];
    const r = chunkNode.bind({ kind: 'chunk', params: { arm: bm25 }, inputs: [], topK: 10 });
    if ('problems' in r) throw new Error(r.problems.join('\n'));
    const inst = r.node.create(ctx);
    const run = await inst.runScope(
      scopeOf(docs, [
        { id: 'q1', text: 'adoption agency interview', stratum: 's' },
        { id: 'q2', text: 'memories from 2023 07 01', stratum: 's' },
      ]),
      [],
      10,
    );
    // long (2,269 characters) is cut into 2 chunks (the second from about 1,280 on), the other two stay whole.
    expect(run.indexStats['chunks']).toBe(4);
    expect(run.indexStats['documents']).toBe(4);
    const q1 = run.results['q1']!;
    expect(q1.map(([d]) => d)).toEqual(['long', 'short']);
    // each document once, as the source id, never a chunk id
    expect(new Set(q1.map(([d]) => d)).size).toBe(q1.length);
    // the header is indexed: only "short" is dated 2023-07-01 (the "07" and "01" tokens)
    expect(run.results['q2']![0]![0]).toBe('short');
  });
});
