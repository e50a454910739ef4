import { join } from 'node:path';
import type { Run } from '../../evalset/types.js';
import { cacheKey, type CacheKey, type ContentStore, type ShapeCheck } from '../cache/index.js';
import { HarnessError } from '../errors.js';
import type { Logger } from '../log.js';
import type { PlannedSystem, SystemsPlan } from '../systems/plan.js';
import type { ScopeData, ScopeResults, ScopeRun, SystemDiagnostics, SystemInstance } from '../systems/types.js';

/** Bump when the cached run layout or its meaning changes; old entries are then never read. */
export const RUN_CACHE_VERSION = 2;

/** The run-cache key of one system on one scope: its fingerprint, the scope's documents and queries, topK. */
export function runKey(system: PlannedSystem, scope: ScopeData, topK: number): CacheKey {
  return cacheKey('run', RUN_CACHE_VERSION, { system: system.fingerprintHash, corpus: scope.corpusFingerprint, queries: scope.queriesFingerprint, topK });
}

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
  readonly cache: { readonly hits: number; readonly misses: number };
  readonly diagnostics?: SystemDiagnostics;
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
    return undefined;
  };
}

/**
 * Runs every system of the plan over every scope, in plan order, each from the run cache when it can: a
 * system is computed at most once per scope and reused by every system that consumes it, and its instance
 * (an arm with its model) is created only on the first cache miss and closed when the system is done.
 */
export async function executePlan(
  plan: SystemsPlan,
  scopes: readonly ScopeData[],
  opts: {
    readonly topK: number;
    readonly store: ContentStore;
    readonly log: Logger;
    readonly env: NodeJS.ProcessEnv;
    readonly workDir: string;
    /** Systems recomputed instead of read from the run cache (`--refresh`); their consumers are too. */
    readonly refresh?: ReadonlySet<string>;
  },
): Promise<Map<string, SystemOutcome>> {
  const { store, log, topK } = opts;
  const refreshed = new Set<string>();
  const outcomes = new Map<string, SystemOutcome>();
  /** system id -> per-scope runs, kept while a later system may consume them. */
  const perScope = new Map<string, ScopeRun[]>();
  const queries = scopes.reduce((n, s) => n + s.queries.length, 0);
  for (const system of plan.systems) {
    const progress = log.progress(system.id, queries);
    let instance: SystemInstance | undefined;
    const runs: ScopeRun[] = [];
    let hits = 0;
    let misses = 0;
    if (opts.refresh?.has(system.id) || system.inputs.some((id) => refreshed.has(id))) refreshed.add(system.id);
    try {
      for (const [i, scope] of scopes.entries()) {
        const inputs = system.inputs.map((id) => {
          const r = perScope.get(id)?.[i];
          if (!r) throw new HarnessError(`internal: input ${id} of ${system.id} has not run on scope ${scope.scope ?? '(all)'}`);
          return r;
        });
        let computed = false;
        const key = runKey(system, scope, topK);
        const compute = async () => {
          computed = true;
          instance ??= system.bound.create({ cache: store, log, workDir: join(opts.workDir, 'work'), env: opts.env });
          return instance.runScope(scope, inputs, topK);
        };
        let res: ScopeRun;
        if (refreshed.has(system.id)) {
          // Written only once computed: a refresh that fails keeps the entry it would have replaced.
          res = await compute();
          await store.put('run', key, JSON.stringify(res));
        } else res = await store.json<ScopeRun>('run', key, compute, scopeRunCheck(scope.queries));
        if (computed) misses++;
        else hits++;
        runs.push(res);
        progress.tick(scope.queries.length);
      }
    } finally {
      await instance?.close?.();
    }
    progress.done();
    perScope.set(system.id, runs);
    const results: ScopeResults = {};
    const stats: Record<string, number> = {};
    let indexMs = 0;
    let searchMs = 0;
    const queryMs: number[] = [];
    runs.forEach((r, i) => {
      for (const q of scopes[i]!.queries) {
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
    outcomes.set(system.id, {
      system,
      run,
      results,
      indexStats: stats,
      indexMs,
      searchMs,
      queryMs,
      cache: { hits, misses },
      ...(diagnostics === undefined ? {} : { diagnostics }),
    });
  }
  return outcomes;
}
