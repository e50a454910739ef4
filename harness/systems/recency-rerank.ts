import { z } from 'zod';
import type { Document } from '../../evalset/types.js';
import { blendScores, contentTokens, documentTimeMs, GARBANZO_BLEND, queryTimeMs } from '../recipes/blend.js';
import { evenQueryMs, parseNodeParams, shownParams } from './node-params.js';
import type { NodeKind, ScopeResults } from './types.js';

const RECENCY_RERANK_VERSION = 1;

const params = z
  .object({
    base: z.number().min(0).default(GARBANZO_BLEND.base),
    recency: z.number().min(0).default(GARBANZO_BLEND.recency),
    overlap: z.number().min(0).default(GARBANZO_BLEND.overlap),
    halfLifeHours: z.number().positive().default(GARBANZO_BLEND.halfLifeHours),
    /** Candidates read from the input per query; absent: all it returned. */
    depth: z.number().int().positive().optional(),
  })
  .strict()
  .refine((p) => p.base + p.recency + p.overlap > 0, { message: 'give at least one of base, recency, overlap a positive weight' });

/**
 * `recency-rerank`: reorders one input's candidates by the garbanzo blend (harness/recipes/blend.ts): its
 * score relative to the query's best, recency decay with a 72 h half-life against the query's time (its date
 * in the eval set: LongMemEval question dates; LoCoMo QAs are asked after their conversation's last session),
 * and the share of query words the document contains. Scores are >= 0.
 */
export const recencyRerankNode: NodeKind = {
  summary: 'rerank one input by base relevance + recency decay (72 h half-life) + query-word overlap (garbanzo blend)',
  arity: { min: 1, max: 1 },
  params,
  bind({ params: raw }) {
    const r = parseNodeParams(params, raw);
    if ('problems' in r) return r;
    const p = r.data;
    return {
      node: {
        kind: 'recency-rerank',
        params: shownParams(p),
        fingerprint: { node: 'recency-rerank', v: RECENCY_RERANK_VERSION, ...p, depth: p.depth ?? null },
        theoreticalMinScore: 0,
        sendsTextOffMachine: false,
        create() {
          return {
            async runScope(scope, inputs, topK) {
              const t0 = performance.now();
              const byId = new Map(scope.documents.map((d) => [d.id, d] as const));
              const results: ScopeResults = {};
              const input = inputs[0]?.results ?? {};
              for (const q of scope.queries) {
                const hits = (input[q.id] ?? []).slice(0, p.depth);
                const docs = hits.map(([id]) => byId.get(id));
                const scores = blendScores(
                  hits.map(([, score], i) => {
                    const d = docs[i] as Document | undefined;
                    return { score, timeMs: d ? documentTimeMs(d) : Number.NaN, tokens: d ? contentTokens(d.text) : new Set<string>() };
                  }),
                  contentTokens(q.text),
                  queryTimeMs(q, scope.documents),
                  p,
                );
                results[q.id] = hits
                  .map(([id], i): [string, number] => [id, scores[i] as number])
                  .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0))
                  .slice(0, topK);
              }
              const ms = performance.now() - t0;
              return {
                indexStats: {},
                indexMs: 0,
                searchMs: ms,
                queryMs: evenQueryMs(
                  scope.queries.map((q) => q.id),
                  ms,
                ),
                results,
              };
            },
          };
        },
      },
    };
  },
};
