import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Document, Query } from '../../evalset/types.js';
import { ContentStore } from '../cache/index.js';
import { memoryLogger } from '../log.js';
import { graphPprNode } from './graph.js';
import type { BoundNode, InputFacts, ScopeData, ScopeRun } from './types.js';
import { tempDir } from '../testing/temp.js';

const documents: Document[] = [
  { id: 'd1', text: 'Maya moved to Lisbon in March.' },
  { id: 'd2', text: 'Lisbon has yellow trams.' },
  { id: 'd3', text: 'The trams run on electricity.' },
  { id: 'd4', text: 'Alex bought a bicycle.' },
];
const queries: Query[] = [
  { id: 'q1', text: 'Where did Maya move?', stratum: 'exact' },
  { id: 'q2', text: 'What powers the trams?', stratum: 'multi-hop' },
  { id: 'q3', text: 'Any news today?', stratum: 'multi-hop' },
];
const scope: ScopeData = { scope: undefined, documents, queries, corpusFingerprint: 'c', queriesFingerprint: 'q' };

function bind(params: unknown, inputs: InputFacts[] = []): BoundNode {
  const r = graphPprNode.bind({ kind: 'graph-ppr', params, inputs, topK: 10 });
  if (!('node' in r)) throw new Error(r.problems.join('; '));
  return r.node;
}

function ctx() {
  const log = memoryLogger();
  const dir = tempDir('harness-graph-node');
  return { cache: new ContentStore(join(dir, 'cache'), { log }), log, workDir: join(dir, 'work'), env: {} };
}

describe('graph-ppr node', () => {
  it('ranks documents by PPR mass from the query concepts; a query without a seed gets an empty ranking, counted', async () => {
    const run = await bind({}).create(ctx()).runScope(scope, [], 10);
    // Maya seeds d1; mass flows through lisbon to d2, through tram to d3; d4 shares no concept.
    expect(run.results['q1']?.map(([d]) => d)).toEqual(['d1', 'd2', 'd3']);
    expect(run.results['q2']?.[0]?.[0]).toBe('d3');
    expect(run.results['q3']).toEqual([]);
    expect(run.indexStats).toMatchObject({
      queries: 3,
      seededQueries: 2,
      'queries.exact': 1,
      'seededQueries.exact': 1,
      'queries.multi-hop': 2,
      'seededQueries.multi-hop': 1,
    });
    expect(run.indexStats['graphNodes']).toBe(4 + (run.indexStats['concepts'] as number));
    expect(run.indexStats['pprIterations']).toBeGreaterThan(0);
    const scores = run.results['q1']?.map(([, s]) => s) ?? [];
    expect(scores.every((s) => s > 0 && s < 1)).toBe(true);
  });

  it('seeds from an input system too: a query with no concept seeds its input top documents', async () => {
    const node = bind({ inputDepth: 1 }, [{ id: 'bm25', theoreticalMinScore: 0, sendsTextOffMachine: false }]);
    const input: ScopeRun = {
      indexStats: {},
      indexMs: 0,
      searchMs: 0,
      queryMs: {},
      results: {
        q1: [],
        q2: [],
        q3: [
          ['d4', 2],
          ['d1', 1],
        ],
      },
    };
    const run = await node.create(ctx()).runScope(scope, [input], 10);
    // Only d4 is read (depth 1); d4 has concepts (alex, bicycle) but no neighbour document.
    expect(run.results['q3']?.map(([d]) => d)).toEqual(['d4']);
    expect(run.indexStats['seededQueries']).toBe(3);
  });

  it('puts input seeding into the fingerprint only when there are inputs; refuses a node with no possible seed', () => {
    expect(JSON.stringify(bind({}).fingerprint)).not.toContain('inputDepth');
    expect(JSON.stringify(bind({}, [{ id: 'x', theoreticalMinScore: 0, sendsTextOffMachine: false }]).fingerprint)).toContain('inputDepth');
    // An LLM graph: the model and prompt enter the fingerprint, the endpoint (which may carry a token) never does.
    const llm = bind({ concepts: 'llm', llm: { model: 'm1', baseURL: 'https://user:tok-in-url-123@llm.example/v1' } });
    expect(llm.sendsTextOffMachine).toBe(true);
    expect(JSON.stringify(llm.fingerprint)).toContain('"model":"m1"');
    expect(JSON.stringify(llm.fingerprint)).not.toContain('tok-in-url-123');
    expect(bind({}).sendsTextOffMachine).toBe(false);
    const r = graphPprNode.bind({ kind: 'graph-ppr', params: { querySeeds: false }, inputs: [], topK: 10 });
    expect('problems' in r && r.problems[0]).toMatch(/querySeeds/);
    const bad = graphPprNode.bind({ kind: 'graph-ppr', params: { damping: 1, shape: 'tree' }, inputs: [], topK: 10 });
    expect('problems' in bad && bad.problems.join('\n')).toMatch(/params\.shape[\s\S]*params\.damping|params\.damping[\s\S]*params\.shape/);
  });
});
