import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../testing/shared.js';
import { trecSettings } from '../testing/trec-settings.js';
import { tempDir } from '../testing/temp.js';

/**
 * The worker-thread path of harness eval (`--threads`). Workers load compiled JS, so this runs against
 * dist/ (built by `npm test` before vitest) and is skipped, with the reason printed, when dist/ is absent.
 */

const DIST = join(PROJECT_ROOT, 'dist', 'harness', 'trec-eval');
const present = existsSync(join(DIST, 'stream-worker.js'));
if (!present) process.stderr.write('[skip] parallel harness eval: dist/ is not built (run `npm run build`)\n');
const describeDist = present ? describe : describe.skip;

const dir = tempDir('eval-par');

/** The clone's modules as built, which a worker thread can load. */
async function loadDist() {
  const load = async (file: string): Promise<unknown> => await import(pathToFileURL(join(DIST, file)).href);
  return {
    se: (await load('stream-eval.js')) as typeof import('./stream-eval.js'),
    qi: (await load('qrels-index.js')) as typeof import('./qrels-index.js'),
    pc: (await load('pieces.js')) as typeof import('./pieces.js'),
    te: (await load('plan.js')) as typeof import('./plan.js'),
    fast: (await load('fast/kernels.js')) as typeof import('./fast/kernels.js'),
  };
}

describeDist('harness eval with worker threads (dist/)', () => {
  let qrels = '';
  let run = '';
  let seed = 11;
  const rnd = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
  for (let q = 0; q < 300; q++) {
    for (let d = 0; d < 20; d++) if (rnd() < 0.5) qrels += `q${q} 0 d${d} ${Math.floor(rnd() * 3)}\n`;
    for (let d = 0; d < 40; d++) run += `q${q} Q0 d${d} ${d} ${Math.floor(rnd() * 8) / 4} tag\n`;
  }
  qrels += 'q0 0 zz 1\n';
  const qrelsPath = join(dir, 'q');
  const runPath = join(dir, 'r');
  writeFileSync(qrelsPath, qrels);
  writeFileSync(runPath, run);

  it('gives the same values as one thread', async () => {
    const { se, qi, pc, te, fast } = await loadDist();
    const settings = {
      perQuery: true,
      summary: true,
      averageComplete: true,
      judgedOnly: false,
      relevanceLevel: 1,
      maxDocs: undefined,
      numDocsInColl: 0,
      measures: ['all_trec'],
    };
    const plan = te.compileTrecPlan(settings, fast.FAST_KERNELS);
    const index = qi.QrelsIndex.fromBuffer(Buffer.from(qrels), qrelsPath);
    expect(pc.splitAtQueryBoundaries(runPath, 3)).toHaveLength(4);
    const one = await se.evaluateTrecRunFile(index, runPath, plan, { threads: 1 });
    const three = await se.evaluateTrecRunFile(index, runPath, plan, { threads: 3, minParallelBytes: 0 });
    expect(three.queryIds).toEqual(one.queryIds);
    expect([...three.rows]).toEqual([...one.rows]);
    expect(three.relstrings).toEqual(one.relstrings);
    expect(three.runTag).toBe('tag');
    // Built in shared memory, as harness eval builds an index workers may read: the same values, no copy made.
    const tr = (await import(pathToFileURL(join(PROJECT_ROOT, 'dist', 'evalset', 'trec.js')).href)) as typeof import('../../evalset/trec.js');
    const sharedIndex = qi.QrelsIndex.fromBuffer(await tr.readTrecFile(qrelsPath, undefined, { shared: true }), qrelsPath, { shared: true });
    const fromShared = await se.evaluateTrecRunFile(sharedIndex, runPath, plan, { threads: 3, minParallelBytes: 0 });
    expect(fromShared.queryIds).toEqual(one.queryIds);
    expect([...fromShared.rows]).toEqual([...one.rows]);
    expect(fromShared.relstrings).toEqual(one.relstrings);
  });
  it('reports the absolute line of an error found by a worker', async () => {
    const { se, qi, te } = await loadDist();
    const lines = run.split('\n');
    lines[lines.length - 3] = 'q299 Q0 bad 1 notanumber tag';
    const badPath = join(dir, 'bad');
    writeFileSync(badPath, lines.join('\n'));
    const plan = te.compileTrecPlan(trecSettings());
    const index = qi.QrelsIndex.fromBuffer(Buffer.from(qrels), qrelsPath);
    await expect(se.evaluateTrecRunFile(index, badPath, plan, { threads: 2, minParallelBytes: 0 })).rejects.toThrow(
      new RegExp(`bad:${lines.length - 2}: score "notanumber"`),
    );
  });
  it('reports the error one thread would meet first when several pieces fail', async () => {
    const { se, qi, te } = await loadDist();
    const lines = run.split('\n');
    // One bad line in each of the 12 pieces (300 queries of 40 lines): the first is in query q20.
    for (let q = 20; q < 300; q += 25) lines[q * 40 + 7] = `q${q} Q0 bad 1 x${q} tag`;
    const badPath = join(dir, 'bad-many');
    writeFileSync(badPath, lines.join('\n'));
    const plan = te.compileTrecPlan(trecSettings({ perQuery: true }));
    const index = qi.QrelsIndex.fromBuffer(Buffer.from(qrels), qrelsPath);
    for (const threads of [1, 2, 3]) {
      await expect(se.evaluateTrecRunFile(index, badPath, plan, { threads, minParallelBytes: 0 })).rejects.toThrow(
        new RegExp(`bad-many:${20 * 40 + 8}: score "x20"`),
      );
    }
  });
});
