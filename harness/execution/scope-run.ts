import { cacheKey, type CacheKey, type ContentStore, type ShapeCheck } from '../cache/index.js';
import type { Logger } from '../log.js';
import type { PlannedSystem, SystemsPlan } from '../systems/plan.js';
import type { ScopeData, ScopeRun } from '../systems/types.js';

/**
 * One system's run on one scope, as both runners share it: its run-cache key and entry, the options of a run
 * and the systems a refresh recomputes. The serial runner (execute.ts) and the parallel one (pool.ts) import
 * from here, not from each other.
 */

/** Bump when the cached run layout or its meaning changes; old entries are then never read. */
export const RUN_CACHE_VERSION = 2;

/** The run-cache key of one system on one scope: its fingerprint, the scope's documents and queries, topK. */
export function runKey(system: PlannedSystem, scope: ScopeData, topK: number): CacheKey {
  return cacheKey('run', RUN_CACHE_VERSION, { system: system.fingerprintHash, corpus: scope.corpusFingerprint, queries: scope.queriesFingerprint, topK });
}

/**
 * The shape of a cached {@link ScopeRun} holding every query of its scope: an entry that checksums fine but is
 * `{}`, `null` or lacks a query is evicted and recomputed rather than used.
 */
export function scopeRunCheck(queries: ScopeData['queries']): ShapeCheck {
  const finite = (x: unknown) => typeof x === 'number' && Number.isFinite(x);
  const numbers = (x: unknown) => x !== null && typeof x === 'object' && Object.values(x).every(finite);
  return (v) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return 'not an object';
    const r = v as Record<string, unknown>;
    if (!finite(r['indexMs']) || !finite(r['searchMs'])) return 'indexMs/searchMs missing';
    if (!numbers(r['indexStats'])) return 'indexStats is not an object of numbers';
    if (!numbers(r['queryMs'])) return 'queryMs is not an object of numbers';
    const results = r['results'];
    if (results === null || typeof results !== 'object') return 'results missing';
    for (const q of queries) {
      const docs = (results as Record<string, unknown>)[q.id];
      if (!Array.isArray(docs)) return `no results for query ${q.id}`;
      if (!docs.every((d) => Array.isArray(d) && d.length === 2 && typeof d[0] === 'string' && finite(d[1])))
        return `results of query ${q.id} are not [docId, score] pairs`;
    }
    const returned = r['returned'];
    if (
      returned !== undefined &&
      (returned === null || typeof returned !== 'object' || !Object.values(returned).every((t) => typeof (t as { text?: unknown })?.text === 'string'))
    )
      return 'returned is not an object of { text }';
    return undefined;
  };
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
    await store.put('run', runKey(system, scope, topK), JSON.stringify(run));
    return { run, computed: true };
  }
  let computed = false;
  const run = await store.json<ScopeRun>(
    'run',
    runKey(system, scope, topK),
    () => {
      computed = true;
      return compute();
    },
    scopeRunCheck(scope.queries),
  );
  return { run, computed };
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
