import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import type { JsonValue } from '../../evalset/types.js';
import { canonicalJson, ContentStore, sha256Hex } from '../cache/index.js';
import { HarnessError } from '../errors.js';
import type { Logger } from '../log.js';
import { nodeKinds, type NodeKindName } from '../systems/registry.js';
import type { BoundNode, InputFacts, NodeContext, ScopeData, ScopeRun, SystemInstance } from '../systems/types.js';
import { DocPositions, wireRun, type WireScopeRun, transferables, unwireRun } from './wire.js';

/**
 * One thread of the ablation's worker pool (docs/adr/0022-parallel-ablation.md). It re-creates systems from
 * what the plan printed about them (node, kind, resolved params, input facts) through the same registry the
 * config loader used, refuses a system whose re-bound fingerprint differs from the plan's (the main thread
 * then runs it itself), keeps one instance per system until told the system is done, and answers each
 * (system, scope) task with a {@link WireScopeRun}. It never touches the run cache: the main thread is its only
 * writer.
 */

/** What the pool hands every worker once, at start. */
export interface WorkerInit {
  readonly scopes: readonly ScopeData[];
  readonly cacheRoot: string;
  readonly workDir: string;
  readonly env: NodeJS.ProcessEnv;
}

/** What a worker needs to re-create one system of the plan. */
export interface SystemSpec {
  readonly id: string;
  readonly node: NodeKindName;
  readonly kind: string;
  readonly params: JsonValue;
  readonly fingerprintHash: string;
  readonly inputs: readonly InputFacts[];
  readonly inputFingerprints: readonly JsonValue[];
  readonly dir?: string;
}

type RunMessage = Extract<ToWorker, { type: 'run' }>;

export type ToWorker =
  | {
      readonly type: 'run';
      readonly task: number;
      readonly system: SystemSpec;
      readonly scope: number;
      readonly inputs: readonly WireScopeRun[];
      readonly topK: number;
    }
  | { readonly type: 'close'; readonly system: string }
  | { readonly type: 'shutdown' };

export interface WireError {
  readonly name: string;
  readonly message: string;
  readonly stack: string | undefined;
  readonly exitCode: 1 | 2 | 3 | 4 | undefined;
  readonly hint: string | undefined;
}

export type FromWorker =
  | { readonly type: 'done'; readonly task: number; readonly run: WireScopeRun }
  | { readonly type: 'refused'; readonly task: number; readonly reason: string }
  | { readonly type: 'failed'; readonly task: number; readonly error: WireError }
  | { readonly type: 'log'; readonly level: 'info' | 'warn'; readonly message: string }
  | { readonly type: 'closed'; readonly errors: readonly WireError[] };

export function toWire(err: unknown): WireError {
  const e = err instanceof Error ? err : new Error(String(err));
  return {
    name: e.name,
    message: e.message,
    stack: e.stack,
    exitCode: err instanceof HarnessError ? err.exitCode : undefined,
    hint: err instanceof HarnessError ? err.hint : undefined,
  };
}

/** The system's bound node, or why it cannot be re-created here with the identity the plan gave it. */
function rebind(spec: SystemSpec, topK: number): BoundNode | { reason: string } {
  const res = nodeKinds[spec.node].bind({
    kind: spec.kind,
    params: spec.params,
    inputs: spec.inputs,
    topK,
    id: spec.id,
    ...(spec.dir === undefined ? {} : { dir: spec.dir }),
  });
  if ('problems' in res) return { reason: `its resolved params do not bind again: ${res.problems.join('; ')}` };
  const own = res.node.fingerprint;
  const fingerprint: JsonValue = spec.inputFingerprints.length === 0 ? own : { own, inputs: spec.inputFingerprints };
  if (sha256Hex(canonicalJson(fingerprint)) !== spec.fingerprintHash) return { reason: 'its resolved params bind to another fingerprint' };
  return res.node;
}

/** A worker's instances and the input runs it already unwired, answering the pool's messages one at a time. */
class WorkerThread {
  readonly #instances = new Map<string, SystemInstance>();
  /** Input runs by input system id and scope: a system's run on a scope never changes within an ablation. */
  readonly #unwired = new Map<string, ScopeRun>();
  readonly #docs = new DocPositions();
  readonly #ctx: NodeContext;

