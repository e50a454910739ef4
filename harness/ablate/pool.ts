import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { HarnessError } from '../errors.js';
import type { Logger } from '../log.js';
import type { PlannedSystem, SystemsPlan } from '../systems/plan.js';
import type { ScopeData, ScopeRun, SystemInstance } from '../systems/types.js';
import { cachedScopeRun, type ExecuteOptions, refreshedSystems, type SystemRuns } from './scope-run.js';
import { DocPositions, packRun, type PackedRun, unpackRun } from './packed.js';
import type { FromWorker, SystemSpec, ToWorker, WireError, WorkerInit } from './worker.js';

/**
 * The parallel ablation runner (docs/adr/0022-parallel-ablation.md). Every (system, scope) run is a task that
 * starts once its inputs' runs on the same scope exist; the main thread looks it up in the run cache and, on a
 * miss, hands it to a pool of worker threads. What crosses the boundary: the scopes once per worker (at
 * start), per task a {@link SystemSpec} and the inputs as {@link PackedRun}s, per answer one PackedRun whose
 * buffers are transferred. The main thread stays the only writer of the run cache.
 */

/**
 * `--jobs auto`: the cores, but no more threads than there are (system, scope) runs that can run at once (the
 * widest level of the plan, where a system's level is one more than its deepest input's, times the scopes).
 */
export function autoJobs(plan: SystemsPlan, scopes: number, cores = availableParallelism()): number {
  const level = new Map<string, number>();
  const width = new Map<number, number>();
  for (const s of plan.systems) {
    const l = s.inputs.reduce((m, id) => Math.max(m, (level.get(id) ?? 0) + 1), 0);
    level.set(s.id, l);
    width.set(l, (width.get(l) ?? 0) + 1);
  }
  const widest = Math.max(0, ...width.values()) * scopes;
  return Math.max(1, Math.min(cores, widest));
}

/** Thrown to tasks that were still queued when another task failed; never the error the user sees. */
class Aborted extends Error {}

interface Task {
  readonly id: number;
  readonly message: Extract<ToWorker, { type: 'run' }>;
  readonly transfer: ArrayBuffer[];
  resolve(run: PackedRun | 'refused'): void;
  reject(err: unknown): void;
}

interface Slot {
  readonly worker: Worker;
  current: Task | undefined;
  readonly holds: Set<string>;
}

function fromWire(e: WireError): Error {
  const err =
    e.exitCode === undefined ? new Error(e.message) : new HarnessError(e.message, { exitCode: e.exitCode, ...(e.hint === undefined ? {} : { hint: e.hint }) });
  err.name = e.name;
  if (e.stack !== undefined) err.stack = e.stack;
  return err;
}

/**
 * The worker module beside this one. Under the test runner (sources, not dist/) it is a .ts file: a small
 * bootstrap registers tsx's loader in the worker first (a worker's execArgv cannot carry --import).
 */
function startWorker(init: WorkerInit): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./worker.js', import.meta.url), { workerData: init });
  // The ESM entry of tsx/esm/api, found through its package.json (require.resolve would pick the CommonJS one).
  const pkgFile = createRequire(import.meta.url).resolve('tsx/package.json');
  const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as { exports: Record<string, { import: { default: string } }> };
  const tsx = pathToFileURL(join(dirname(pkgFile), (pkg.exports['./esm/api'] as { import: { default: string } }).import.default)).href;
  const entry = new URL('./worker.ts', import.meta.url).href;
  const code = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(code, { eval: true, workerData: init });
}

/** Up to `jobs` worker threads, started on the first task that needs one; one task per worker at a time. */
class WorkerPool {
  readonly #slots: Slot[] = [];
  readonly #queue: Task[] = [];
  readonly #init: WorkerInit;
  readonly #jobs: number;
  readonly #log: Logger;
  #next = 0;
  #aborted = false;

  constructor(jobs: number, init: WorkerInit, log: Logger) {
    this.#jobs = jobs;
    this.#init = init;
    this.#log = log;
  }

