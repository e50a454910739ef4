import { join } from 'node:path';
import type { PlannedSystem, SystemsPlan } from '../systems/plan.js';
import type { ScopeData, ScopeRun, SystemInstance } from '../systems/types.js';
import { Aborted, WorkerPool } from './pool.js';
import { cachedScopeRun, type ExecuteOptions, refreshedSystems, type SystemRuns } from './scope-run.js';
import { DocPositions, unwireRun, type WireScopeRun, wireRun } from './wire.js';
import type { SystemSpec } from './worker.js';

type ParallelOptions = ExecuteOptions & { readonly jobs: number };
type Computed = { readonly run: ScopeRun; readonly computed: boolean };

function specOf(system: PlannedSystem, byId: ReadonlyMap<string, PlannedSystem>): SystemSpec {
  const inputs = system.inputs.map((id) => byId.get(id) as PlannedSystem);
  return {
    id: system.id,
    node: system.node,
    kind: system.kind,
    params: system.given ?? system.params,
    fingerprintHash: system.fingerprintHash,
    inputs: inputs.map((s) => ({ id: s.id, theoreticalMinScore: s.bound.theoreticalMinScore, sendsTextOffMachine: s.bound.sendsTextOffMachine })),
    inputFingerprints: inputs.map((s) => s.fingerprint),
    ...(system.dir === undefined ? {} : { dir: system.dir }),
  };
}

/** A run that many systems consume (an arm under a grid of fusions) is put in its wire form once, not once per consumer. */
class WireCache {
  readonly #docs = new DocPositions();
  readonly #wired = new WeakMap<ScopeRun, WireScopeRun>();
  of(run: ScopeRun, scope: ScopeData): WireScopeRun {
    let w = this.#wired.get(run);
    if (w === undefined) {
      w = wireRun(run, scope, this.#docs);
      this.#wired.set(run, w);
    }
    return w;
  }
}

/** Systems a worker refused to re-create run in the main thread, one instance each and one runScope at a time, as in the serial runner. */
class LocalRunner {
  readonly #instances = new Map<string, SystemInstance>();
  readonly #turns = new Map<string, Promise<unknown>>();
  /** Systems a worker refused: their other scopes go straight to the main thread. */
  readonly refused = new Set<string>();
  constructor(readonly opts: ParallelOptions) {}

  run(system: PlannedSystem, scope: ScopeData, inputs: readonly ScopeRun[]): Promise<ScopeRun> {
    const { store, log, env, workDir, topK } = this.opts;
    const turn = (this.#turns.get(system.id) ?? Promise.resolve()).then(() => {
      let inst = this.#instances.get(system.id);
      if (inst === undefined) {
        inst = system.bound.create({ cache: store, log, workDir: join(workDir, 'work'), env });
        this.#instances.set(system.id, inst);
      }
      return inst.runScope(scope, inputs, topK);
    });
    this.#turns.set(
      system.id,
      turn.catch(() => undefined),
    );
    return turn;
  }

  async close(): Promise<void> {
    for (const inst of this.#instances.values()) await inst.close?.();
  }
}

/** Where one (system, scope) task is computed on a cache miss: a worker, or this thread once a worker refused the system. */
interface Runners {
  readonly pool: WorkerPool;
  readonly local: LocalRunner;
  readonly wire: WireCache;
}

async function computeScopeRun(
  system: PlannedSystem,
  spec: SystemSpec,
  i: number,
  scope: ScopeData,
  inputs: readonly ScopeRun[],
  r: Runners,
  topK: number,
): Promise<ScopeRun> {
  if (r.local.refused.has(system.id)) return r.local.run(system, scope, inputs);
  const answer = await r.pool.run(
    spec,
    i,
    inputs.map((x) => r.wire.of(x, scope)),
    topK,
  );
  if (answer !== 'refused') return unwireRun(answer, scope);
  r.local.refused.add(system.id);
  return r.local.run(system, scope, inputs);
}

/** (system, scope) -> its run with whether it was computed; created in plan order, each awaiting its inputs. */
function scheduleTasks(
  plan: SystemsPlan,
  scopes: readonly ScopeData[],
  opts: ParallelOptions,
  r: Runners,
  tick: (queries: number) => void,
): Map<string, Promise<Computed>[]> {
  const { store, topK } = opts;
  const byId = new Map(plan.systems.map((s) => [s.id, s] as const));
  const tasks = new Map<string, Promise<Computed>[]>();
  const refreshed = refreshedSystems(plan, opts.refresh);
  for (const system of plan.systems) {
    const spec = specOf(system, byId);
    const perScope = scopes.map(async (scope, i) => {
      const inputs = await Promise.all(system.inputs.map((id) => (tasks.get(id) as Promise<Computed>[])[i] as Promise<Computed>));
      const inputRuns = inputs.map((x) => x.run);
      const res = await cachedScopeRun(store, system, scope, topK, () => computeScopeRun(system, spec, i, scope, inputRuns, r, topK), refreshed.has(system.id));
      tick(scope.queries.length);
      return res;
    });
    tasks.set(system.id, perScope);
    // Fail fast: the first failure stops queued work; running tasks finish.
    for (const p of perScope) p.catch(() => r.pool.abort());
    void Promise.allSettled(perScope).then(() => r.pool.close(system.id));
  }
  return tasks;
}

/** The first real failure in plan order (a task aborted because another failed is never it), else the first error closing an instance. */
function firstFailure(settled: ReadonlyMap<string, PromiseSettledResult<Computed>[]>, closeErrors: readonly Error[]): unknown {
  for (const perScope of settled.values()) {
    for (const r of perScope) if (r.status === 'rejected' && !(r.reason instanceof Aborted)) return r.reason;
  }
  return closeErrors[0];
}

/**
 * Runs the plan with up to `jobs` worker threads. Returns every system's runs in scope order, as the serial
 * runner does; on failure, the error of the first failing system in plan order (as the serial runner would
 * have met it), after every started task has settled and every instance is closed.
 */
export async function executeParallel(plan: SystemsPlan, scopes: readonly ScopeData[], opts: ParallelOptions): Promise<Map<string, SystemRuns>> {
  const { store, log } = opts;
  const runners: Runners = {
    pool: new WorkerPool(opts.jobs, { scopes, cacheRoot: store.root, workDir: opts.workDir, env: opts.env }, log),
    local: new LocalRunner(opts),
    wire: new WireCache(),
  };
  const queries = scopes.reduce((n, s) => n + s.queries.length, 0);
  const progress = log.progress(`${plan.systems.length} system(s), ${opts.jobs} threads`, queries * plan.systems.length);
  const tasks = scheduleTasks(plan, scopes, opts, runners, (n) => progress.tick(n));
  const settled = new Map<string, PromiseSettledResult<Computed>[]>();
  for (const [id, perScope] of tasks) settled.set(id, await Promise.allSettled(perScope));
  const closeErrors = await runners.pool.shutdown();
  await runners.local.close();
  const failure = firstFailure(settled, closeErrors);
  if (failure !== undefined) throw failure;
  progress.done();
  const out = new Map<string, SystemRuns>();
  for (const [id, perScope] of settled) {
    const done = perScope.map((r) => (r as PromiseFulfilledResult<Computed>).value);
    out.set(id, { runs: done.map((d) => d.run), computed: done.map((d) => d.computed) });
  }
  return out;
}
