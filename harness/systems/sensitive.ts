import { corpusFingerprint } from '../../evalset/fingerprint.js';
import type { Document, JsonValue } from '../../evalset/types.js';
import { compareRanked } from '../metrics/ranking.js';
import type { BoundNode, ScopeData, ScopeResults, ScopeRun, SystemInstance } from './types.js';

/**
 * The sensitive-document policy of a system whose node sends text off this machine (ADR 0018): Sensitive
 * Documents never reach it. `skip` leaves them out of its corpus; `route` has the named local arm retrieve
 * them and merges the two result lists by score.
 */
export type SensitivePolicy = 'skip' | { readonly route: string };

/** What a routed system needs of its route target: a planned arm, with its identity and how to run it. */
export interface RouteTarget {
  readonly id: string;
  readonly inputs: readonly string[];
  readonly fingerprint: JsonValue;
  readonly bound: BoundNode;
}

/** Index statistics a guarded system adds per scope: how many Sensitive Documents it left out or routed. */
export const SENSITIVE_SKIPPED_STAT = 'sensitiveSkipped';
export const SENSITIVE_ROUTED_STAT = 'sensitiveRouted';

function subScope(scope: ScopeData, documents: readonly Document[]): ScopeData {
  return { ...scope, documents, corpusFingerprint: corpusFingerprint(documents) };
}

/** One query's results of two runs over disjoint documents, merged by score (trec_eval order) and cut to topK. */
function mergeByScore(a: ScopeResults, b: ScopeResults, qids: readonly string[], topK: number): ScopeResults {
  const out: ScopeResults = {};
  for (const q of qids) {
    out[q] = [...(a[q] ?? []), ...(b[q] ?? [])].sort((x, y) => compareRanked(x[1], x[0], y[1], y[0])).slice(0, topK);
  }
  return out;
}

/**
 * Problems binding `policy` to a node: the node must send text off this machine (elsewhere the key would only
 * hide documents from a local arm); a route must name an arm listed earlier that keeps text on this machine
 * and scores on the same scale (same theoretical minimum), since the merge compares raw scores.
 */
export function sensitivePolicyProblems(policy: SensitivePolicy, target: RouteTarget | undefined, node: BoundNode, known: readonly string[]): string[] {
  if (!node.sendsTextOffMachine) return ['sensitive: this arm keeps text on this machine, so Sensitive Documents need no policy here; remove sensitive'];
  if (policy === 'skip') return [];
  if (!target) return [`sensitive.route: "${policy.route}" is not an arm listed before this one (arms: ${known.join(', ') || 'none'})`];
  const problems: string[] = [];
  if (target.inputs.length > 0) problems.push(`sensitive.route: "${policy.route}" is a derived system; route to an arm`);
  if (target.bound.sendsTextOffMachine) problems.push(`sensitive.route: "${policy.route}" sends text off this machine too; route to a local arm`);
  const a = node.theoreticalMinScore;
  const b = target.bound.theoreticalMinScore;
  if (a === undefined || b === undefined || a !== b)
    problems.push(
      `sensitive.route: "${policy.route}" scores on another scale (theoretical minimum ${b ?? 'unbounded'}, this arm's ${a ?? 'unbounded'}); the merge compares raw scores, so route to an arm of the same scale (a local embedding arm for a hosted one), or use skip`,
    );
  return problems;
}

/**
 * `node` guarded by `policy`. Its fingerprint adds the policy (and the route's identity), so a run cached under
 * one policy is never read under another, and every system downstream changes identity with it. A scope without
 * Sensitive Documents runs unchanged.
 */
export function withSensitivePolicy(node: BoundNode, policy: SensitivePolicy, target: RouteTarget | undefined): BoundNode {
  const route = policy === 'skip' ? undefined : (target as RouteTarget);
  return {
    ...node,
    fingerprint: { guarded: node.fingerprint, sensitive: route ? { route: route.fingerprint } : 'skip' },
    create(ctx): SystemInstance {
      const inner = node.create(ctx);
      let routed: SystemInstance | undefined;
      return {
        async runScope(scope, inputs, topK): Promise<ScopeRun> {
          const sensitive = scope.documents.filter((d) => d.sensitive === true);
          if (sensitive.length === 0) return inner.runScope(scope, inputs, topK);
          const rest = scope.documents.filter((d) => d.sensitive !== true);
          const qids = scope.queries.map((q) => q.id);
          const empty: ScopeRun = { indexStats: {}, indexMs: 0, searchMs: 0, queryMs: {}, results: Object.fromEntries(qids.map((q) => [q, []])) };
          const own = rest.length === 0 ? empty : await inner.runScope(subScope(scope, rest), inputs, topK);
          if (!route) return { ...own, indexStats: { ...own.indexStats, [SENSITIVE_SKIPPED_STAT]: sensitive.length } };
          routed ??= route.bound.create(ctx);
          const other = await routed.runScope(subScope(scope, sensitive), [], topK);
          const queryMs: Record<string, number> = {};
          for (const q of qids) queryMs[q] = (own.queryMs[q] ?? 0) + (other.queryMs[q] ?? 0);
          return {
            indexStats: { ...own.indexStats, [SENSITIVE_ROUTED_STAT]: sensitive.length },
            indexMs: own.indexMs + other.indexMs,
            searchMs: own.searchMs + other.searchMs,
            queryMs,
            results: mergeByScore(own.results, other.results, qids, topK),
            ...(own.returned === undefined ? {} : { returned: own.returned }),
          };
        },
        async close() {
          await inner.close?.();
          await routed?.close?.();
        },
      };
    },
  };
}
