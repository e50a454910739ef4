import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { HarnessError, InputError } from '../errors.js';
import type { TrecEvalSettings, TrecPlan } from './plan.js';
import type { QrelsIndex, QrelsIndexParts } from './qrels-index.js';
import { evaluateRunRange, type RangeResult } from './run-blocks.js';

/** A large run scored by several threads: cut into Pieces at query boundaries, claimed in turn by this thread and workers. */

const WORKER_URL = new URL('./stream-worker.js', import.meta.url);

/** Whether the worker's module is there to start (it is not when the sources run untranspiled, as in vitest). */
export function workersPresent(): boolean {
  return existsSync(fileURLToPath(WORKER_URL));
}

/**
 * A parallel run is cut into pieces of about this size, which the threads claim one at a time: a thread that
 * starts late (a worker's isolate and cold JIT) or runs slowly (a shared core) simply takes fewer, and the
 * last piece to finish keeps the others waiting for a few tens of milliseconds at most.
 */
export const PIECE_BYTES = 4 << 20;
/** The read buffer of a piece (streamTrecRun grows it for longer lines). */
const PIECE_CHUNK = 1 << 20;

/**
 * How a run file is split for parallel scoring: byte offsets where a new query's lines begin. The first
 * part gets `firstShare` of the bytes (the main thread, which also prints), the others equal shares.
 */
export function splitAtQueryBoundaries(runPath: string, parts: number, firstShare = 1 / parts): number[] {
  const size = statSync(runPath).size;
  const cuts = [0];
  if (parts < 2) return [0, size];
  const fd = openSync(runPath, 'r');
  try {
    // Query blocks are short (37 kB at depth 1,000): a small window finds the next one in a read or two.
    const win = Buffer.allocUnsafe(1 << 16);
    for (let k = 1; k < parts; k++) {
      const share = firstShare + ((k - 1) * (1 - firstShare)) / (parts - 1);
      let pos = Math.max(Math.floor(size * share), cuts[cuts.length - 1]!);
      let firstQid: Buffer | undefined;
      let cut = -1;
      // Scan forward line by line from the first line start after `pos` until the query id changes.
      let carry = Buffer.alloc(0);
      let skipPartial = pos > 0;
      while (cut < 0 && pos < size) {
        const got = readSync(fd, win, 0, win.length, pos);
        const data = carry.length ? Buffer.concat([carry, win.subarray(0, got)]) : win.subarray(0, got);
        const base = pos - carry.length;
        pos += got;
        let p = 0;
        if (skipPartial) {
          const nl = data.indexOf(10);
          if (nl < 0) {
            carry = Buffer.alloc(0);
            continue;
          }
          p = nl + 1;
          skipPartial = false;
        }
        for (;;) {
          const nl = data.indexOf(10, p);
          if (nl < 0 && pos < size) break;
          const lineEnd = nl < 0 ? data.length : nl;
          let a = p;
          while (a < lineEnd && (data[a] === 32 || data[a] === 9)) a++;
          let b = a;
          while (b < lineEnd && data[b] !== 32 && data[b] !== 9 && data[b] !== 13) b++;
          if (b > a && data[a] !== 35) {
            const qid = data.subarray(a, b);
            if (firstQid === undefined) firstQid = Buffer.from(qid);
            else if (!qid.equals(firstQid)) {
              cut = base + p;
              break;
            }
          }
          if (nl < 0) break;
          p = nl + 1;
        }
        carry = cut < 0 && p < data.length ? Buffer.from(data.subarray(p)) : Buffer.alloc(0);
      }
      if (cut < 0) break;
      cuts.push(cut);
    }
  } finally {
    closeSync(fd);
  }
  cuts.push(size);
  return [...new Set(cuts)];
}

/** The messages a worker sends back: one per piece it scored, then `done`. */
export type WorkerReply =
  | { readonly ok: true; readonly piece: number; readonly result: RangeResult }
  | {
      readonly ok: false;
      readonly piece: number;
      readonly input?: { file: string; line: number | undefined; message: string; hint: string | undefined };
      readonly message: string;
    }
  | { readonly done: true };

/** Input of a worker (see stream-worker.ts). */
export interface WorkerTask {
  /** The qrels index, from QrelsIndex.share(). */
  readonly index: QrelsIndexParts;
  readonly runPath: string;
  readonly settings: TrecEvalSettings;
  /** The name of the plan's MeasureKernelSet. */
  readonly kernels: string;
  /** Piece k is bytes [cuts[k], cuts[k + 1]) of the run. */
  readonly cuts: readonly number[];
  /** The next piece to claim (Atomics.add), shared by every thread; set past the last piece after an error. */
  readonly next: Int32Array;
}

