import { beforeAll, expect, it } from 'vitest';
import { bm25Arm } from './index.js';
import { sqliteFts5Arm } from '../sqlite-fts5/index.js';
import type { ArmContext, ArmFactory } from '../types.js';
import type { EvalSet } from '../../evalset/types.js';
import { loadBeir } from '../../evalset/beir.js';
import { evaluate, parseMeasure } from '../../harness/metrics/index.js';
import { ContentStore } from '../../harness/cache/index.js';
import { stderrLogger } from '../../harness/log.js';
import { describeShared, sharedPath } from '../../harness/testing/shared.js';
import { tempDir } from '../../harness/testing/temp.js';
import { join } from 'node:path';

/**
 * Reproduction of Pyserini's BM25 "flat" baseline on BEIR NFCorpus (test split, 323 queries, top 1000 hits,
 * trec_eval -c): nDCG@10 = 0.3218, R@100 = 0.2457 (Pyserini BEIR regressions; Lucene BM25 k1 = 0.9, b = 0.4,
 * title and text in one field, Anserini's default English analyzer). The pinned values are what this code
 * measured; the tolerance check is the acceptance criterion of issue 3. Exact (4-decimal) agreement needs both
 * Lucene's lossy length norms and Anserini's tie adjustment (`scoreTies: anserini`).
 */
const PYSERINI = { ndcg10: 0.3218, r100: 0.2457 };
const TOLERANCE = 0.005;

/** Made in the suite's body, so a run without ../shared makes no folder. */
let ctx: ArmContext;
const measures = [parseMeasure('nDCG@10'), parseMeasure('R@100')];

// biome-ignore lint/suspicious/noExplicitAny: a registry holds factories of different param types; each entry is checked by `satisfies` against its own
async function measure(set: EvalSet, factory: ArmFactory<any>, params: unknown): Promise<{ ndcg10: number; r100: number }> {
  const arm = factory.create('nfcorpus', factory.params.parse(params), ctx);
  await arm.index(set.documents);
  const run = new Map<string, Map<string, number>>();
  for (const q of set.queries) run.set(q.id, new Map((await arm.search(q, 1000)).map((h) => [h.docId, h.score])));
  await arm.close?.();
  const ev = evaluate(set.qrels, run, measures);
  const mean = (name: string) => {
    const per = ev.perQuery.get(name)!;
    let sum = 0;
    for (const q of ev.queryIds) sum += per.get(q)!;
    return sum / ev.queryIds.length;
  };
  return { ndcg10: mean('nDCG@10'), r100: mean('R@100') };
}

describeShared('NFCorpus BM25 reproduction (Pyserini flat)', ['data/nfcorpus/corpus/human.jsonl', 'data/nfcorpus/qrels/test.tsv'], () => {
  const dir = tempDir('harness-bm25-nfcorpus');
  ctx = { cache: new ContentStore(join(dir, 'cache')), log: stderrLogger({ quiet: true }), workDir: join(dir, 'work'), env: {} };
  let set: EvalSet;
  beforeAll(async () => {
    set = await loadBeir(sharedPath('data', 'nfcorpus'), { split: 'test' });
  });

  it('has the 323 test queries Pyserini averages over', () => {
    expect(set.queries).toHaveLength(323);
    expect(set.documents).toHaveLength(3633);
  });

  it('bm25 (lucene preset, defaults) is within 0.005 of Pyserini on nDCG@10 and R@100', async () => {
    const m = await measure(set, bm25Arm, {});
    expect(m.ndcg10).toBeCloseTo(0.3205, 4);
    expect(m.r100).toBeCloseTo(0.2457, 4);
    expect(Math.abs(m.ndcg10 - PYSERINI.ndcg10)).toBeLessThanOrEqual(TOLERANCE);
    expect(Math.abs(m.r100 - PYSERINI.r100)).toBeLessThanOrEqual(TOLERANCE);
  });

  it("bm25 with Anserini's tie adjustment reproduces Pyserini to four decimals", async () => {
    // NFCorpus has duplicate documents; Pyserini's run files keep Lucene's index order among equal scores,
    // while the harness orders ties by docId descending. That order alone is the 0.0013 above.
    const m = await measure(set, bm25Arm, { scoreTies: 'anserini' });
    expect(m.ndcg10).toBeCloseTo(PYSERINI.ndcg10, 4);
    expect(m.r100).toBeCloseTo(PYSERINI.r100, 4);
  });

  it('bm25 with exact lengths (lossyNorms: false) moves the figures only in the fourth decimal', async () => {
    const m = await measure(set, bm25Arm, { lossyNorms: false });
    expect(m.ndcg10).toBeCloseTo(0.3202, 4);
    expect(m.r100).toBeCloseTo(0.2456, 4);
  });

  it('sqlite-fts5 figures beside it (porter and unicode61 tokenizers)', async () => {
    const porter = await measure(set, sqliteFts5Arm, { tokenizer: 'porter' });
    expect(porter.ndcg10).toBeCloseTo(0.3209, 4);
    expect(porter.r100).toBeCloseTo(0.2475, 4);
    const plain = await measure(set, sqliteFts5Arm, { tokenizer: 'unicode61' });
    expect(plain.ndcg10).toBeCloseTo(0.3069, 4);
    expect(plain.r100).toBeCloseTo(0.2331, 4);
  });
});
