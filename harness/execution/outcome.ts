import type { Run } from '../../evalset/types.js';
import type { Logger } from '../log.js';
import type { PlannedSystem } from '../systems/plan.js';
import { zeroWeightInputs } from '../systems/fuse.js';
import { checkResults, faultSentence } from '../systems/result-check.js';
import type { ResultCheck, ReturnedText, ScopeData, ScopeResults, SystemDiagnostics } from '../systems/types.js';
import type { SystemRuns } from './scope-run.js';

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
  /** The Result check's faults (no results for most queries, unknown ids); absent for a healthy System. */
  readonly resultCheck?: ResultCheck;
  /** The texts of the Returned items of its own runs (an arm mapping text), over every scope. */
  readonly returned?: Readonly<Record<string, ReturnedText>>;
}

/** A system's outcome from its per-scope runs: results merged over scopes, costs summed, diagnostics. */
export function outcomeOf(
  system: PlannedSystem,
  { runs, computed }: SystemRuns,
  scopes: readonly ScopeData[],
  outcomes: ReadonlyMap<string, SystemOutcome>,
  log: Logger,
): SystemOutcome {
  const results: ScopeResults = {};
  const returned: Record<string, ReturnedText> = {};
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
    if (r.returned !== undefined) Object.assign(returned, r.returned);
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
    // A grid point that gives an input weight 0 (alpha at an end of its range) leaves that input out by design:
    // the report labels it a degenerate endpoint, and stderr says so only under --verbose.
    const off = system.point === undefined ? [] : zeroWeightInputs(system.params);
    for (const p of diagnostics.problems) {
      if (off.some((id) => p.startsWith(`input ${id} `))) log.detail?.(`${system.id}: ${p}`);
      else log.warn(`${system.id}: ${p}`);
    }
  }
  const inputs = system.inputs.map((id) => ({ id, check: (outcomes.get(id) as SystemOutcome).resultCheck }));
  const resultCheck = checkResults(runs, scopes, inputs);
  if (resultCheck) for (const f of resultCheck.faults) log.warn(`${system.id}: ${faultSentence(resultCheck, f)}`);
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
    ...(resultCheck === undefined ? {} : { resultCheck }),
    ...(Object.keys(returned).length === 0 ? {} : { returned }),
  };
}
