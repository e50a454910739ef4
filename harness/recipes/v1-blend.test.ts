import { describe, expect, it } from 'vitest';
import { fuseNode } from '../systems/fuse.js';
import type { ScopeData, ScopeRun } from '../systems/types.js';

/** The v1 hybrid as configs/recipes-locomo.yaml writes it: cc, no normalisation (BM25 arrives divided by its max). */
const V1_HYBRID = { method: 'cc', normalization: 'none', weights: { vector: 0.7, bm25: 0.3 } };

const run = (results: Record<string, [string, number][]>): ScopeRun => ({ indexStats: {}, indexMs: 0, searchMs: 0, queryMs: {}, results });

describe('v1 hybrid: 0.7 x vector + 0.3 x BM25 / max', () => {
  it('blends hand-made scores; a document one input missed gets 0 from it', async () => {
    const r = fuseNode.bind({
      kind: 'fuse',
      params: V1_HYBRID,
      inputs: [
        { id: 'vector', theoreticalMinScore: -1, sendsTextOffMachine: false },
        { id: 'bm25', theoreticalMinScore: 0, sendsTextOffMachine: false },
      ],
      topK: 10,
    });
    if ('problems' in r) throw new Error(r.problems.join('\n'));
    const scope: ScopeData = {
      scope: undefined,
      documents: [],
      queries: [{ id: 'q', text: '', stratum: 's' }],
      corpusFingerprint: 'c',
      queriesFingerprint: 'q',
    };
    const vector = run({
      q: [
        ['a', 0.9],
        ['b', 0.5],
        ['c', 0.2],
      ],
    });
    // BM25 8, 3.2, 0.8 divided by the query max 8 (the bm25 arm's scale: query-max).
    const bm25 = run({
      q: [
        ['b', 8 / 8],
        ['c', 3.2 / 8],
        ['d', 0.8 / 8],
      ],
    });
    const out = await r.node.create(undefined as never).runScope(scope, [vector, bm25], 10);
    const got = out.results['q']!;
    expect(got.map(([d]) => d)).toEqual(['b', 'a', 'c', 'd']);
    expect(got[0]![1]).toBeCloseTo(0.7 * 0.5 + 0.3 * 1, 12);
    expect(got[1]![1]).toBeCloseTo(0.7 * 0.9, 12);
    expect(got[2]![1]).toBeCloseTo(0.7 * 0.2 + 0.3 * 0.4, 12);
    expect(got[3]![1]).toBeCloseTo(0.3 * 0.1, 12);
  });
});
