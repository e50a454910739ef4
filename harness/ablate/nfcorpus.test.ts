import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runCli } from '../cli/main.js';
import { memoryLogger } from '../log.js';
import { describeShared, PROJECT_ROOT } from '../testing/shared.js';
import { tempDir } from '../testing/temp.js';

describeShared('harness ablate --verify on configs/nfcorpus-bm25.yaml (Pyserini BM25 flat)', ['data/nfcorpus/qrels/test.tsv'], () => {
  it('reproduces nDCG@10 0.3218 and R@100 0.2457 within tolerance and prints the FTS5 figures beside them', async () => {
    const work = tempDir('harness-nfcorpus');
    let out = '';
    const code = await runCli(
      ['ablate', '--config', 'configs/nfcorpus-bm25.yaml', '--verify', '--output', join(work, 'reports'), '--cache', join(work, 'cache')],
      { out: (t) => void (out += t), log: memoryLogger(), env: {}, cwd: PROJECT_ROOT },
    );
    expect(code, out).toBe(0);
    const line = (run: string, measure: string) => out.split('\n').find((l) => l.includes(` ${run} `) && l.includes(` ${measure} `)) ?? '';
    expect(line('bm25', 'nDCG@10')).toMatch(/^ {2}OK {5}bm25 +nDCG@10 +expected 0\.3218 actual 0\.32\d\d/);
    expect(line('bm25', 'R@100')).toMatch(/^ {2}OK {5}bm25 +R@100 +expected 0\.2457 actual 0\.24\d\d/);
    expect(line('bm25-anserini-ties', 'nDCG@10')).toContain('expected 0.3218 actual 0.3218');
    expect(line('fts5', 'nDCG@10')).toMatch(/^ {2}-- {5}fts5 +nDCG@10 +actual 0\.\d{4} \(no expectation\)/);
    expect(out).not.toContain('FAIL');
  });
});

describeShared('configs/rrf-vs-cc-nfcorpus.yaml: fusion grids tuned on the dev split', ['data/nfcorpus/qrels/dev.tsv'], () => {
  it('picks every grid point on dev, scores it on test, and verifies its pinned figures', async () => {
    const work = tempDir('harness-nfcorpus-rrf');
    let out = '';
    const code = await runCli(
      ['ablate', '--config', 'configs/rrf-vs-cc-nfcorpus.yaml', '--verify', '--output', join(work, 'reports'), '--cache', join(work, 'cache')],
      { out: (t) => void (out += t), log: memoryLogger(), env: {}, cwd: PROJECT_ROOT },
    );
    expect(code, out).toBe(0);
    for (const group of ['rrf', 'cc-tm2c2', 'cc-minmax'])
      expect(out).toMatch(new RegExp(`  ${group}\\.tuned: dev -> ${group}\\.\\S+; oracle on test ${group}\\.`));
    expect(out).toMatch(/OK {5}rrf\.tuned +nDCG@10 +expected 0\.3206/);
    expect(out).not.toContain('FAIL');
  }, 300_000);
});
