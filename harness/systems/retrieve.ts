import { join } from 'node:path';
import pLimit from 'p-limit';
import { armFactories, isArmKind } from '../../arms/registry.js';
import type { Arm, ArmFactory, ScoredDoc } from '../../arms/types.js';
import { keysOf } from '../config/problems.js';
import { didYouMean } from '../util/suggest.js';
import { HarnessError } from '../errors.js';
import type { JsonValue, Query } from '../../evalset/types.js';
import { parseNodeParams, shownParams } from './node-params.js';
import type { BoundNode, NodeContext, NodeKind, ReturnedText, ScopeResults, SystemInstance } from './types.js';

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
    const r = parseNodeParams(factory.params, params);
    if ('problems' in r) {
      const known = keysOf(factory.params, []).join(', ') || 'none';
      return { problems: r.problems.map((m) => `${m} [${kind} params: ${known}]`) };
    }
    const p = dir !== undefined && factory.resolvePaths ? factory.resolvePaths(r.data, dir) : r.data;
    const fingerprint = armFingerprint(factory, p);
    if ('problems' in fingerprint) return fingerprint;
    return { node: boundArm({ factory, kind, id: id ?? kind, p }, shownParams(r.data), fingerprint.fingerprint) };
  },
};

/** An arm kind's factory with one config entry's resolved params: what creates the arm. */
interface ArmSpec {
  readonly factory: ArmFactory;
  readonly kind: string;
  /** The system's id, for the messages of the arm. */
  readonly id: string;
  /** Its params, with paths resolved against the config's folder. */
  readonly p: unknown;
}

/** A fingerprint may read what the params name (a run file's content hash); what it cannot read is a problem. */
function armFingerprint(factory: ArmFactory, p: unknown): { readonly fingerprint: JsonValue } | { readonly problems: string[] } {
  try {
    return { fingerprint: { node: 'retrieve', arm: factory.fingerprint(p) } };
  } catch (err) {
    if (!(err instanceof HarnessError) || err.exitCode !== 2) throw err;
    return { problems: [`params: ${err.message}`] };
  }
}

function armContext(spec: ArmSpec, ctx: NodeContext) {
  return { cache: ctx.cache, log: ctx.log, workDir: join(ctx.workDir, spec.kind), env: ctx.env };
}

function boundArm(spec: ArmSpec, params: JsonValue, fingerprint: JsonValue): BoundNode {
  const { factory, id, p } = spec;
  return {
    kind: spec.kind,
    params,
    fingerprint,
    theoreticalMinScore: factory.theoreticalMinScore(p),
    sendsTextOffMachine: factory.sendsTextOffMachine(p),
    ...(factory.probe ? { probe: (ctx: NodeContext) => (factory.probe as NonNullable<ArmFactory['probe']>)(id, p, armContext(spec, ctx)) } : {}),
    create: (ctx) => armInstance(spec, ctx),
  };
}

/** The arm, created on the first scope (a model loads once per ablation) and indexed on each. */
function armInstance(spec: ArmSpec, ctx: NodeContext): SystemInstance {
  let arm: Arm | undefined;
  return {
    async runScope(scope, _inputs, topK) {
      arm ??= spec.factory.create(spec.id, spec.p, armContext(spec, ctx));
      const t0 = performance.now();
      const indexStats = await arm.index(scope.documents, scope.queries);
      const t1 = performance.now();
      const results: ScopeResults = {};
      const returned: Record<string, ReturnedText> = {};
      const queryMs: Record<string, number> = {};
      const sensitive = scope.documents.some((d) => d.sensitive === true);
      await searchAll(arm, scope.queries, topK, resultKeeper(spec.kind, topK, results, returnedKeeper(returned, sensitive)), queryMs);
      const searchMs = performance.now() - t1;
      const run = { indexStats: { ...indexStats, ...(await arm.searchStats?.()) }, indexMs: t1 - t0, searchMs, queryMs, results };
      return Object.keys(returned).length === 0 ? run : { ...run, returned };
    },
    async close() {
      await arm?.close?.();
    },
  };
}

/** Takes one query's results from the arm. */
type Keep = (qid: string, docs: readonly ScoredDoc[]) => void;

/** Records the text of a Returned item, once per id (its id is the hash of its text). */
function returnedKeeper(returned: Record<string, ReturnedText>, sensitive: boolean): (d: ScoredDoc) => void {
  return (d) => {
    if (d.text !== undefined && returned[d.docId] === undefined) returned[d.docId] = sensitive ? { text: d.text, sensitive: true } : { text: d.text };
  };
}

/**
 * Keeps a query's top `topK` in `results` (and the text of its Returned items), refusing a document returned
 * twice or a non-finite score.
 */
function resultKeeper(kind: string, topK: number, results: ScopeResults, keepText: (d: ScoredDoc) => void): Keep {
  return (qid, docs) => {
    const seen = new Set<string>();
    results[qid] = docs.slice(0, topK).map((d) => {
      if (seen.has(d.docId)) throw new HarnessError(`arm ${kind} returned document "${d.docId}" twice for query ${qid}; an arm must return each document once`);
      if (!Number.isFinite(d.score)) throw new HarnessError(`arm ${kind} returned a non-finite score (${d.score}) for document "${d.docId}" and query ${qid}`);
      seen.add(d.docId);
      keepText(d);
      return [d.docId, d.score];
    });
  };
}

/** Searches every query the arm's way: in batches, several at once, or one after another. */
async function searchAll(arm: Arm, queries: readonly Query[], topK: number, keep: Keep, queryMs: Record<string, number>): Promise<void> {
  if (arm.searchMany) await searchBatched(arm, queries, topK, keep, queryMs);
  else if ((arm.concurrency ?? 1) > 1) await searchConcurrent(arm, queries, topK, keep, queryMs);
  else {
    for (const q of queries) {
      const ts = performance.now();
      const got = await arm.search(q, topK);
      queryMs[q.id] = performance.now() - ts;
      keep(q.id, got);
    }
  }
}

/** A batch's time is shared equally among its queries. */
async function searchBatched(arm: Arm, queries: readonly Query[], topK: number, keep: Keep, queryMs: Record<string, number>): Promise<void> {
  const searchMany = arm.searchMany as NonNullable<Arm['searchMany']>;
  for (let i = 0; i < queries.length; i += SEARCH_BATCH) {
    const slice = queries.slice(i, i + SEARCH_BATCH);
    const ts = performance.now();
    const got = await searchMany.call(arm, slice, topK);
    const each = (performance.now() - ts) / slice.length;
    for (const q of slice) {
      keep(q.id, got.get(q.id) ?? []);
      queryMs[q.id] = each;
    }
  }
}

/** Up to the arm's `concurrency` searches in flight; results are kept in query order once all have answered. */
async function searchConcurrent(arm: Arm, queries: readonly Query[], topK: number, keep: Keep, queryMs: Record<string, number>): Promise<void> {
  const limit = pLimit(arm.concurrency as number);
  const timed = async (q: Query) => {
    const ts = performance.now();
    const docs = await arm.search(q, topK);
    queryMs[q.id] = performance.now() - ts;
    return docs;
  };
  let got: (readonly ScoredDoc[])[];
  try {
    got = await Promise.all(queries.map((q) => limit(() => timed(q))));
  } catch (err) {
    // The first failure ends the scope: queued searches are dropped, not sent.
    limit.clearQueue();
    throw err;
  }
  queries.forEach((q, i) => keep(q.id, got[i] as readonly ScoredDoc[]));
}
