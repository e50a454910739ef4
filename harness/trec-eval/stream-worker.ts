import { parentPort, workerData } from 'node:worker_threads';
import { InputError } from '../errors.js';
import { FAST_KERNELS } from './fast/kernels.js';
import { REFERENCE_KERNELS } from './kernel-set.js';
import type { WorkerReply, WorkerTask } from './pieces.js';
import { compileTrecPlan } from './plan.js';
import { QrelsIndex } from './qrels-index.js';
import { evaluateRunRange } from './run-blocks.js';

// Pieces of a large run file, claimed one at a time from the counter every thread shares, scored off the
// main thread against its qrels index, shared in place (see evaluatePieces).
const task = workerData as WorkerTask;
const index = QrelsIndex.fromParts(task.index);
// The main thread's kernel set: the same values either way, but the same code too.
const plan = compileTrecPlan(task.settings, task.kernels === FAST_KERNELS.name ? FAST_KERNELS : REFERENCE_KERNELS);
const pieces = task.cuts.length - 1;
for (;;) {
  const k = Atomics.add(task.next, 0, 1);
  if (k >= pieces) break;
  try {
    const result = await evaluateRunRange(index, task.runPath, plan, task.cuts[k]!, task.cuts[k + 1]!, undefined, 1 << 20);
    parentPort!.postMessage({ ok: true, piece: k, result } satisfies WorkerReply, [result.rows.buffer as ArrayBuffer, result.qis.buffer as ArrayBuffer]);
  } catch (e) {
    const err = e instanceof Error ? e : new Error(String(e));
    const reply: WorkerReply =
      err instanceof InputError
        ? { ok: false, piece: k, message: err.message, input: { file: err.file, line: err.line, message: stripPrefix(err), hint: err.hint } }
        : { ok: false, piece: k, message: err.message };
    parentPort!.postMessage(reply);
    Atomics.store(task.next, 0, pieces);
    break;
  }
}
parentPort!.postMessage({ done: true } satisfies WorkerReply);

function stripPrefix(e: InputError): string {
  const prefix = `${e.file}${e.line === undefined ? '' : `:${e.line}`}: `;
  return e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
}
