/**
 * Graph shapes over a concept graph, and query seeding. `passage` (HippoRAG): document and concept nodes,
 * document-concept edges, concept-concept synonym and relation edges. `memory`: documents only, two documents
 * linked by the concepts they share. Both are undirected (each edge read both ways), as HippoRAG's igraph graph.
 */
import { buildCsr, transitionMatrix, type Transition } from '../../harness/graph/ppr.js';
import type { ConceptGraph, ConceptIndex } from './graph.js';

export type GraphShape = 'passage' | 'memory';

export interface ShapedGraph {
  readonly shape: GraphShape;
  readonly transition: Transition;
  /** Node count (documents, plus concepts in the passage shape). */
  readonly nodes: number;
  /** Undirected edges (each counted once). */
  readonly edges: number;
  readonly documents: number;
}

/**
 * The transition matrix of a shape. `passage`: nodes `0..D-1` documents, `D..D+C-1` concepts; a document-concept
 * edge per mentioned concept (weight 1, HippoRAG 2's passage-phrase weight) and each concept link with its weight.
 * `memory`: documents `d1 != d2` linked with weight `Σ 1/df(c)` over the concepts `c` they share, skipping
 * concepts in more than `maxDf` documents (a concept in every document links everything and says nothing).
 */
export function shapeGraph(g: ConceptGraph, idx: ConceptIndex, shape: GraphShape, maxDf: number): ShapedGraph {
  const D = g.docIds.length;
  const src: number[] = [];
  const dst: number[] = [];
  const w: number[] = [];
  const both = (a: number, b: number, weight: number) => {
    src.push(a, b);
    dst.push(b, a);
    w.push(weight, weight);
  };
  let nodes = D;
  if (shape === 'passage') {
    nodes = D + g.concepts.length;
    for (let d = 0; d < D; d++) for (let i = g.docPtr[d] as number; i < (g.docPtr[d + 1] as number); i++) both(d, D + (g.docConcept[i] as number), 1);
    for (let e = 0; e < g.linkSrc.length; e++) {
      const a = g.linkSrc[e] as number;
      const b = g.linkDst[e] as number;
      if (a !== b) both(D + a, D + b, g.linkWeight[e] as number);
    }
  } else {
    for (let c = 0; c < g.concepts.length; c++) {
      const lo = idx.ptr[c] as number;
      const df = (idx.ptr[c + 1] as number) - lo;
      if (df < 2 || df > maxDf) continue;
      for (let i = lo; i < lo + df; i++) for (let j = i + 1; j < lo + df; j++) both(idx.doc[i] as number, idx.doc[j] as number, 1 / df);
    }
  }
  const adjacency = buildCsr(nodes, Int32Array.from(src), Int32Array.from(dst), Float64Array.from(w));
  // Duplicate pairs were summed: count the distinct undirected edges from the merged matrix.
  let selfLoops = 0;
  for (let r = 0; r < nodes; r++)
    for (let i = adjacency.indptr[r] as number; i < (adjacency.indptr[r + 1] as number); i++) if (adjacency.indices[i] === r) selfLoops++;
  const edges = ((adjacency.indptr[nodes] as number) - selfLoops) / 2 + selfLoops;
  return { shape, transition: transitionMatrix(adjacency), nodes, edges, documents: D };
}

/** Documents containing concept `c`. */
export function documentFrequency(idx: ConceptIndex, c: number): number {
  return (idx.ptr[c + 1] as number) - (idx.ptr[c] as number);
}

/**
 * Seeds from concepts matched in a query, each weighted by its specificity `1 / df(c)` (HippoRAG's node
 * specificity): on the concept node (`passage`), or spread onto every document mentioning it (`memory`).
 * Adds into `seed` (length = nodes) and returns the total added.
 */
export function addConceptSeeds(seed: Float64Array, shaped: ShapedGraph, idx: ConceptIndex, matched: readonly number[]): number {
  let total = 0;
  for (const c of matched) {
    const df = documentFrequency(idx, c);
    if (df === 0) continue;
    const s = 1 / df;
    if (shaped.shape === 'passage') {
      const at = shaped.documents + c;
      seed[at] = (seed[at] as number) + s;
      total += s;
    } else {
      for (let i = idx.ptr[c] as number; i < (idx.ptr[c + 1] as number); i++) {
        const d = idx.doc[i] as number;
        seed[d] = (seed[d] as number) + s;
        total += s;
      }
    }
  }
  return total;
}

/**
 * Seeds from an input system's ranking: each of its documents weighted by its score mapped to [0, 1] as TM2C2
 * does, `(score - min) / (max - min)` with `min` the input's theoretical minimum score, or the least score read
 * when it declares none (then its last document weighs 0). All scores equal: each weighs 1.
 */
export function inputSeedWeights(scores: readonly number[], theoreticalMin: number | undefined): number[] {
  if (scores.length === 0) return [];
  let max = Number.NEGATIVE_INFINITY;
  let least = Number.POSITIVE_INFINITY;
  for (const s of scores) {
    if (s > max) max = s;
    if (s < least) least = s;
  }
  const min = theoreticalMin ?? least;
  if (!(max > min)) return scores.map(() => 1);
  return scores.map((s) => Math.max(0, (s - min) / (max - min)));
}
