/**
 * Entity arms over the concept graph's named entities (docs/adr/0019-graph-arms.md):
 * - `graph-bfs`, the "v1" RAG provider's entity graph: entities linked when a document mentions both (or by an
 *   extracted relation); seed entities found in the query by word-boundary match, a breadth-first walk of at
 *   most `maxHops` hops capped at `maxEntities` entities and `maxRelationships` relationships, documents ranked
 *   by hop distance, then by mentions of the reached entities.
 * - `entity-lane` (WorldDB): every document mentioning an entity whose canonical name appears in the query,
 *   ranked by how many such entities it mentions, then by their mentions. With `resolve: tiers` the corpus's
 *   entity names are first unified by WorldDB's tiered resolver (harness/recipes/resolver.ts: exact or alias,
 *   Jaro-Winkler, phonetic key: WorldDB's Soundex-style key or Metaphone), so a query naming "Filip" also reaches the documents that spell him "Phillip".
 */
import { z } from 'zod';
import type { Corpus, Query } from '../../evalset/types.js';
import { HarnessError } from '../../harness/errors.js';
import type { Arm, ArmContext, ArmFactory, IndexStats, ScoredDoc } from '../types.js';
import { builderIdentity, builderParams, corpusGraph, graphSendsText, graphStats } from './build.js';
import { matchConcepts, type ConceptExtractor } from './concepts.js';
import { type ConceptGraph, type ConceptIndex, conceptIndex } from './graph.js';
import { type Entity, type PhoneticCode, resolveEntity } from '../../harness/recipes/resolver.js';

/** Bump when a change to matching or ranking changes any score for the same params and graph. */
const RANKING_VERSION = 1;

const bfsParams = z
  .object({
    ...builderParams,
    maxHops: z.number().int().min(0).default(2),
    maxEntities: z.number().int().positive().default(10),
    maxRelationships: z.number().int().min(0).default(20),
  })
  .strict();
const laneParams = z
  .object({
    ...builderParams,
    /** `none`: names match as extracted. `tiers`: variants of one entity are unified first (WorldDB's resolver). */
    resolve: z.enum(['none', 'tiers']).default('none'),
    /** Jaro-Winkler similarity the fuzzy tier needs (`resolve: tiers`). */
    fuzzyThreshold: z.number().min(0).max(1).default(0.9),
    /** The phonetic tier's key (`resolve: tiers`): WorldDB's Soundex-style key, or Metaphone (the first one here). */
    phonetic: z.enum(['metaphone', 'soundex']).default('metaphone'),
  })
  .strict();

/** Entity -> entity relationships: entities mentioned by one document, weighted by how many documents do. */
export interface EntityGraph {
  /** Entity-only dictionary: canonical name -> concept id. */
  readonly byName: ReadonlyMap<string, number>;
  /** Per concept id (entities only non-empty): [neighbour concept id, weight], heaviest first, ties by id. */
  readonly neighbours: ReadonlyMap<number, readonly (readonly [number, number])[]>;
  readonly relationships: number;
}

export function entityGraph(g: ConceptGraph): EntityGraph {
  const byName = new Map<string, number>();
  g.concepts.forEach((name, c) => {
    if (g.entity[c] === 1) byName.set(name, c);
  });
  const weights = new Map<number, Map<number, number>>();
  const link = (a: number, b: number, w: number) => {
    if (a === b) return;
    for (const [x, y] of [
      [a, b],
      [b, a],
    ] as const) {
      const m = weights.get(x) ?? new Map<number, number>();
      m.set(y, (m.get(y) ?? 0) + w);
      weights.set(x, m);
    }
  };
  for (let d = 0; d < g.docIds.length; d++) {
    const ents: number[] = [];
    for (let i = g.docPtr[d] as number; i < (g.docPtr[d + 1] as number); i++)
      if (g.entity[g.docConcept[i] as number] === 1) ents.push(g.docConcept[i] as number);
    for (let i = 0; i < ents.length; i++) for (let j = i + 1; j < ents.length; j++) link(ents[i] as number, ents[j] as number, 1);
  }
  for (let e = 0; e < g.linkSrc.length; e++) {
    const a = g.linkSrc[e] as number;
    const b = g.linkDst[e] as number;
    if (g.entity[a] === 1 && g.entity[b] === 1) link(a, b, g.linkWeight[e] as number);
  }
  const neighbours = new Map<number, [number, number][]>();
  let relationships = 0;
  for (const [c, m] of weights) {
    neighbours.set(
      c,
      [...m].sort((x, y) => y[1] - x[1] || x[0] - y[0]),
    );
    relationships += m.size;
  }
  return { byName, neighbours, relationships: relationships / 2 };
}

