import { join } from 'node:path';
import pLimit from 'p-limit';
import { armFactories, isArmKind } from '../../arms/registry.js';
import type { Arm, ArmFactory, ScoredDoc } from '../../arms/types.js';
import { keysOf, zodProblems } from '../config/problems.js';
import { didYouMean } from '../util/suggest.js';
import { HarnessError } from '../errors.js';
import type { JsonValue } from '../../evalset/types.js';
import type { NodeContext, NodeKind, ScopeResults, SystemInstance } from './types.js';

/** How many queries go to an arm's `searchMany` at once. */
const SEARCH_BATCH = 64;

/**
 * `retrieve`: a node without inputs that wraps an Arm. The arm is created once per ablation (a model loads
 * once) and indexed once per scope; its results are checked (no document twice, finite scores) and cut to topK.
 */
export const retrieveNode: NodeKind = {
  summary: 'an arm: index each scope, answer its queries',
  arity: { min: 0, max: 0 },
  bind({ kind, params, dir, id }) {
    const kinds = Object.keys(armFactories);
    if (!isArmKind(kind)) return { problems: [`kind: unknown arm kind "${kind}"${didYouMean(kind, kinds)} (known: ${kinds.join(', ')})`] };
    const factory = armFactories[kind] as ArmFactory;
    const r = factory.params.safeParse(params);
    if (!r.success) {
      const known = keysOf(factory.params, []).join(', ') || 'none';
      return { problems: zodProblems(r.error.issues, ['params'], (p) => keysOf(factory.params, p)).map((m) => `${m} [${kind} params: ${known}]`) };
    }
    const p = (dir !== undefined && factory.resolvePaths ? factory.resolvePaths(r.data, dir) : r.data) as never;
    let fingerprint: JsonValue;
    try {
      // A fingerprint may read what the params name (a run file's content hash); what it cannot read is a problem.
      fingerprint = { node: 'retrieve', arm: factory.fingerprint(p) };
    } catch (err) {
      if (!(err instanceof HarnessError) || err.exitCode !== 2) throw err;
      return { problems: [`params: ${err.message}`] };
    }
    const armContext = (ctx: NodeContext) => ({ cache: ctx.cache, log: ctx.log, workDir: join(ctx.workDir, kind), env: ctx.env });
    return {
      node: {
        kind,
        params: JSON.parse(JSON.stringify(r.data)) as JsonValue,
        fingerprint,
        theoreticalMinScore: factory.theoreticalMinScore(p),
        sendsTextOffMachine: factory.sendsTextOffMachine(p),
        ...(factory.probe ? { probe: (ctx: NodeContext) => (factory.probe as NonNullable<ArmFactory['probe']>)(id ?? kind, p, armContext(ctx)) } : {}),
        create(ctx): SystemInstance {
          let arm: Arm | undefined;
          return {
            async runScope(scope, _inputs, topK) {
              arm ??= factory.create(id ?? kind, p, armContext(ctx));
              const t0 = performance.now();
              const indexStats = await arm.index(scope.documents, scope.queries);
              const t1 = performance.now();
              const results: ScopeResults = {};
              const queryMs: Record<string, number> = {};
              const keep = (qid: string, docs: readonly ScoredDoc[]) => {
                const seen = new Set<string>();
                results[qid] = docs.slice(0, topK).map((d) => {
                  if (seen.has(d.docId))
                    throw new HarnessError(`arm ${kind} returned document "${d.docId}" twice for query ${qid}; an arm must return each document once`);
                  if (!Number.isFinite(d.score))
                    throw new HarnessError(`arm ${kind} returned a non-finite score (${d.score}) for document "${d.docId}" and query ${qid}`);
                  seen.add(d.docId);
                  return [d.docId, d.score];
                });
              };
              if (arm.searchMany) {
                for (let i = 0; i < scope.queries.length; i += SEARCH_BATCH) {
                  const slice = scope.queries.slice(i, i + SEARCH_BATCH);
                  const ts = performance.now();
                  const got = await arm.searchMany(slice, topK);
                  const each = (performance.now() - ts) / slice.length;
                  for (const q of slice) {
                    keep(q.id, got.get(q.id) ?? []);
                    queryMs[q.id] = each;
                  }
                }
              } else if ((arm.concurrency ?? 1) > 1) {
                const a = arm;
                const limit = pLimit(a.concurrency as number);
                const timed = async (q: (typeof scope.queries)[number]) => {
                  const ts = performance.now();
                  const docs = await a.search(q, topK);
                  queryMs[q.id] = performance.now() - ts;
                  return docs;
                };
                let got: (readonly ScoredDoc[])[];
                try {
                  got = await Promise.all(scope.queries.map((q) => limit(() => timed(q))));
                } catch (err) {
                  // The first failure ends the scope: queued searches are dropped, not sent.
                  limit.clearQueue();
                  throw err;
                }
                scope.queries.forEach((q, i) => keep(q.id, got[i] as readonly ScoredDoc[]));
              } else {
                for (const q of scope.queries) {
                  const ts = performance.now();
                  const got = await arm.search(q, topK);
                  queryMs[q.id] = performance.now() - ts;
                  keep(q.id, got);
                }
              }
              const searchMs = performance.now() - t1;
              return { indexStats: { ...indexStats, ...arm.searchStats?.() }, indexMs: t1 - t0, searchMs, queryMs, results };
            },
            async close() {
              await arm?.close?.();
            },
          };
        },
      },
    };
  },
};
