import { corpusGraph, graphSendsText, graphStats, llmOf } from '../../arms/graph/build.js';
import { llmIdentity } from '../../arms/graph/llm.js';
import { conceptIndex } from '../../arms/graph/graph.js';
import { type InputSeeds, inputSeedWeights, PprRanker, pprParamsSchema } from '../../arms/graph/ppr-rank.js';
import { shapeGraph } from '../../arms/graph/shapes.js';
import { parseNodeParams, shownParams } from './node-params.js';
import type { NodeKind, ScopeResults } from './types.js';

/** Bump when a change to seeding or ranking changes any score for the same params and graph. */
const RANKING_VERSION = 1;

/**
 * `graph-ppr`: Personalized PageRank over the concept graph of each scope (docs/adr/0019-graph-arms.md). Seeds
 * are the concepts matched in the query, weighted by specificity, plus the top `inputDepth` documents of each
 * input system weighted by score; with no inputs it is a plain retrieval node. A query with no seed gets an empty
 * ranking (counted in the stats as not seeded), never an error. Index stats (summed over scopes by the runner):
 * graph size, seeded queries overall and per stratum (`seededQueries.<stratum>` of `queries.<stratum>`), PPR
 * iterations and milliseconds summed over queries.
 */
export const graphPprNode: NodeKind = {
  summary: 'Personalized PageRank over a concept graph, seeded by the query and optionally by input systems',
  arity: { min: 0, max: 16 },
  params: pprParamsSchema,
  bind({ params, inputs }) {
    const r = parseNodeParams(pprParamsSchema, params);
    if ('problems' in r) return r;
    const p = r.data;
    if (!p.querySeeds && inputs.length === 0) return { problems: ['params.querySeeds: false leaves no seeds without inputs; list inputs or set it true'] };
    const mins = inputs.map((i) => i.theoreticalMinScore);
    // An LLM enters by its identity (model, prompt, batch size): its endpoint, which may carry a token, never does.
    const { inputDepth, inputWeight, llm: _llm, ...own } = p;
    return {
      node: {
        kind: 'graph-ppr',
        params: shownParams(p),
        fingerprint: {
          node: 'graph-ppr',
          v: RANKING_VERSION,
          ...own,
          ...(p.concepts === 'llm' ? { llm: llmIdentity(llmOf(p)) } : {}),
          // Input seeding params matter only when there are inputs.
          ...(inputs.length > 0 ? { inputDepth, inputWeight, inputMins: mins.map((m) => m ?? null) } : {}),
        },
        theoreticalMinScore: 0,
        sendsTextOffMachine: graphSendsText(p),
        create(ctx) {
          return {
            async runScope(scope, inputRuns, topK) {
              const t0 = performance.now();
              const { graph, extractor, cached } = await corpusGraph(scope.documents, p, ctx);
              const idx = conceptIndex(graph);
              const shaped = shapeGraph(graph, idx, p.shape, p.maxDf);
              const ranker = new PprRanker(shaped, idx, p);
              const docIndex = new Map(graph.docIds.map((id, i) => [id, i]));
              const t1 = performance.now();
              const results: ScopeResults = {};
              const queryMs: Record<string, number> = {};
              const stats: Record<string, number> = {
                ...graphStats(graph),
                graphNodes: shaped.nodes,
                graphEdges: shaped.edges,
                graphCached: cached ? 1 : 0,
                queries: 0,
                seededQueries: 0,
                pprIterations: 0,
                pprMs: 0,
              };
              const bump = (k: string, by = 1) => {
                stats[k] = (stats[k] ?? 0) + by;
              };
              for (const q of scope.queries) {
                const ts = performance.now();
                const seeds: InputSeeds[] = inputRuns.map((run, k) => {
                  const top = (run.results[q.id] ?? []).slice(0, inputDepth).filter(([d]) => docIndex.has(d));
                  return {
                    docs: top.map(([d]) => docIndex.get(d) as number),
                    weights: inputSeedWeights(
                      top.map(([, s]) => s),
                      mins[k],
                    ),
                  };
                });
                const ranking = ranker.rank(ranker.matched(extractor.tokens(q.text)), seeds, topK);
                results[q.id] = ranking.ranked.map(([d, s]) => [graph.docIds[d] as string, s]);
                queryMs[q.id] = performance.now() - ts;
                bump('queries');
                bump(`queries.${q.stratum}`);
                if (ranking.seeded) {
                  bump('seededQueries');
                  bump(`seededQueries.${q.stratum}`);
                }
                bump('pprIterations', ranking.iterations);
                bump('pprMs', ranking.ms);
              }
              return { indexStats: stats, indexMs: t1 - t0, searchMs: performance.now() - t1, queryMs, results };
            },
          };
        },
      },
    };
  },
};
