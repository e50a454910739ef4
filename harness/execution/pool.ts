import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { HarnessError } from '../errors.js';
import type { Logger } from '../log.js';
import type { SystemsPlan } from '../systems/plan.js';
import type { WireScopeRun } from './wire.js';
import type { FromWorker, SystemSpec, ToWorker, WireError, WorkerInit } from './worker.js';

/**
 * The parallel ablation runner (docs/adr/0022-parallel-ablation.md). Every (system, scope) run is a task that
 * starts once its inputs' runs on the same scope exist; the main thread looks it up in the run cache and, on a
 * miss, hands it to a pool of worker threads. What crosses the boundary: the scopes once per worker (at
 * start), per task a {@link SystemSpec} and the inputs as {@link WireScopeRun}s, per answer one WireScopeRun whose
 * buffers are transferred. The main thread stays the only writer of the run cache.
 */

/**
 * `--jobs auto`: one worker per core but one, and no more than there are (system, scope) runs that can run at
 * once (the widest level of the plan, where a system's level is one more than its deepest input's, times the
 * scopes); one means the serial runner. The core left is the main thread's: it serializes, hashes and writes
 * every computed run and packs every input, and two workers beside it on two cores ran no faster than serial
 * (ADR 0022, addendum of 2026-11-26).
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
  return Math.max(1, Math.min(cores - 1, widest));
}

/** Thrown to tasks that were still queued when another task failed; never the error the user sees. */
export class Aborted extends Error {}

interface Task {
  readonly id: number;
  readonly message: Extract<ToWorker, { type: 'run' }>;
  readonly transfer: ArrayBuffer[];
  resolve(run: WireScopeRun | 'refused'): void;
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
export class WorkerPool {
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

  run(system: SystemSpec, scope: number, inputs: readonly WireScopeRun[], topK: number): Promise<WireScopeRun | 'refused'> {
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
        // How the work is spread, not what it found: the run is the same in either thread.
        this.#log.detail?.(`${t.message.system.id}: runs in the main thread (${m.reason})`);
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
