import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../log.js';
import { compileTrecPlan } from '../trec-eval/plan.js';
import { formatTrecSummary, TrecQueryWriter } from '../trec-eval/print.js';
import { streamableQrels } from '../trec-eval/qrels-stream.js';
import { evaluateStreamed } from '../trec-eval/stream-eval.js';
import { PROJECT_ROOT } from '../testing/shared.js';
import { parseTrecEvalArgs } from './eval.command.js';
import { runEval, STREAM_Q_BYTES, triesStreams } from './eval-run.js';
import { tempDir } from '../testing/temp.js';

/**
 * `harness eval -q` through the bounded spool (qrels and run streamed, each query's lines formatted as it is
 * scored): the bytes must be those of the paths that keep a row per query until the end, and a late error
 * must print nothing and leave no temporary file.
 */

const dir = tempDir('eval-spool');
const spoolDir = join(dir, 'spool');
mkdirSync(spoolDir);

function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

let seed = 5;
const rnd = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
/**
 * `queries` qrels queries, zero-padded (bytewise order is the file's); the run skips every 7th (missing: -c
 * scores them), adds queries without qrels (q0000, q0050x), ties scores, and judges some documents negatively.
 */
function inputs(queries: number): { qrels: string; run: string } {
  let qrels = '';
  let run = 'q0000 Q0 d1 1 1 tag\n';
  for (let q = 1; q <= queries; q++) {
    const id = `q${String(q).padStart(4, '0')}`;
    for (let d = 0; d < 25; d++) if (rnd() < 0.5) qrels += `${id} 0 d${d} ${Math.floor(rnd() * 4) - 1}\n`;
    if (q % 7 === 3) continue;
    for (let d = 0; d < 30; d++) run += `${id} Q0 d${(d * 7) % 40} ${d} ${(Math.floor(rnd() * 6) / 2).toFixed(1)} tag\n`;
    if (q === 50) run += `${id}x Q0 d1 1 1 tag\n`;
  }
  return { qrels, run };
}
const { qrels, run } = inputs(120);
const QRELS = file('sorted.qrels', qrels);
const RUN = file('sorted.run', run);
// 600 queries: their -q lines (over 1 MB) leave the query writer's buffer for the spool before the run ends.
const big = inputs(600);
const BIG_QRELS = file('big.qrels', big.qrels);
const BIG_RUN = file('big.run', big.run);
// A malformed last line: the error comes after every other query was scored and spooled.
const LATE = file('late.run', `${big.run}q0600 Q0 d99 31 notascore tag\n`);

const FLAG_SETS = [
  ['-q', '-m', 'all_trec'],
  ['-q', '-c', '-m', 'all_trec'],
  ['-q', '-c', '-M', '3', '-J', '-m', 'all_trec'],
  ['-q', '-l', '2', '-m', 'map', '-m', 'P.5', '-m', 'relstring.10'],
  ['-q', '-c', '-m', 'relstring', '-m', 'ndcg_cut.5,10'],
];

async function evalOut(argv: readonly string[], threads: number | 'auto', budgetBytes?: number): Promise<string> {
  let out = '';
  const io = { out: (t: string) => void (out += t), log: memoryLogger(), env: {}, cwd: dir };
  await runEval(parseTrecEvalArgs(argv), 'trec', io, threads, budgetBytes === undefined ? {} : { budgetBytes, dir: spoolDir });
  return out;
}