/**
 * Scores the pieces of a run on this thread and `workers` worker threads, each claiming the next piece from
 * a shared counter until none is left (so the work divides itself by how fast each thread turns out to be).
 * This thread scores its pieces through `score`; the workers send rows back per piece (transferred typed
 * arrays, no copy). After an error no further piece is claimed, the pieces already claimed finish, and the
 * error of the earliest piece is thrown: the one a single thread would have met first.
 */
export async function evaluatePieces(
  index: QrelsIndex,
  runPath: string,
  plan: TrecPlan,
  cuts: readonly number[],
  workers: number,
  score: (qi: number, ranked: Int32Array) => void,
): Promise<RangeResult[]> {
  const pieces = cuts.length - 1;
  const next = new Int32Array(new SharedArrayBuffer(4));
  const results = new Array<RangeResult | undefined>(pieces);
  const errors = new Array<unknown>(pieces);
  const task: WorkerTask = { index: index.share(), runPath, settings: plan.settings, kernels: plan.kernels.name, cuts, next };
  const started = Array.from({ length: workers }, () => startWorker(task, results, errors));
  for (;;) {
    const k = Atomics.add(next, 0, 1);
    if (k >= pieces) break;
    try {
      results[k] = await evaluateRunRange(index, runPath, plan, cuts[k]!, cuts[k + 1]!, score, PIECE_CHUNK);
    } catch (e) {
      if (e instanceof InputError) (e as InputError & { rangeStart?: number }).rangeStart = cuts[k]!;
      errors[k] = e;
      Atomics.store(next, 0, pieces);
      break;
    }
  }
  try {
    await Promise.all(started.map((x) => x.done));
  } catch (e) {
    for (const x of started) void x.worker.terminate();
    throw e;
  }
  for (let k = 0; k < pieces; k++) if (errors[k] !== undefined) throw errors[k];
  return results as RangeResult[];
}

function startWorker(task: WorkerTask, results: (RangeResult | undefined)[], errors: unknown[]): { readonly worker: Worker; readonly done: Promise<void> } {
  const worker = new Worker(WORKER_URL, { workerData: task });
  const done = new Promise<void>((resolve, reject) => {
    worker.on('message', (reply: WorkerReply) => {
      if ('done' in reply) {
        void worker.terminate();
        resolve();
      } else if (reply.ok) results[reply.piece] = reply.result;
      else if (reply.input) {
        const err = new InputError(reply.input.file, reply.input.line, reply.input.message, reply.input.hint === undefined ? {} : { hint: reply.input.hint });
        (err as InputError & { rangeStart?: number }).rangeStart = task.cuts[reply.piece]!;
        errors[reply.piece] = err;
      } else errors[reply.piece] = new HarnessError(`evaluation worker failed: ${reply.message}`);
    });
    worker.once('error', (e) => reject(e));
    worker.once('exit', (code) => reject(new HarnessError(`evaluation worker exited (code ${code}) before it finished`)));
  });
  // A failure on this thread abandons the workers; their rejections must not surface as unhandled.
  done.catch(() => {});
  return { worker, done };
}

/** Errors from a range that does not start the file carry line numbers relative to it; make them absolute. */
export async function withAbsoluteLine(e: unknown, runPath: string, cuts: readonly number[]): Promise<unknown> {
  const start = (e as { rangeStart?: number }).rangeStart;
  if (!(e instanceof InputError) || e.file !== runPath || start === undefined || start === 0 || e.line === undefined || !cuts.includes(start)) return e;
  let before = 0;
  const fd = openSync(runPath, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    for (let pos = 0; pos < start; ) {
      const got = readSync(fd, buf, 0, Math.min(buf.length, start - pos), pos);
      if (got === 0) break;
      for (let i = buf.indexOf(10, 0); i >= 0 && i < got; i = buf.indexOf(10, i + 1)) before++;
      pos += got;
    }
  } finally {
    closeSync(fd);
  }
  const prefix = `${e.file}:${e.line}: `;
  const raw = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
  return new InputError(e.file, e.line + before, raw, e.hint === undefined ? {} : { hint: e.hint });
}
