/**
 * `graph-ppr` ranking: seed a shaped concept graph from the query's concepts (by specificity) and, optionally,
 * from the top documents of input systems (by score), run Personalized PageRank, rank documents by their mass.
 * HippoRAG (Gutiérrez et al., NeurIPS 2024; HippoRAG 2, ICML 2025); docs/adr/0019-graph-arms.md.
 */
import { z } from 'zod';
import { personalizedPageRank } from '../../harness/graph/ppr.js';
import { builderParams } from './build.js';
import { matchConcepts } from './concepts.js';
import type { ConceptIndex } from './graph.js';
import { addConceptSeeds, inputSeedWeights, type ShapedGraph } from './shapes.js';

export const pprParamsSchema = z
  .object({
    ...builderParams,
    /** `passage`: HippoRAG's document + concept graph; `memory`: documents linked by shared concepts. */
    shape: z.enum(['passage', 'memory']).default('passage'),
    /** Probability of following an edge at each step (HippoRAG: 0.5). */
    damping: z.number().min(0).lt(1).default(0.5),
    /** Stop when one step changes the PPR vector by less than this (L1). */
    tolerance: z.number().positive().default(1e-6),
    maxIterations: z.number().int().positive().default(100),
    /** Where dangling nodes' mass goes: back to the seeds (igraph's personalized PageRank) or to every node. */
    dangling: z.enum(['seeds', 'uniform']).default('seeds'),
    /** Memory shape: concepts in more documents than this link no documents. */
    maxDf: z.number().int().min(2).default(50),
    /** Seed from the concepts matched in the query. */
    querySeeds: z.boolean().default(true),
    /** How many of each input's top documents seed the walk. */
    inputDepth: z.number().int().positive().default(20),
    /** Share of the seed mass given to the inputs' documents when the query's concepts seed too. */
    inputWeight: z.number().min(0).max(1).default(0.5),
  })
  .strict();

export type PprParams = z.output<typeof pprParamsSchema>;

/** One input system's ranking for a query, as document indexes and their seed weights. */
export interface InputSeeds {
  readonly docs: readonly number[];
  readonly weights: readonly number[];
}

export interface PprRanking {
  /** [document index, PPR mass], best first, at most topK, mass > 0 only. */
  readonly ranked: readonly (readonly [number, number])[];
  readonly seeded: boolean;
  readonly iterations: number;
  readonly ms: number;
}

/** Builds the seed vector and ranks; one instance per shaped graph, reusing its buffers across queries. */
export class PprRanker {
  private readonly seed: Float64Array;

  constructor(
    private readonly shaped: ShapedGraph,
    private readonly idx: ConceptIndex,
    private readonly p: PprParams,
  ) {
    this.seed = new Float64Array(shaped.nodes);
  }

  /** Concept ids matched in a query's canonical tokens (word-boundary: whole token runs only). */
  matched(tokens: readonly string[]): number[] {
    return this.p.querySeeds ? matchConcepts(tokens, this.idx.byName) : [];
  }

  rank(matched: readonly number[], inputs: readonly InputSeeds[], topK: number): PprRanking {
    const t0 = performance.now();
    const seed = this.seed;
    seed.fill(0);
    const conceptMass = addConceptSeeds(seed, this.shaped, this.idx, matched);
    let inputMass = 0;
    const extra = new Float64Array(this.shaped.documents);
    for (const input of inputs)
      input.docs.forEach((d, i) => {
        const w = input.weights[i] as number;
        extra[d] = (extra[d] as number) + w;
        inputMass += w;
      });
    if (inputMass > 0) {
      // Mix the two seed sources by inputWeight once both are normalised to sum 1.
      const conceptScale = conceptMass > 0 ? (1 - this.p.inputWeight) / conceptMass : 0;
      const inputScale = (conceptMass > 0 ? this.p.inputWeight : 1) / inputMass;
      for (let i = 0; i < seed.length; i++) seed[i] = (seed[i] as number) * conceptScale;
      for (let d = 0; d < extra.length; d++) seed[d] = (seed[d] as number) + (extra[d] as number) * inputScale;
    }
    if (!(conceptMass > 0 || inputMass > 0)) return { ranked: [], seeded: false, iterations: 0, ms: performance.now() - t0 };
    const r = personalizedPageRank(this.shaped.transition, seed, this.p);
    const D = this.shaped.documents;
    const order: number[] = [];
    for (let d = 0; d < D; d++) if ((r.scores[d] as number) > 0) order.push(d);
    order.sort((a, b) => (r.scores[b] as number) - (r.scores[a] as number) || a - b);
    const ranked = order.slice(0, topK).map((d) => [d, r.scores[d] as number] as const);
    return { ranked, seeded: true, iterations: r.iterations, ms: performance.now() - t0 };
  }
}

export { inputSeedWeights };
