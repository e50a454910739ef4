import { parentPort, workerData } from 'node:worker_threads';
import { InputError } from '../errors.js';
import { evaluateRunRange, QrelsIndex, type WorkerReply, type WorkerTask } from './stream-eval.js';
import { compileTrecPlan } from './trec-eval.js';

// Pieces of a large run file, claimed one at a time from the counter every thread shares, scored off the
// main thread against its qrels index, shared in place (see evaluatePieces).
const task = workerData as WorkerTask;
const index = QrelsIndex.fromParts(task.index);
const plan = compileTrecPlan(task.settings);
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
