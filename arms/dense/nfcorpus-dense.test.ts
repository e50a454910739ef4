import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { runCli } from '../../harness/cli/main.js';
import { memoryLogger } from '../../harness/log.js';
import { describeShared, PROJECT_ROOT, sharedPath } from '../../harness/testing/shared.js';
import { linkGloveInto } from './testing.js';
import { tempDir } from '../../harness/testing/temp.js';

// configs/nfcorpus-dense.yaml on BEIR NFCorpus test: onnx-embed on GloVe and use-lite (first 64 words of each
// passage) embed all 3,633 passages through their real runtimes. USE-lite is the slow part: ~7 CPU-minutes;
// the whole test took 9.6 min at load average ~6 on 2 cores (46 min at load 18), hence the long timeout.
describeShared('configs/nfcorpus-dense.yaml: local dense arms on NFCorpus test', ['data/nfcorpus/qrels/test.tsv'], () => {
  const work = tempDir('harness-nfcorpus-dense');
  beforeAll(async () => linkGloveInto(join(work, 'cache')), 300_000);

  it('reproduces the pinned nDCG@10 and R@100 of GloVe, USE-lite and their fusion with BM25', async () => {
    let out = '';
    const code = await runCli(
      ['ablate', '--config', 'configs/nfcorpus-dense.yaml', '--verify', '--output', join(work, 'reports'), '--cache', join(work, 'cache')],
      { out: (t) => void (out += t), log: memoryLogger(), env: { HF_HUB_OFFLINE: '1' }, cwd: PROJECT_ROOT },
    );
    expect(code, out).toBe(0);
    for (const run of ['glove', 'use-lite', 'rrf.bm25+use-lite', 'rrf.bm25+glove+use-lite'])
      for (const measure of ['nDCG@10', 'R@100']) expect(out).toMatch(new RegExp(`OK\\s+${run.replace(/[.+]/g, '\\$&')}\\s+${measure}`));
    expect(out).not.toContain('FAIL');
  }, 3_600_000);
});

// LanceDB hnsw-sq on the GloVe vectors of NFCorpus: with `dot` it found 1 % of the exact top 10 (recall@10 0.011);
// with `l2` on the unit rows and ef 100 it finds 95 % (bench/README.md, docs/adr/0041-engine-fusion-and-ann-recall.md).
describeShared('LanceDB hnsw-sq on NFCorpus GloVe vectors', ['data/nfcorpus/qrels/test.tsv'], () => {
  const work = tempDir('harness-nfcorpus-hnsw');
  beforeAll(async () => linkGloveInto(join(work, 'cache')), 300_000);

  it('reaches recall@10 >= 0.9 against exact search', async () => {
    const glove = `{ model: wink-glove-100d, revision: 'sha256:85d50c35947407a0c493196d38ac6dec373ac4528c616c2ab51c532e0fbf9f0b', pooling: mean, queryPrefix: '' }`;
    const config = join(work, 'hnsw.yaml');
    writeFileSync(
      config,
      [
        'name: nfcorpus-hnsw',
        `evalset: { format: beir, path: ${JSON.stringify(sharedPath('data', 'nfcorpus'))}, split: test }`,
        'measures: [nDCG@10]',
        'topK: 100',
        'arms:',
        `  - { id: glove, kind: onnx-embed, params: ${glove} }`,
        `  - { id: glove-hnsw, kind: onnx-embed, params: ${glove.replace(/ }$/, ', index: lancedb, lancedb: { indexType: hnsw-sq } }')} }`,
        '',
      ].join('\n'),
    );
    const log = memoryLogger();
    let out = '';
    const code = await runCli(['ablate', '--config', config, '--output', join(work, 'reports'), '--cache', join(work, 'cache')], {
      out: (t) => void (out += t),
      log,
      env: { HF_HUB_OFFLINE: '1' },
      cwd: PROJECT_ROOT,
    });
    expect(code, out).toBe(0);
    const line = log.lines.find((l) => l.includes('glove-hnsw: lancedb hnsw-sq on')) ?? '';
    const recall = Number(/recall@10 ([0-9.]+)/.exec(line)?.[1]);
    expect(recall, line).toBeGreaterThanOrEqual(0.9);
  }, 900_000);
});
