import { cacheKey, type CacheKey, type ContentStore } from '../cache/index.js';
import type { Logger } from '../log.js';
import type { PlannedSystem, SystemsPlan } from '../systems/plan.js';
import type { ScopeData, ScopeRun } from '../systems/types.js';
import { type RunEntry, runEntry, runEntryCheck, runOfEntry } from './run-entry.js';

/**
 * One system's run on one scope, as both runners share it: its run-cache key and entry, the options of a run
 * and the systems a refresh recomputes. The serial runner (execute.ts) and the parallel one (pool.ts) import
 * from here, not from each other.
 */

/**
 * Bump when the cached run layout or its meaning changes; old entries are then never read. 3: the worker's
 * typed shape (run-entry.ts) in place of JSON `[docId, score]` pairs.
 */
export const RUN_CACHE_VERSION = 3;

/** The run-cache key of one system on one scope: its fingerprint, the scope's documents and queries, topK. */
export function runKey(system: PlannedSystem, scope: ScopeData, topK: number): CacheKey {
  return cacheKey('run', RUN_CACHE_VERSION, { system: system.fingerprintHash, corpus: scope.corpusFingerprint, queries: scope.queriesFingerprint, topK });
}

/**
 * The run of `system` on `scope` from the run cache, or computed by `compute` and stored (a sealed entry,
 * written atomically; concurrent misses on one key share one computation). The one place both the serial and
 * the parallel runner read and write run-cache entries.
 */
export async function cachedScopeRun(
  store: ContentStore,
  system: PlannedSystem,
  scope: ScopeData,
  topK: number,
  compute: () => Promise<ScopeRun>,
  refresh = false,
): Promise<{ readonly run: ScopeRun; readonly computed: boolean }> {
  if (refresh) {
    // Written only once computed: a refresh that fails keeps the entry it would have replaced.
    const run = await compute();
    await store.put('run', runKey(system, scope, topK), JSON.stringify(runEntry(run, scope)));
    return { run, computed: true };
  }
  // The run computed here is returned as it is; a hit (or a computation another caller shared) is decoded.
  let computed: ScopeRun | undefined;
  const entry = await store.json<RunEntry>(
    'run',
    runKey(system, scope, topK),
    async () => {
      computed = await compute();
      return runEntry(computed, scope);
    },
    runEntryCheck(scope),
  );
  return computed === undefined ? { run: runOfEntry(entry, scope), computed: false } : { run: computed, computed: true };
}

/** What the runner needs besides the plan and the scopes. */
export interface ExecuteOptions {
  readonly topK: number;
  readonly store: ContentStore;
  readonly log: Logger;
  readonly env: NodeJS.ProcessEnv;
  readonly workDir: string;
  /** Worker threads for systems and scopes; 1 (the default) runs everything in this thread, in plan order. */
  readonly jobs?: number;
  /** Systems recomputed instead of read from the run cache (`--refresh`); their consumers are too. */
  readonly refresh?: ReadonlySet<string>;
}

/** The systems a refresh recomputes: those named, and every system downstream of one (plan order). */
export function refreshedSystems(plan: SystemsPlan, refresh: ReadonlySet<string> | undefined): ReadonlySet<string> {
  const refreshed = new Set<string>();
  if (!refresh || refresh.size === 0) return refreshed;
  for (const system of plan.systems) {
    if (refresh.has(system.id) || system.inputs.some((id) => refreshed.has(id))) refreshed.add(system.id);
  }
  return refreshed;
}

/** One system's runs, one per scope in scope order, each with whether this ablation computed it (a cache miss). */
export interface SystemRuns {
  readonly runs: readonly ScopeRun[];
  readonly computed: readonly boolean[];
}
