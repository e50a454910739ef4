import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { runCli } from '../../harness/cli/main.js';
import { memoryLogger } from '../../harness/log.js';
import { PROJECT_ROOT } from '../../harness/testing/shared.js';
import { linkGloveInto } from './testing.js';
import { tempDir } from '../../harness/testing/temp.js';

// configs/example-dense.yaml end to end through the CLI: bm25, onnx-embed on the GloVe folder (real
// transformers.js + onnxruntime), use-lite (real TF.js), and fusions, into a temp cache. Then the same config
// again (nothing embedded), and a LanceDB twin of the GloVe arm (vectors shared through the store).
const work = tempDir('harness-example-dense');
const cache = join(work, 'cache');

interface Manifest {
  cache: Record<'embed' | 'run', { hits: number; misses: number }>;
  systems: { id: string; indexStats: Record<string, number>; cache: { hits: number; misses: number } }[];
}

async function ablate(config: string, verify = true): Promise<{ code: number; out: string; manifest: Manifest; report: string }> {
  let out = '';
  const reports = mkdtempSync(join(work, 'reports-'));
  const code = await runCli(['ablate', '--config', config, ...(verify ? ['--verify'] : []), '--output', reports, '--cache', cache], {
    out: (t) => void (out += t),
    log: memoryLogger(),
    env: { HF_HUB_OFFLINE: '1' },
    cwd: PROJECT_ROOT,
  });
  const [name] = readdirSync(reports);
  const dir = join(reports, name ?? '');
  return {
    code,
    out,
    manifest: JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest,
    report: readFileSync(join(dir, 'report.md'), 'utf8'),
  };
}

let first: Awaited<ReturnType<typeof ablate>>;

beforeAll(async () => {
  await linkGloveInto(cache);
  first = await ablate('configs/example-dense.yaml');
}, 900_000);

describe('configs/example-dense.yaml', () => {
  it('reproduces its pinned numbers (expect: block, --verify)', () => {
    expect(first.code, first.out).toBe(0);
    expect(first.out).not.toContain('FAIL');
    expect(first.out).toMatch(/OK\s+glove\s+nDCG@10/);
    expect(first.out).toMatch(/OK\s+use-lite\s+nDCG@10/);
  });

  it('shows the effect users come for: embeddings lift the paraphrase stratum that BM25 misses', () => {
    // The means table of the stratum (the exploratory comparisons have a heading of their own before it).
    const para = first.report.slice(first.report.search(/^### paraphrase, n = \d+$/m));
    const row = (id: string) => Number(new RegExp(`\\| ${id.replace(/[.+]/g, '\\$&')} \\| ([0-9.]+)`).exec(para)?.[1]);
    expect(row('bm25')).toBeLessThan(0.1);
    expect(row('use-lite')).toBeGreaterThan(row('bm25') + 0.4);
  });

  it('labels the GloVe and USE-lite runs as substitutes for bge, never as bge', () => {
    // One warning per stand-in, listing its runs (issue 41: twenty repeats read as one caveat).
    expect(first.report).toContain('run glove is a substitute: GloVe 100d standing in for BAAI/bge-large-en-v1.5');
    expect(first.report).toContain('run use-lite is a substitute: USE-lite standing in for BAAI/bge-large-en-v1.5');
    // A fusion over a substitute is flagged too, naming the input it inherits from; bm25 alone is not.
    expect(first.report).toMatch(/rrf\.bm25\+use-lite[^\n]*: built on use-lite \(USE-lite standing in for BAAI\/bge-large-en-v1\.5\)/);
    const substituteLines = first.report.split('\n').filter((l) => l.includes('`substitute`'));
    expect(substituteLines.length).toBeGreaterThan(0);
    for (const l of substituteLines) expect(l).not.toMatch(/\(bm25\)|run bm25 is|[(;,] bm25[,;)]/);
  });

  it('records the embedding work of each dense arm in its index stats', () => {
    const glove = first.manifest.systems.find((s) => s.id === 'glove');
    expect(glove?.indexStats).toMatchObject({ documents: 351, dims: 100, embedded: 351, embedCached: 0 });
    expect(first.manifest.systems.find((s) => s.id === 'use-lite')?.indexStats).toMatchObject({ documents: 351, dims: 512, embedded: 351 });
  });

  it('a second run of the same config embeds nothing: every system run and vector comes from the cache', async () => {
    const again = await ablate('configs/example-dense.yaml');
    expect(again.code, again.out).toBe(0);
    expect(again.manifest.cache.embed.misses).toBe(0);
    expect(again.manifest.cache.run).toMatchObject({ hits: 6, misses: 0 });
  }, 300_000);

  it('LanceDB twin of the GloVe arm: reuses the stored vectors and reports its recall against exact search', async () => {
    const cfg = parse(readFileSync(join(PROJECT_ROOT, 'configs/example-dense.yaml'), 'utf8')) as Record<string, unknown> & {
      arms: { id: string; params?: Record<string, unknown> }[];
    };
    const glove = cfg.arms.find((a) => a.id === 'glove') as { id: string; params: Record<string, unknown> };
    cfg.arms = [
      glove,
      { ...glove, id: 'glove-lancedb', params: { ...glove.params, index: 'lancedb', lancedb: { indexType: 'ivf-pq', numPartitions: 4, numSubVectors: 25 } } },
    ];
    cfg.evalset = { format: 'memory', path: join(PROJECT_ROOT, 'evalset/examples/alex-memory') };
    cfg.systems = [];
    cfg.compare = { baseline: 'glove' };
    delete cfg.expect;
    const file = join(work, 'lancedb.yaml');
    writeFileSync(file, stringify(cfg));
    const r = await ablate(file, false);
    expect(r.code, r.out).toBe(0);
    // The corpus matrix and every query vector were stored by the first run: no embedding at all.
    expect(r.manifest.cache.embed.misses).toBe(0);
    const stats = r.manifest.systems.find((s) => s.id === 'glove-lancedb')?.indexStats ?? {};
    // Recall on the 106 eval queries, at 10 and at topK 100.
    expect(stats).toMatchObject({
      documents: 351,
      embedded: 0,
      embedCached: 351,
      annQueries: 106,
      'annQueryExact@10': 106 * 10,
      'annQueryExact@100': 106 * 100,
    });
    const recall10 = (stats['annQueryFound@10'] ?? -1) / 1060;
    expect(recall10).toBeGreaterThan(0.5);
    expect(recall10).toBeLessThanOrEqual(1);
  }, 300_000);
});