  constructor(
    readonly init: WorkerInit,
    readonly post: (m: FromWorker, transfer?: ArrayBuffer[]) => void,
    readonly log: Logger,
  ) {
    this.#ctx = { cache: new ContentStore(init.cacheRoot, { log }), log, workDir: join(init.workDir, 'work'), env: init.env };
  }

  async handle(m: ToWorker): Promise<void> {
    if (m.type === 'close') {
      const errors = await this.#closeAll([m.system]);
      for (const e of errors) this.log.warn(`${m.system}: closing its instance failed: ${e.message}`);
    } else if (m.type === 'shutdown') {
      this.post({ type: 'closed', errors: await this.#closeAll([...this.#instances.keys()]) });
    } else await this.#run(m);
  }

  async #closeAll(ids: readonly string[]): Promise<WireError[]> {
    const errors: WireError[] = [];
    for (const id of ids) {
      const inst = this.#instances.get(id);
      this.#instances.delete(id);
      try {
        await inst?.close?.();
      } catch (e) {
        errors.push(toWire(e));
      }
    }
    return errors;
  }

  /** The system's instance, created on its first task here; undefined once the task was answered (refused or failed). */
  #instance(m: RunMessage): SystemInstance | undefined {
    const held = this.#instances.get(m.system.id);
    if (held !== undefined) return held;
    const bound = rebind(m.system, m.topK);
    if ('reason' in bound) {
      this.post({ type: 'refused', task: m.task, reason: bound.reason });
      return undefined;
    }
    try {
      const instance = bound.create(this.#ctx);
      this.#instances.set(m.system.id, instance);
      return instance;
    } catch (e) {
      this.post({ type: 'failed', task: m.task, error: toWire(e) });
      return undefined;
    }
  }

  /** The task's input runs; an input many systems consume (an arm under a grid of fusions) is unwired once per worker. */
  #inputs(m: RunMessage, scope: ScopeData): ScopeRun[] {
    return m.inputs.map((p, k) => {
      const key = `${m.system.inputs[k]?.id}\u0000${m.scope}`;
      let run = this.#unwired.get(key);
      if (run === undefined) {
        run = unwireRun(p, scope);
        this.#unwired.set(key, run);
      }
      return run;
    });
  }

  async #run(m: RunMessage): Promise<void> {
    const instance = this.#instance(m);
    if (instance === undefined) return;
    const scope = this.init.scopes[m.scope] as ScopeData;
    try {
      const run = await instance.runScope(scope, this.#inputs(m, scope), m.topK);
      const wired = wireRun(run, scope, this.#docs);
      this.post({ type: 'done', task: m.task, run: wired }, transferables(wired));
    } catch (e) {
      this.post({ type: 'failed', task: m.task, error: toWire(e) });
    }
  }
}

function main(): void {
  const port = parentPort;
  if (port === null) throw new HarnessError('internal: harness/execution/worker.js runs only as a worker thread');
  const post = (m: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);
  const log: Logger = {
    info: (message) => post({ type: 'log', level: 'info', message }),
    warn: (message) => post({ type: 'log', level: 'warn', message }),
    // Progress is the main thread's: it ticks per finished task.
    progress: () => ({ tick() {}, done() {} }),
  };
  const thread = new WorkerThread(workerData as WorkerInit, post, log);
  // Messages are handled strictly in turn: an instance never sees two runScope calls at once (as in the serial
  // runner), and a shutdown sent while a task runs closes the instances only after that task answered.
  let queue = Promise.resolve();
  port.on('message', (m: ToWorker) => {
    queue = queue
      .then(() => thread.handle(m))
      // Whatever escapes a handler answers its task (the pool waits for every answer) and never stalls the queue.
      .catch((e: unknown) => {
        if (m.type === 'run') post({ type: 'failed', task: m.task, error: toWire(e) });
        else log.warn(`worker: ${m.type}: ${toWire(e).message}`);
      });
  });
}

main();
