import { parentPort, workerData } from 'node:worker_threads';
import { InputError } from '../errors.js';
import { evaluateRunRange, QrelsIndex, type WorkerReply, type WorkerTask } from './stream-eval.js';
import { compileTrecPlan } from './trec-eval.js';

// One byte range of a large run file, scored off the main thread against the main thread's qrels index,
// shared in place (see evaluateTrecRunFile).
const task = workerData as WorkerTask;
try {
  const index = QrelsIndex.fromParts(task.index);
  const result = await evaluateRunRange(index, task.runPath, compileTrecPlan(task.settings), task.start, task.end);
  parentPort!.postMessage({ ok: true, result } satisfies WorkerReply, [result.rows.buffer as ArrayBuffer, result.qis.buffer as ArrayBuffer]);
} catch (e) {
  const err = e instanceof Error ? e : new Error(String(e));
  const reply: WorkerReply =
    err instanceof InputError
      ? { ok: false, message: err.message, input: { file: err.file, line: err.line, message: stripPrefix(err), hint: err.hint } }
      : { ok: false, message: err.message };
  parentPort!.postMessage(reply);
}

function stripPrefix(e: InputError): string {
  const prefix = `${e.file}${e.line === undefined ? '' : `:${e.line}`}: `;
  return e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
}