/**
 * Breadth-first from the seeds (hop 0, in query order): each entity's relationships are followed heaviest first;
 * every relationship followed counts against `maxRelationships`, every entity reached against `maxEntities`
 * (seeds included). Returns entity -> hop.
 */
export function entityBfs(eg: EntityGraph, seeds: readonly number[], maxHops: number, maxEntities: number, maxRelationships: number): Map<number, number> {
  const hop = new Map<number, number>();
  const queue: number[] = [];
  for (const s of seeds) {
    if (hop.size >= maxEntities) break;
    if (!hop.has(s)) {
      hop.set(s, 0);
      queue.push(s);
    }
  }
  let followed = 0;
  for (let head = 0; head < queue.length; head++) {
    const e = queue[head] as number;
    const h = hop.get(e) as number;
    if (h >= maxHops) continue;
    for (const [n] of eg.neighbours.get(e) ?? []) {
      if (followed >= maxRelationships || hop.size >= maxEntities) return hop;
      followed++;
      if (hop.has(n)) continue;
      hop.set(n, h + 1);
      queue.push(n);
    }
  }
  return hop;
}

/**
 * Entity id -> the ids of every entity the resolver unifies with it (itself included). Names are resolved in
 * order of document frequency (then name), each against the canonical entities already kept: the most
 * frequent spelling becomes canonical, a name no tier accepts starts an entity of its own.
 */