describe('harness eval -q through the spool', () => {
  it('prints the bytes of the row-keeping paths, spilled or not (-c, missing queries, relstrings, -M, -J, -l)', async () => {
    for (const flags of FLAG_SETS) {
      const argv = [...flags, QRELS, RUN];
      // A 64-byte budget spills at the first query; the default keeps all of it in memory.
      const spilled = await evalOut(argv, 1, 64);
      expect(readdirSync(spoolDir)).toEqual([]);
      // --threads 2 indexes the qrels and keeps a row per query until printing (the path before the spool).
      const indexed = await evalOut(argv, 2);
      expect(spilled).toBe(indexed);
      expect(await evalOut(argv, 1)).toBe(indexed);
      // `--threads auto` on a run this small is `--threads 1` (ADR 0043): the same streams and spool, the same bytes.
      expect(await evalOut(argv, 'auto', 64)).toBe(indexed);
      expect(readdirSync(spoolDir)).toEqual([]);
      // The streamed evaluation keeping its rows, printed as writeTrec always printed them.
      const { settings } = parseTrecEvalArgs(argv);
      const plan = compileTrecPlan(settings);
      const ev = await evaluateStreamed(QRELS, RUN, plan, streamableQrels(QRELS) as Exclude<ReturnType<typeof streamableQrels>, string>);
      if (typeof ev === 'string') throw new Error(ev);
      let kept = '';
      const w = new TrecQueryWriter(plan, (t) => void (kept += t));
      ev.queryIds.forEach((qid, q) => w.query(qid, ev.rows, q * plan.width, ev.relstrings[q]));
      w.flush();
      kept += formatTrecSummary(plan, ev.summary, ev.runTag);
      expect(spilled).toBe(kept);
      // The lines of a query the run misses are there under -c only.
      expect(spilled.includes('\tq0003\t')).toBe(flags.includes('-c'));
      expect(spilled).toMatch(/\tq0120\t/);
    }
  });

  it('prints nothing and leaves no temporary file when the run fails after every query was spooled', async () => {
    // Without the bad line: more -q text than the query writer buffers (1 MB), so the spool spilled mid-run.
    expect((await evalOut(['-q', '-m', 'all_trec', BIG_QRELS, BIG_RUN], 1, 64)).length).toBeGreaterThan(2 ** 20);
    for (const budget of [64, 1 << 30]) {
      let out = '';
      const io = { out: (t: string) => void (out += t), log: memoryLogger(), env: {}, cwd: dir };
      const err = await runEval(parseTrecEvalArgs(['-q', '-m', 'all_trec', BIG_QRELS, LATE]), 'trec', io, 1, { budgetBytes: budget, dir: spoolDir }).then(
        () => undefined,
        (e: Error) => e,
      );
      // The bad line follows every line of the big run (which ends in '\n').
      expect(err?.message).toContain(`late.run:${big.run.split('\n').length}: score "notascore"`);
      expect(out).toBe('');
      expect(readdirSync(spoolDir)).toEqual([]);
    }
  });
});

const DIST = join(PROJECT_ROOT, 'dist', 'harness', 'trec-eval');
const built = existsSync(join(DIST, 'stream-worker.js'));
if (!built) process.stderr.write('[skip] eval -q spool against pieces: dist/ is not built (run `npm run build`)\n');

(built ? describe : describe.skip)('harness eval -q, spooled vs a run cut into pieces (dist/)', () => {
  it('prints what two threads scoring pieces print', async () => {
    const load = async (file: string): Promise<unknown> => await import(pathToFileURL(join(DIST, file)).href);
    const se = (await load('stream-eval.js')) as typeof import('../trec-eval/stream-eval.js');
    const qi = (await load('qrels-index.js')) as typeof import('../trec-eval/qrels-index.js');
    const pc = (await load('pieces.js')) as typeof import('../trec-eval/pieces.js');
    const te = (await load('plan.js')) as typeof import('../trec-eval/plan.js');
    const pr = (await load('print.js')) as typeof import('../trec-eval/print.js');
    const fast = (await load('fast/kernels.js')) as typeof import('../trec-eval/fast/kernels.js');
    for (const flags of FLAG_SETS) {
      const argv = [...flags, QRELS, RUN];
      const plan = te.compileTrecPlan(parseTrecEvalArgs(argv).settings, fast.FAST_KERNELS);
      const index = qi.QrelsIndex.fromBuffer(Buffer.from(qrels), QRELS);
      expect(pc.splitAtQueryBoundaries(RUN, 8).length).toBeGreaterThan(3);
      const ev = await se.evaluateTrecRunFile(index, RUN, plan, { threads: 2, minParallelBytes: 0 });
      let pieces = '';
      const w = new pr.TrecQueryWriter(plan, (t) => void (pieces += t));
      ev.queryIds.forEach((qid, q) => w.query(qid, ev.rows, q * plan.width, ev.relstrings[q]));
      w.flush();
      pieces += pr.formatTrecSummary(plan, ev.summary, ev.runTag);
      expect(await evalOut(argv, 1, 64)).toBe(pieces);
    }
  });
});

describe('triesStreams', () => {
  it('streams on one thread, without -q, and with -q under auto for large qrels or one thread; never for --threads N > 1', () => {
    const never = () => {
      throw new Error('chooseThreads asked needlessly');
    };
    expect(triesStreams(1, true, 0, never)).toBe(true);
    expect(triesStreams(2, false, STREAM_Q_BYTES, never)).toBe(false);
    expect(triesStreams(4, true, STREAM_Q_BYTES, never)).toBe(false);
    expect(triesStreams('auto', false, 0, never)).toBe(true);
    expect(triesStreams('auto', true, STREAM_Q_BYTES, never)).toBe(true);
    // 45 MB of qrels (the bench's 50k x 100) are above it: tried, refused in its first 64 kB (unpadded ids); 4.5 MB (5k x 1,000) below.
    expect(triesStreams('auto', true, 45e6, never)).toBe(true);
    expect(triesStreams('auto', true, 4.5e6, () => 2)).toBe(false);
    expect(triesStreams('auto', true, STREAM_Q_BYTES - 1, () => 2)).toBe(false);
    expect(triesStreams('auto', true, STREAM_Q_BYTES - 1, () => 1)).toBe(true);
  });
});
