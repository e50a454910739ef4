import { join } from 'node:path';
import { HarnessError } from '../errors.js';
import type { SystemsPlan } from '../systems/plan.js';
import type { ScopeData, ScopeRun, SystemInstance } from '../systems/types.js';
import { cachedScopeRun, type ExecuteOptions, refreshedSystems, type SystemRuns } from './scope-run.js';

/** The serial runner: every system in plan order, each over every scope in order, in this thread. */
export async function executeSerial(plan: SystemsPlan, scopes: readonly ScopeData[], opts: ExecuteOptions): Promise<Map<string, SystemRuns>> {
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