  run(system: SystemSpec, scope: number, inputs: readonly PackedRun[], topK: number): Promise<PackedRun | 'refused'> {
    if (this.#aborted) return Promise.reject(new Aborted());
    return new Promise((resolve, reject) => {
      const id = this.#next++;
      // Input buffers are copied (structured clone), not transferred: other systems still consume them here.
      this.#queue.push({ id, message: { type: 'run', task: id, system, scope, inputs, topK }, transfer: [], resolve, reject });
      this.#pump();
    });
  }

  /** A system has run on every scope: the workers holding its instance close it. */
  close(system: string): void {
    for (const s of this.#slots) {
      if (s.holds.delete(system)) s.worker.postMessage({ type: 'close', system } satisfies ToWorker);
    }
  }

  /** Rejects every queued task; tasks already running finish (their answers are dropped by their callers). */
  abort(): void {
    this.#aborted = true;
    for (const t of this.#queue.splice(0)) t.reject(new Aborted());
  }

  /** Closes every instance in every worker, then ends the workers. Errors from closing are returned. */
  async shutdown(): Promise<Error[]> {
    const errors: Error[] = [];
    await Promise.all(
      this.#slots.map(
        (s) =>
          new Promise<void>((resolve) => {
            const done = (m: FromWorker) => {
              if (m.type !== 'closed') return;
              errors.push(...m.errors.map(fromWire));
              resolve();
            };
            s.worker.on('message', done);
            s.worker.once('exit', () => resolve());
            s.worker.postMessage({ type: 'shutdown' } satisfies ToWorker);
          }),
      ),
    );
    await Promise.all(this.#slots.map((s) => s.worker.terminate()));
    this.#slots.length = 0;
    return errors;
  }

  #spawn(): Slot {
    const worker = startWorker(this.#init);
    const slot: Slot = { worker, current: undefined, holds: new Set() };
    worker.on('message', (m: FromWorker) => {
      if (m.type === 'log') {
        if (m.level === 'warn') this.#log.warn(m.message);
        else this.#log.info(m.message);
        return;
      }
      if (m.type === 'closed') return;
      const t = slot.current;
      if (t === undefined || t.id !== m.task) return;
      slot.current = undefined;
      if (m.type === 'done') {
        slot.holds.add(t.message.system.id);
        t.resolve(m.run);
      } else if (m.type === 'refused') {
        this.#log.info(`${t.message.system.id}: runs in the main thread (${m.reason})`);
        t.resolve('refused');
      } else {
        slot.holds.add(t.message.system.id);
        t.reject(fromWire(m.error));
      }
      this.#pump();
    });
    const lost = (err: Error) => {
      const i = this.#slots.indexOf(slot);
      if (i >= 0) this.#slots.splice(i, 1);
      const t = slot.current;
      slot.current = undefined;
      t?.reject(new HarnessError(`a worker thread of the ablation stopped: ${err.message}`, { cause: err }));
      this.#pump();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => {
      if (slot.current !== undefined) lost(new Error(`exit code ${code}`));
    });
    this.#slots.push(slot);
    return slot;
  }

  #pump(): void {
    while (this.#queue.length > 0) {
      let slot = this.#slots.find((s) => s.current === undefined);
      if (slot === undefined) {
        if (this.#slots.length >= this.#jobs) return;
        slot = this.#spawn();
      }
      // Prefer a task whose system this worker already holds: its instance (a model, an index) is reused.
      const free = slot;
      let at = this.#queue.findIndex((t) => free.holds.has(t.message.system.id));
      if (at < 0) at = 0;
      const [task] = this.#queue.splice(at, 1) as [Task];
      slot.current = task;
      slot.worker.postMessage(task.message, task.transfer);
    }
  }
}

function specOf(system: PlannedSystem, byId: ReadonlyMap<string, PlannedSystem>): SystemSpec {
  const inputs = system.inputs.map((id) => byId.get(id) as PlannedSystem);
  return {
    id: system.id,
    node: system.node,
    kind: system.kind,
    params: system.params,
    fingerprintHash: system.fingerprintHash,
    inputs: inputs.map((s) => ({ id: s.id, theoreticalMinScore: s.bound.theoreticalMinScore, sendsTextOffMachine: s.bound.sendsTextOffMachine })),
    inputFingerprints: inputs.map((s) => s.fingerprint),
    ...(system.dir === undefined ? {} : { dir: system.dir }),
  };
}

/**
 * Runs the plan with up to `jobs` worker threads. Returns every system's runs in scope order, as the serial
 * runner does; on failure, the error of the first failing system in plan order (as the serial runner would
 * have met it), after every started task has settled and every instance is closed.
 */
export async function executeParallel(
  plan: SystemsPlan,
  scopes: readonly ScopeData[],
  opts: ExecuteOptions & { readonly jobs: number },
): Promise<Map<string, SystemRuns>> {
  const { store, log, topK } = opts;
  const byId = new Map(plan.systems.map((s) => [s.id, s] as const));
  const pool = new WorkerPool(opts.jobs, { scopes, cacheRoot: store.root, workDir: opts.workDir, env: opts.env }, log);
  const docs = new DocPositions();
  // A run that many Systems consume (an arm under a grid of fusions) is packed once, not once per consumer.
  const packed = new WeakMap<ScopeRun, PackedRun>();
  const packedOf = (run: ScopeRun, scope: ScopeData): PackedRun => {
    let p = packed.get(run);
    if (p === undefined) {
      p = packRun(run, scope, docs);
      packed.set(run, p);
    }
    return p;
  };
  /** Systems a worker refused to re-create run here, one instance each, as in the serial runner. */
  const local = new Map<string, SystemInstance>();
  const localTurn = new Map<string, Promise<unknown>>();
  /** Systems a worker refused: their other Scopes go straight to the main thread. */
  const refused = new Set<string>();
  const queries = scopes.reduce((n, s) => n + s.queries.length, 0);
  const progress = log.progress(`${plan.systems.length} system(s), ${opts.jobs} threads`, queries * plan.systems.length);

  const runLocally = (system: PlannedSystem, scope: ScopeData, inputs: readonly ScopeRun[]): Promise<ScopeRun> => {
    // One runScope at a time per local instance, like the workers.
    const turn = (localTurn.get(system.id) ?? Promise.resolve()).then(() => {
      let inst = local.get(system.id);
      if (inst === undefined) {
        inst = system.bound.create({ cache: store, log, workDir: join(opts.workDir, 'work'), env: opts.env });
        local.set(system.id, inst);
      }
      return inst.runScope(scope, inputs, topK);
    });
    localTurn.set(
      system.id,
      turn.catch(() => undefined),
    );
    return turn;
  };

  /** (system, scope) -> its run with whether it was computed; created in plan order, each awaiting its inputs. */
  const tasks = new Map<string, Promise<{ run: ScopeRun; computed: boolean }>[]>();
  const refreshed = refreshedSystems(plan, opts.refresh);
  for (const system of plan.systems) {
    const spec = specOf(system, byId);
    const perScope = scopes.map(async (scope, i) => {
      const inputs = await Promise.all(system.inputs.map((id) => (tasks.get(id) as Promise<{ run: ScopeRun }>[])[i] as Promise<{ run: ScopeRun }>));
      const inputRuns = inputs.map((x) => x.run);
      const res = await cachedScopeRun(
        store,
        system,
        scope,
        topK,
        async () => {
          if (refused.has(system.id)) return runLocally(system, scope, inputRuns);
          const answer = await pool.run(
            spec,
            i,
            inputRuns.map((r) => packedOf(r, scope)),
            topK,
          );
          if (answer !== 'refused') return unpackRun(answer, scope);
          refused.add(system.id);
          return runLocally(system, scope, inputRuns);
        },
        refreshed.has(system.id),
      );
      progress.tick(scope.queries.length);
      return res;
    });
    tasks.set(system.id, perScope);
    // Fail fast: the first failure stops queued work; running tasks finish.
    for (const p of perScope) p.catch(() => pool.abort());
    void Promise.allSettled(perScope).then(() => pool.close(system.id));
  }

  const settled = new Map<string, PromiseSettledResult<{ run: ScopeRun; computed: boolean }>[]>();
  for (const [id, perScope] of tasks) settled.set(id, await Promise.allSettled(perScope));
  const closeErrors = await pool.shutdown();
  for (const inst of local.values()) await inst.close?.();
  for (const perScope of settled.values()) {
    for (const r of perScope) if (r.status === 'rejected' && !(r.reason instanceof Aborted)) throw r.reason;
  }
  const first = closeErrors[0];
  if (first !== undefined) throw first;
  progress.done();
  const out = new Map<string, SystemRuns>();
  for (const [id, perScope] of settled) {
    const done = perScope.map((r) => (r as PromiseFulfilledResult<{ run: ScopeRun; computed: boolean }>).value);
    out.set(id, { runs: done.map((d) => d.run), computed: done.map((d) => d.computed) });
  }
  return out;
}