export function resolvedEntities(
  eg: EntityGraph,
  idx: ConceptIndex,
  fuzzyThreshold: number,
  phonetic: PhoneticCode = 'metaphone',
): Map<number, readonly number[]> {
  const df = (c: number) => (idx.ptr[c + 1] as number) - (idx.ptr[c] as number);
  const names = [...eg.byName].sort((a, b) => df(b[1]) - df(a[1]) || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const canonical: Entity[] = [];
  const members = new Map<string, number[]>();
  for (const [name, c] of names) {
    const hit = resolveEntity(name, canonical, { fuzzyThreshold, cosineThreshold: 1, phonetic });
    if (hit) (members.get(hit.id) as number[]).push(c);
    else {
      canonical.push({ id: String(c), name });
      members.set(String(c), [c]);
    }
  }
  const out = new Map<number, readonly number[]>();
  for (const group of members.values()) for (const c of group) out.set(c, group);
  return out;
}

/**
 * Documents mentioning the entities of `entities` (entity -> key): per document the smallest key, the number of
 * entities (or, with `countKeys`, of distinct keys: resolved groups) and the summed mentions.
 */
function documentsOf(
  idx: ConceptIndex,
  entities: ReadonlyMap<number, number>,
  countKeys = false,
): Map<number, { best: number; count: number; mentions: number }> {
  const docs = new Map<number, { best: number; count: number; mentions: number }>();
  const keysOf = new Map<number, Set<number>>();
  for (const [c, key] of entities) {
    for (let i = idx.ptr[c] as number; i < (idx.ptr[c + 1] as number); i++) {
      const d = idx.doc[i] as number;
      const cur = docs.get(d) ?? { best: Number.POSITIVE_INFINITY, count: 0, mentions: 0 };
      let fresh = true;
      if (countKeys) {
        const seen = keysOf.get(d) ?? new Set<number>();
        fresh = !seen.has(key);
        seen.add(key);
        keysOf.set(d, seen);
      }
      docs.set(d, { best: Math.min(cur.best, key), count: cur.count + (fresh ? 1 : 0), mentions: cur.mentions + (idx.mentions[i] as number) });
    }
  }
  return docs;
}

function ranked(graph: ConceptGraph, scored: [number, number][], topK: number): ScoredDoc[] {
  scored.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  return scored.slice(0, topK).map(([d, s]) => ({ docId: graph.docIds[d] as string, score: s }));
}

interface EntityState {
  readonly graph: ConceptGraph;
  readonly idx: ConceptIndex;
  readonly eg: EntityGraph;
  readonly extractor: ConceptExtractor;
  /** With `resolve: tiers`: entity -> every entity unified with it. */
  readonly resolved?: ReadonlyMap<number, readonly number[]>;
}

/** The shared arm body: index builds (or loads) the graph; search counts seeded queries per stratum. */
function entityArm(
  id: string,
  p: z.output<typeof bfsParams> | z.output<typeof laneParams>,
  ctx: ArmContext,
  rank: (s: EntityState, seeds: number[], topK: number) => ScoredDoc[],
): Arm {
  let state: EntityState | undefined;
  let counters: Record<string, number> = {};
  const bump = (k: string) => {
    counters[k] = (counters[k] ?? 0) + 1;
  };
  return {
    id,
    async index(corpus: Corpus): Promise<IndexStats> {
      const { graph, extractor, cached } = await corpusGraph(corpus, p, ctx);
      const idx = conceptIndex(graph);
      const eg = entityGraph(graph);
      const resolved = 'resolve' in p && p.resolve === 'tiers' ? resolvedEntities(eg, idx, p.fuzzyThreshold, p.phonetic) : undefined;
      state = { graph, idx, eg, extractor, ...(resolved === undefined ? {} : { resolved }) };
      counters = { queries: 0, seededQueries: 0 };
      const merged: Record<string, number> = resolved === undefined ? {} : { resolvedEntities: new Set([...resolved.values()]).size };
      return {
        documents: graph.docIds.length,
        ...graphStats(graph),
        graphNodes: eg.byName.size,
        graphEdges: eg.relationships,
        graphCached: cached ? 1 : 0,
        ...merged,
      };
    },
    async search(query: Query, topK: number): Promise<readonly ScoredDoc[]> {
      if (state === undefined) throw new HarnessError(`arm '${id}': search called before index`);
      const seeds = matchConcepts(state.extractor.tokens(query.text), state.eg.byName);
      bump('queries');
      bump(`queries.${query.stratum}`);
      if (seeds.length === 0) return [];
      bump('seededQueries');
      bump(`seededQueries.${query.stratum}`);
      return rank(state, seeds, topK);
    },
    searchStats: () => ({ ...counters }),
  };
}

/**
 * Score of a document at `hop` with `mentions` mentions of reached entities: `(maxHops - hop) + m / (m + 1)`,
 * so hop distance decides and mentions break ties; >= 0.
 */
export function bfsScore(maxHops: number, hop: number, mentions: number): number {
  return maxHops - hop + mentions / (mentions + 1);
}

export const graphBfsArm: ArmFactory<typeof bfsParams> = {
  kind: 'graph-bfs',
  summary: 'entity graph (co-mentions): 2-hop BFS from the entities named in the query, documents by hop then mentions',
  params: bfsParams,
  fingerprint: (p) => ({
    kind: 'graph-bfs',
    v: RANKING_VERSION,
    graph: builderIdentity(p),
    maxHops: p.maxHops,
    maxEntities: p.maxEntities,
    maxRelationships: p.maxRelationships,
  }),
  theoreticalMinScore: () => 0,
  sendsTextOffMachine: (p) => graphSendsText(p),
  create: (id, p, ctx) =>
    entityArm(id, p, ctx, (s, seeds, topK) => {
      const hops = entityBfs(s.eg, seeds, p.maxHops, p.maxEntities, p.maxRelationships);
      const docs = documentsOf(s.idx, hops);
      return ranked(
        s.graph,
        [...docs].map(([d, x]) => [d, bfsScore(p.maxHops, x.best, x.mentions)]),
        topK,
      );
    }),
};

export const entityLaneArm: ArmFactory<typeof laneParams> = {
  kind: 'entity-lane',
  summary: 'every document mentioning an entity named in the query, by matched entities then mentions',
  params: laneParams,
  // Unresolved lanes keep the fingerprint they had before the resolver existed, so their cached runs stay valid.
  fingerprint: (p) => ({
    kind: 'entity-lane',
    v: RANKING_VERSION,
    graph: builderIdentity(p),
    ...(p.resolve === 'none' ? {} : { resolve: p.resolve, fuzzyThreshold: p.fuzzyThreshold }),
    // Metaphone lanes keep the fingerprint they had before the Soundex-style key existed.
    ...(p.resolve === 'none' || p.phonetic === 'metaphone' ? {} : { phonetic: p.phonetic }),
  }),
  theoreticalMinScore: () => 0,
  sendsTextOffMachine: (p) => graphSendsText(p),
  create: (id, p, ctx) =>
    entityArm(id, p, ctx, (s, seeds, topK) => {
      // Each matched entity stands for its resolved group: one key per group, so `count` counts entities, not spellings.
      const groups = new Map<number, number>();
      for (const c of seeds) for (const m of s.resolved?.get(c) ?? [c]) if (!groups.has(m)) groups.set(m, (s.resolved?.get(m) ?? [m])[0] as number);
      const docs = documentsOf(s.idx, groups, true);
      // `count` distinct matched entities decide; mentions break ties: count + m / (m + 1).
      return ranked(
        s.graph,
        [...docs].map(([d, x]) => [d, x.count + x.mentions / (x.mentions + 1)]),
        topK,
      );
    }),
};
