import { join } from 'node:path';
import type { Run } from '../../evalset/types.js';
import { HarnessError } from '../errors.js';
import type { Logger } from '../log.js';
import type { PlannedSystem, SystemsPlan } from '../systems/plan.js';
import type { ScopeData, ScopeResults, ScopeRun, SystemDiagnostics, SystemInstance } from '../systems/types.js';
import { executeParallel } from './pool.js';
import { cachedScopeRun, type ExecuteOptions, refreshedSystems, type SystemRuns } from './scope-run.js';

/** What one system produced over every scope. */
export interface SystemOutcome {
  readonly system: PlannedSystem;
  /** Merged over scopes: queryId -> docId -> score. */
  readonly run: Run;
  /** Merged over scopes, best first, as cached. */
  readonly results: ScopeResults;
  /** Index statistics summed over scopes. */
  readonly indexStats: Readonly<Record<string, number>>;
  readonly indexMs: number;
  readonly searchMs: number;
  /** Per-query latencies over every scope. */
  readonly queryMs: readonly number[];
  /** indexMs and searchMs of the scope runs this ablation computed (cache misses), in whichever thread ran them. */
  readonly spent: { readonly indexMs: number; readonly searchMs: number };
  readonly cache: { readonly hits: number; readonly misses: number };
  readonly diagnostics?: SystemDiagnostics;
}

/**
 * Runs every system of the plan over every scope, each from the run cache when it can: a system is computed
 * at most once per scope and reused by every system that consumes it, and its instance (an arm with its
 * model) is created only on the first cache miss and closed when the system is done. With `jobs` > 1 the
 * (system, scope) runs whose inputs are ready go to a pool of worker threads (harness/ablate/pool.ts); the
 * outcomes are the same, assembled in plan order.
 */
export async function executePlan(plan: SystemsPlan, scopes: readonly ScopeData[], opts: ExecuteOptions): Promise<Map<string, SystemOutcome>> {
  const runs = (opts.jobs ?? 1) > 1 ? await executeParallel(plan, scopes, { ...opts, jobs: opts.jobs as number }) : await executeSerial(plan, scopes, opts);
  const outcomes = new Map<string, SystemOutcome>();
  for (const system of plan.systems) {
    const r = runs.get(system.id) as SystemRuns;
    outcomes.set(system.id, outcomeOf(system, r, scopes, outcomes, opts.log));
  }
  return outcomes;
}

/** The serial runner: every system in plan order, each over every scope in order, in this thread. */
async function executeSerial(plan: SystemsPlan, scopes: readonly ScopeData[], opts: ExecuteOptions): Promise<Map<string, SystemRuns>> {
  const { store, log, topK } = opts;
  const refreshed = refreshedSystems(plan, opts.refresh);
  /** system id -> per-scope runs, kept while a later system may consume them. */
  const perScope = new Map<string, SystemRuns>();
  const queries = scopes.reduce((n, s) => n + s.queries.length, 0);
  for (const system of plan.systems) {
    const progress = log.progress(system.id, queries);
    let instance: SystemInstance | undefined;
    const runs: ScopeRun[] = [];
    const computed: boolean[] = [];
    try {
      for (const [i, scope] of scopes.entries()) {
        const inputs = system.inputs.map((id) => {
          const r = perScope.get(id)?.runs[i];
          if (!r) throw new HarnessError(`internal: input ${id} of ${system.id} has not run on scope ${scope.scope ?? '(all)'}`);
          return r;
        });
        const res = await cachedScopeRun(
          store,
          system,
          scope,
          topK,
          () => {
            instance ??= system.bound.create({ cache: store, log, workDir: join(opts.workDir, 'work'), env: opts.env });
            return instance.runScope(scope, inputs, topK);
          },
          refreshed.has(system.id),
        );
        runs.push(res.run);
        computed.push(res.computed);
        progress.tick(scope.queries.length);
      }
    } finally {
      await instance?.close?.();
    }
    progress.done();
    perScope.set(system.id, { runs, computed });
  }
  return perScope;
}

/** A system's outcome from its per-scope runs: results merged over scopes, costs summed, diagnostics. */
function outcomeOf(
  system: PlannedSystem,
  { runs, computed }: SystemRuns,
  scopes: readonly ScopeData[],
  outcomes: ReadonlyMap<string, SystemOutcome>,
  log: Logger,
): SystemOutcome {
  const results: ScopeResults = {};
  const stats: Record<string, number> = {};
  let indexMs = 0;
  let searchMs = 0;
  const spent = { indexMs: 0, searchMs: 0 };
  const queryMs: number[] = [];
  runs.forEach((r, i) => {
    if (computed[i]) {
      spent.indexMs += r.indexMs;
      spent.searchMs += r.searchMs;
    }
    for (const q of (scopes[i] as ScopeData).queries) {
      results[q.id] = r.results[q.id] as [string, number][];
      queryMs.push(r.queryMs[q.id] ?? 0);
    }
    for (const [k, v] of Object.entries(r.indexStats)) stats[k] = (stats[k] ?? 0) + v;
    indexMs += r.indexMs;
    searchMs += r.searchMs;
  });
  const run = new Map<string, Map<string, number>>();
  for (const [qid, docs] of Object.entries(results)) run.set(qid, new Map(docs));
  let diagnostics: SystemDiagnostics | undefined;
  if (system.bound.diagnose) {
    diagnostics = system.bound.diagnose(
      results,
      system.inputs.map((id) => (outcomes.get(id) as SystemOutcome).results),
    );
    for (const p of diagnostics.problems) log.warn(`${system.id}: ${p}`);
  }
  return {
    system,
    run,
    results,
    indexStats: stats,
    indexMs,
    searchMs,
    queryMs,
    spent,
    cache: { hits: computed.filter((c) => !c).length, misses: computed.filter((c) => c).length },
    ...(diagnostics === undefined ? {} : { diagnostics }),
  };
}
