import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Document, Query } from '../../evalset/types.js';
import { ContentStore } from '../../harness/cache/index.js';
import { memoryLogger } from '../../harness/log.js';
import { bfsScore, entityBfs, entityGraph, entityLaneArm, graphBfsArm, type EntityGraph } from './entity-arms.js';
import { graphOf } from './graph.js';
import { tempDir } from '../../harness/testing/temp.js';

function ctx() {
  const log = memoryLogger();
  const dir = tempDir('harness-entity');
  return { cache: new ContentStore(join(dir, 'cache'), { log }), log, workDir: join(dir, 'work'), env: {} };
}

const q = (id: string, text: string, stratum = 'exact'): Query => ({ id, text, stratum });

/** A hand-made entity graph: neighbours listed heaviest first. */
function eg(adj: Record<number, number[]>): EntityGraph {
  const neighbours = new Map(Object.entries(adj).map(([k, v]) => [Number(k), v.map((n, i) => [n, v.length - i] as const)]));
  return { byName: new Map(), neighbours, relationships: 0 };
}

describe('entityBfs', () => {
  it('walks two hops, no further', () => {
    // 0 - 1 - 2 - 3
    const g = eg({ 0: [1], 1: [0, 2], 2: [1, 3], 3: [2] });
    expect([...entityBfs(g, [0], 2, 10, 20)]).toEqual([
      [0, 0],
      [1, 1],
      [2, 2],
    ]);
  });

  it('stops at 10 entities (seeds included), heaviest relationships first', () => {
    const g = eg({ 0: Array.from({ length: 15 }, (_, i) => i + 1) });
    const hops = entityBfs(g, [0], 2, 10, 20);
    expect(hops.size).toBe(10);
    expect([...hops.keys()]).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('stops at 20 relationships followed, counting those that reach a known entity', () => {
    // Seed 0 has 3 neighbours; each of them 10 neighbours of which the first 9 are already known.
    const g = eg({ 0: [1, 2, 3], 1: [0, 2, 3, 1, 1, 1, 1, 1, 1, 11], 2: [0, 1, 3, 2, 2, 2, 2, 2, 2, 12], 3: [0, 13] });
    const hops = entityBfs(g, [0], 2, 100, 20);
    // 3 from the seed, 10 from entity 1 (reaching 11), 7 from entity 2 (12 is its 10th): 20 followed.
    expect([...hops.keys()].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 11]);
  });
});

describe('graph-bfs and entity-lane arms', () => {
  const corpus: Document[] = [
    { id: 'd1', text: 'Tom adopted a beagle named Biscuit.' },
    { id: 'd2', text: 'Biscuit loves the vet, Dr. Okafor. Biscuit is a beagle.' },
    { id: 'd3', text: 'Dr. Okafor works at Lakeside Clinic.' },
    { id: 'd4', text: 'I planted a tomato in the garden.' },
    { id: 'd5', text: 'Lakeside Clinic opened in Ballard.' },
  ];

  it('entity-lane: every document mentioning an entity named in the query, never a word that only contains it', async () => {
    const arm = entityLaneArm.create('lane', entityLaneArm.params.parse({}), ctx());
    const stats = await arm.index(corpus);
    expect(stats.documents).toBe(5);
    expect(await arm.search(q('q1', 'What did Tom plant, a tomato?'), 10)).toEqual([{ docId: 'd1', score: 1 + 1 / 2 }]);
    // Biscuit: d2 mentions it twice, d1 once.
    const got = await arm.search(q('q2', 'Who is Biscuit?', 'multi-hop'), 10);
    expect(got.map((d) => d.docId)).toEqual(['d2', 'd1']);
    expect(got[0]?.score).toBeCloseTo(1 + 2 / 3, 15);
    expect(await arm.search(q('q3', 'what about the garden?', 'multi-hop'), 10)).toEqual([]);
    expect(arm.searchStats?.()).toEqual({
      queries: 3,
      seededQueries: 2,
      'queries.exact': 1,
      'seededQueries.exact': 1,
      'queries.multi-hop': 2,
      'seededQueries.multi-hop': 1,
    });
  });

  it('entity-lane with resolve: tiers unifies spellings of one entity (Phillip / Filip by the phonetic tier), not others', async () => {
    const docs: Document[] = [
      { id: 'a1', text: 'Phillip moved to Denver in May.' },
      { id: 'a2', text: 'Phillip and Maria went hiking.' },
      { id: 'a3', text: 'Filip bought a red bike.' },
      { id: 'a4', text: 'Maria painted the fence.' },
    ];
    const plain = entityLaneArm.create('lane', entityLaneArm.params.parse({}), ctx());
    await plain.index(docs);
    expect((await plain.search(q('q1', 'Where does Filip live?'), 10)).map((d) => d.docId)).toEqual(['a3']);
    const resolved = entityLaneArm.create('lane', entityLaneArm.params.parse({ resolve: 'tiers' }), ctx());
    const stats = await resolved.index(docs);
    // Phillip (2 documents) is canonical; Filip joins it (Jaro-Winkler 0.79 < 0.9, equal Metaphone keys FLP).
    const names = stats.graphNodes as number;
    expect(stats.resolvedEntities).toBe(names - 1);
    const got = await resolved.search(q('q1', 'Where does Filip live?'), 10);
    // One entity matched: each document counts 1, its mentions of either spelling break ties (1 + 1/2 each).
    expect(got).toEqual([
      { docId: 'a1', score: 1 + 1 / 2 },
      { docId: 'a2', score: 1 + 1 / 2 },
      { docId: 'a3', score: 1 + 1 / 2 },
    ]);
    expect((await resolved.search(q('q2', 'What did Maria paint?'), 10)).map((d) => d.docId)).toEqual(['a2', 'a4']);
    // The resolver is part of the identity; the unresolved lane keeps its old fingerprint.
    expect(Object.keys(entityLaneArm.fingerprint(entityLaneArm.params.parse({})) as object)).toEqual(['kind', 'v', 'graph']);
    expect(entityLaneArm.fingerprint(entityLaneArm.params.parse({ resolve: 'tiers' }))).toMatchObject({ resolve: 'tiers', fuzzyThreshold: 0.9 });
    // WorldDB's Soundex-style key unifies them too (both F410), and names itself in the identity.
    const soundexLane = entityLaneArm.create('lane', entityLaneArm.params.parse({ resolve: 'tiers', phonetic: 'soundex' }), ctx());
    expect((await soundexLane.index(docs)).resolvedEntities).toBe(names - 1);
    expect((await soundexLane.search(q('q1', 'Where does Filip live?'), 10)).map((d) => d.docId)).toEqual(['a1', 'a2', 'a3']);
    expect(entityLaneArm.fingerprint(entityLaneArm.params.parse({ resolve: 'tiers', phonetic: 'soundex' }))).toMatchObject({ phonetic: 'soundex' });
    expect(entityLaneArm.fingerprint(entityLaneArm.params.parse({ resolve: 'tiers' }))).not.toHaveProperty('phonetic');
  });

  it('graph-bfs: documents by hop distance from the query entities, then mentions', async () => {
    const arm = graphBfsArm.create('bfs', graphBfsArm.params.parse({}), ctx());
    await arm.index(corpus);
    const got = await arm.search(q('q1', 'Where does Tom take Biscuit?'), 10);
    // Tom and Biscuit are seeds (hop 0): d1 (both), d2 (Biscuit twice). Okafor is one hop away (co-mentioned
    // with Biscuit in d2): d3. Lakeside Clinic two hops: d5.
    expect(got.map((d) => d.docId)).toEqual(['d2', 'd1', 'd3', 'd5']);
    expect(got[0]?.score).toBe(bfsScore(2, 0, 3));
    expect(got[2]?.score).toBe(bfsScore(2, 1, 2));
    // One hop only: Lakeside Clinic is out of reach.
    const near = graphBfsArm.create('bfs1', graphBfsArm.params.parse({ maxHops: 1 }), ctx());
    await near.index(corpus);
    expect((await near.search(q('q1', 'Where does Tom take Biscuit?'), 10)).map((d) => d.docId)).toEqual(['d2', 'd1', 'd3']);
  });

  it('links entities a document mentions together', () => {
    const g = entityGraph(
      graphOf(
        ['a', 'b'],
        [
          { concepts: ['tom', 'biscuit', 'dog'], entities: ['tom', 'biscuit'] },
          { concepts: ['biscuit', 'okafor'], entities: ['biscuit', 'okafor'] },
        ],
      ),
    );
    expect(g.relationships).toBe(2);
    expect(g.neighbours.get(g.byName.get('biscuit') as number)?.map(([n]) => n)).toEqual([0, 3]);
  });
});
